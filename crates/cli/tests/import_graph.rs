//! No import circle among the files of any crate: each crate's modules import
//! in one direction, which is what lets a file be read (and changed) knowing
//! only what is below it. Edges are `crate::…` and `super::…` paths outside
//! comments and test modules, `use` groups expanded (`super::{a, b::C}`) and
//! re-exports followed to the file that defines the item (`crate::Engine`
//! through `lib.rs`'s `pub use engine::Engine`); `lib.rs` itself is the
//! facade and takes no part. A failure prints the circle and the whole graph
//! of that crate.

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
    // `#[cfg(test)]`, any other attributes, then `mod tests {`: the rest is
    // the inline test module, whose imports are no part of the graph.
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let at = from + found;
        let mut rest = code[at + "#[cfg(test)]".len()..].trim_start();
        while rest.starts_with("#[") {
            rest = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
        }
        if rest.starts_with("mod tests {") {
            code.truncate(at);
            break;
        }
        from = at + 1;
    }
    code
}

/// The paths a use tree (or an expression path) names, groups expanded:
/// `a::{b, c::{d, self}}` → `a::b`, `a::c::d`, `a::c`; `x as y` names `x`
/// and is reported with its alias. Stops at the first character that cannot
/// continue a path.
fn use_paths(text: &str) -> Vec<(Vec<String>, Option<String>)> {
    fn tree(chars: &[char], i: &mut usize, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
        let mut path = prefix.to_vec();
        loop {
            while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
                *i += 1;
            }
            match chars.get(*i) {
                Some('{') => {
                    *i += 1;
                    loop {
                        tree(chars, i, &path, out);
                        while chars.get(*i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                            *i += 1;
                        }
                        match chars.get(*i) {
                            Some('}') => {
                                *i += 1;
                                return;
                            }
                            None => return,
                            _ => {}
                        }
                    }
                }
                Some('*') => {
                    *i += 1;
                    out.push((path, None));
                    return;
                }
                _ => {}
            }
            let begin = *i;
            while chars.get(*i).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                *i += 1;
            }
            let segment: String = chars[begin..*i].iter().collect();
            if segment.is_empty() {
                if path.len() > prefix.len() {
                    out.push((path, None));
                }
                return;
            }
            if segment != "self" {
                path.push(segment);
            }
            if chars.get(*i) == Some(&':') && chars.get(*i + 1) == Some(&':') {
                *i += 2;
                continue;
            }
            // `x as y`: the alias is the name others use; both words are consumed.
            let mut j = *i;
            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            let mut alias = None;
            if chars.get(j..j + 3) == Some(&['a', 's', ' ']) {
                j += 3;
                while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                let begin = j;
                while chars.get(j).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                    j += 1;
                }
                alias = Some(chars[begin..j].iter().collect());
                *i = j;
            }
            out.push((path, alias));
            return;
        }
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    tree(&chars, &mut 0, &[], &mut out);
    out
}

/// Where a path starting in `module` leads: `crate::`/`super::`/`self::`
/// resolved, the rest relative to `module` (a child module) when `relative`.
fn absolute(module: &str, path: &[String], relative: bool) -> Option<Vec<String>> {
    let mut base: Vec<String> = module.split("::").filter(|p| !p.is_empty()).map(str::to_string).collect();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super") | Some("self") => {}
        Some(_) if relative => {}
        _ => return None,
    }
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    Some(base.into_iter().chain(rest.iter().cloned()).collect())
}

/// Each module's `pub use` re-exports: (module, exported name) → the
/// absolute path it stands for. A re-export is how `crate::Engine` or
/// `super::Item` reaches the file that defines it.
type Reexports = BTreeMap<(String, String), Vec<String>>;

fn reexports(modules: &BTreeMap<String, String>) -> Reexports {
    let mut out = Reexports::new();
    for (module, code) in modules {
        for (start, _) in code.match_indices("use ") {
            let before = code[..start].trim_end();
            let restricted = before.rsplit_once("pub(").is_some_and(|(_, tail)| tail.len() < 12 && tail.ends_with(')'));
            if !(before.ends_with("pub") || restricted) {
                continue;
            }
            for (path, alias) in use_paths(&code[start + 4..]) {
                let Some(name) = alias.or_else(|| path.last().cloned()) else { continue };
                let Some(target) = absolute(module, &path, true) else { continue };
                // A path into an external crate is nobody's edge here.
                let first = path.first().cloned().unwrap_or_default();
                let child = if module.is_empty() { first } else { format!("{module}::{first}") };
                let internal = path.first().is_some_and(|p| p == "crate" || p == "super" || p == "self")
                    || modules.contains_key(&child);
                if internal {
                    out.insert((module.clone(), name), target);
                }
            }
        }
    }
    out
}

/// The module file an absolute path lands in: the longest module prefix,
/// followed through re-exports (`crate::Engine` → `engine`).
fn resolve(path: &[String], modules: &BTreeMap<String, String>, reexports: &Reexports, depth: usize) -> Option<String> {
    for len in (0..=path.len()).rev() {
        let candidate = path[..len].join("::");
        if !modules.contains_key(&candidate) {
            continue;
        }
        if let Some(next) = path.get(len)
            && let Some(target) = reexports.get(&(candidate.clone(), next.clone()))
            && depth < 8
            && target.as_slice() != path
        {
            let mut followed = target.clone();
            followed.extend(path[len + 1..].iter().cloned());
            if let Some(found) = resolve(&followed, modules, reexports, depth + 1) {
                return Some(found);
            }
        }
        return Some(candidate);
    }
    None
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let is_test = |f: &Path| {
        let name = f.file_name().unwrap().to_string_lossy();
        name.ends_with("_tests.rs") || name == "test_support.rs"
    };
    let modules: BTreeMap<String, String> = files
        .iter()
        .filter(|f| !is_test(f))
        .map(|f| (module_of(src, f), code_of(&std::fs::read_to_string(f).unwrap())))
        .collect();
    let reexports = reexports(&modules);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &modules {
        let mut targets = BTreeSet::new();
        let bytes = code.as_bytes();
        for (start, keyword) in code.match_indices("crate::").chain(code.match_indices("super::")) {
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            // `super::super::x` is found twice; the second match starts inside the first.
            if keyword == "super::" && code[..start].ends_with("super::") {
                continue;
            }
            let head = keyword.trim_end_matches(':').to_string();
            for (path, _) in use_paths(&code[start + keyword.len()..]) {
                let full: Vec<String> = std::iter::once(head.clone()).chain(path).collect();
                let Some(target) = absolute(module, &full, false) else { continue };
                if let Some(found) = resolve(&target, &modules, &reexports, 0)
                    && !found.is_empty()
                    && &found != module
                {
                    targets.insert(found);
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

/// A circle through the crate root's re-export and through a grouped
/// `use super::{…}`: both were invisible to the checker before.
#[test]
fn the_checker_follows_reexports_and_use_groups() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("p")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod p;\npub use a::A;\npub use b::{B, Bee as Renamed};\n")
        .unwrap();
    std::fs::write(src.join("a.rs"), "pub struct A;\nfn f(_: crate::Renamed) {}\n").unwrap();
    std::fs::write(src.join("b.rs"), "pub struct B;\npub struct Bee;\nfn f(_: crate::A) {}\n").unwrap();
    let edges = graph(&src);
    assert_eq!(circles(&edges), vec![vec!["a".to_string(), "b".to_string()]], "{edges:?}");
    std::fs::write(src.join("b.rs"), "pub struct B;\npub struct Bee;\n").unwrap();
    assert!(circles(&graph(&src)).is_empty(), "{:?}", graph(&src));

    std::fs::write(src.join("p/mod.rs"), "mod x;\nmod y;\npub use x::X;\n").unwrap();
    std::fs::write(src.join("p/x.rs"), "pub struct X;\nuse super::y::Y;\n").unwrap();
    std::fs::write(src.join("p/y.rs"), "pub struct Y;\nuse super::{X, y as _};\n").unwrap();
    let edges = graph(&src);
    assert_eq!(circles(&edges), vec![vec!["p::x".to_string(), "p::y".to_string()]], "{edges:?}");
}

#[test]
fn use_trees_expand() {
    let paths: Vec<String> =
        use_paths("a::{b, c::{d, self}, e as f, *};").into_iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(paths, ["a::b", "a::c::d", "a::c", "a::e", "a"]);
    assert_eq!(use_paths("x::y(1)")[0].0, ["x", "y"]);
    assert_eq!(use_paths("e as f;")[0].1.as_deref(), Some("f"));
}
