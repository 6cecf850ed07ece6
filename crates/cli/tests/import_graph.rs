//! No import circle among the files of any crate: each crate's modules import
//! in one direction, which is what lets a file be read (and changed) knowing
//! only what is below it. Edges are `crate::…` and `super::…` paths outside
//! comments and test modules; `lib.rs` is the facade and takes no part. A
//! failure prints the circle and the whole graph of that crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` → `a::b`; `lib.rs`/`main.rs` → "".
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts.join("::")
}

/// Source without comments and without an inline `#[cfg(test)] mod tests { … }` tail.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let line = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    if let Some(i) = code.find("#[cfg(test)]\nmod tests {") {
        code.truncate(i);
    }
    code
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let is_test = |f: &Path| {
        let name = f.file_name().unwrap().to_string_lossy();
        name.ends_with("_tests.rs") || name == "test_support.rs"
    };
    let modules: BTreeMap<String, PathBuf> =
        files.iter().filter(|f| !is_test(f)).map(|f| (module_of(src, f), f.clone())).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &modules {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let parent = module.rsplit_once("::").map(|(p, _)| p.to_string()).unwrap_or_default();
        let mut targets = BTreeSet::new();
        let bytes = code.as_bytes();
        for (start, keyword) in code.match_indices("crate::").chain(code.match_indices("super::")) {
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            let rest = &code[start + keyword.len()..];
            let path: Vec<&str> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|p| !p.is_empty())
                .collect();
            let mut base: Vec<String> = if keyword == "crate::" {
                Vec::new()
            } else {
                parent.split("::").filter(|p| !p.is_empty()).map(str::to_string).collect()
            };
            let mut path = path.as_slice();
            while path.first() == Some(&"super") {
                base.pop();
                path = &path[1..];
            }
            for len in (1..=path.len()).rev() {
                let candidate: Vec<String> =
                    base.iter().cloned().chain(path[..len].iter().map(|s| s.to_string())).collect();
                let candidate = candidate.join("::");
                if modules.contains_key(&candidate) {
                    if !candidate.is_empty() && &candidate != module {
                        targets.insert(candidate);
                    }
                    break;
                }
            }
        }
        edges.insert(module.clone(), targets);
    }
    edges.remove("");
    edges
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_crate_has_an_import_circle_among_its_files() {
    let mut failures = Vec::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(crates_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() >= 5, "expected the workspace's crates under {}", crates_dir().display());
    for src in crates {
        let edges = graph(&src);
        for circle in circles(&edges) {
            let picture: Vec<String> = edges
                .iter()
                .map(|(m, t)| format!("  {m} -> {}", t.iter().cloned().collect::<Vec<_>>().join(" ")))
                .collect();
            failures.push(format!("{}: circle {}\n{}", src.display(), circle.join(" "), picture.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_checker_finds_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "use crate::b::B;\n// use crate::c;\n").unwrap();
    std::fs::write(src.join("b.rs"), "pub struct B;\nfn f() { super::a::g(); }\n").unwrap();
    let edges = graph(&src);
    assert_eq!(circles(&edges), vec![vec!["a".to_string(), "b".to_string()]], "{edges:?}");
    std::fs::write(src.join("b.rs"), "pub struct B;\n").unwrap();
    assert!(circles(&graph(&src)).is_empty());
}
