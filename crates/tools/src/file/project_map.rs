//! `project_map`: a one-call overview of a project's shape — how many files, in
//! which languages, which manifests and docs matter, and where the files live.
//!
//! It walks the whole tree once (gitignore-aware, symlinks never followed, same
//! walker as `list_dir`) but prints only directories down to `depth`, each with the
//! number of files beneath it, so even a large repository fits in a few KB.
//! Everything is kept in ordered maps, so the same tree always maps to the same bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput, Workspace};

use crate::file::list_dir::{relative, walker};
use crate::util::io_error;

const DEFAULT_DEPTH: usize = 3;
const MAX_DEPTH: usize = 10;
const DEFAULT_MAX_ENTRIES: usize = 200;
const MAX_MAX_ENTRIES: usize = 2000;
/// Walk budget: a map of a giant tree says where it stopped rather than stall.
const MAX_SCAN: usize = 200_000;
const MAX_NOTABLE: usize = 40;
const TOP_LANGUAGES: usize = 8;

pub struct ProjectMap;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectMapInput {
    /// Directory to map, relative to the workspace root (default ".").
    pub path: Option<String>,
    /// Directory levels shown in the tree, 1-10 (default 3).
    #[schemars(range(min = 1))]
    pub depth: Option<usize>,
    /// Most directories listed in the tree, 1-2000 (default 200).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

impl Tool for ProjectMap {
    type Input = ProjectMapInput;
    const NAME: &'static str = "project_map";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // Before one vocabulary the count was `max_entries` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("max_entries", "limit")];

    fn description(&self) -> String {
        "Overview of a project's structure: directory tree with file counts per folder, main languages by \
         file extension, and notable files (README, Cargo.toml, package.json, pyproject.toml, Makefile...). \
         Gitignore-aware. Use it first in an unfamiliar repository."
            .into()
    }

    async fn run(&self, input: ProjectMapInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = input.path.as_deref().unwrap_or(".");
        let dir = ctx.workspace.resolve(raw)?;
        let shown = ctx.workspace.display(&dir);
        crate::file::secret_read::guard(ctx, &dir, &shown).await?;
        let depth = input.depth.unwrap_or(DEFAULT_DEPTH);
        if depth == 0 || depth > MAX_DEPTH {
            return Err(ToolError::model(format!("`depth` must be between 1 and {MAX_DEPTH}, got {depth}")));
        }
        let max_entries = input.limit.unwrap_or(DEFAULT_MAX_ENTRIES);
        if max_entries == 0 || max_entries > MAX_MAX_ENTRIES {
            return Err(ToolError::model(format!(
                "`limit` must be between 1 and {MAX_MAX_ENTRIES}, got {max_entries}"
            )));
        }
        let meta = tokio::fs::metadata(&dir).await.map_err(|e| io_error("map", &shown, &e))?;
        if !meta.is_dir() {
            return Err(ToolError::model(format!("`{shown}` is a file, not a directory; use read_file")));
        }
        let ws = ctx.workspace.clone();
        let scan = tokio::task::spawn_blocking(move || Scan::run(&ws, &dir, depth))
            .await
            .map_err(|e| ToolError::Fatal(anyhow::anyhow!("project_map walker panicked: {e}")))?;
        let (text, tree_truncated) = scan.render(&shown, depth, max_entries);
        Ok(ToolOutput::text(text)
            .with_meta("path", shown)
            .with_meta("files", scan.files)
            .with_meta("dirs", scan.dirs)
            .with_meta("truncated", tree_truncated || scan.capped))
    }
}

/// File counts beneath one shown directory, by extension key.
#[derive(Default)]
struct DirStats {
    files: usize,
    kinds: BTreeMap<String, usize>,
}

#[derive(Default)]
struct Scan {
    /// Directories down to the display depth, keyed by path relative to the root
    /// (`""` is the root); `Path` ordering makes iteration a pre-order walk.
    tree: BTreeMap<PathBuf, DirStats>,
    files: usize,
    dirs: usize,
    languages: BTreeMap<&'static str, usize>,
    /// (depth, path, label), sorted at render time.
    notable: Vec<(usize, String, Option<&'static str>)>,
    unreadable: usize,
    capped: bool,
}

impl Scan {
    fn run(ws: &Workspace, root: &Path, depth: usize) -> Scan {
        let mut scan = Scan::default();
        scan.tree.insert(PathBuf::new(), DirStats::default());
        for (seen, item) in walker(ws, root, false, None).build().enumerate() {
            if seen >= MAX_SCAN {
                scan.capped = true;
                break;
            }
            let Ok(entry) = item else {
                scan.unreadable += 1;
                continue;
            };
            if entry.depth() == 0 {
                continue;
            }
            let rel = relative(root, entry.path());
            let Some(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                scan.dirs += 1;
                if entry.depth() <= depth {
                    scan.tree.entry(rel).or_default();
                }
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            scan.files += 1;
            let name = entry.file_name().to_string_lossy();
            let language = language(&name);
            if let Some(language) = language {
                *scan.languages.entry(language).or_default() += 1;
            }
            let key = kind_key(&name, language.is_some());
            for ancestor in rel.ancestors().skip(1) {
                if ancestor.components().count() <= depth {
                    let stats = scan.tree.entry(ancestor.to_path_buf()).or_default();
                    stats.files += 1;
                    if let Some(key) = &key {
                        *stats.kinds.entry(key.clone()).or_default() += 1;
                    }
                }
            }
            if let Some(label) = notable(&name, &rel) {
                scan.notable.push((entry.depth(), slash(&rel), label));
            }
        }
        // CI definitions live in hidden paths the walk skips; they are worth naming.
        for (hidden, label) in [(".github/workflows", "CI"), (".gitlab-ci.yml", "CI"), (".circleci", "CI")] {
            if ws.symlink_metadata(&root.join(hidden)).is_ok() {
                scan.notable.push((1, hidden.to_string(), Some(label)));
            }
        }
        scan
    }

    /// The report, and whether the tree was cut at `limit`.
    fn render(&self, shown: &str, depth: usize, max_entries: usize) -> (String, bool) {
        let mut out = format!(
            "Project map of `{shown}`: {} in {} (gitignored and hidden entries skipped)\n",
            count(self.files, "file", "files"),
            count(self.dirs, "directory", "directories")
        );
        if self.capped {
            out.push_str(&format!("Scan stopped after {MAX_SCAN} entries; counts are partial. Map a subdirectory.\n"));
        }
        if self.unreadable > 0 {
            out.push_str(&format!("{} entries could not be read.\n", self.unreadable));
        }

        let mut languages: Vec<(&str, usize)> = self.languages.iter().map(|(k, v)| (*k, *v)).collect();
        languages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        if !languages.is_empty() {
            let parts: Vec<String> = languages
                .iter()
                .take(TOP_LANGUAGES)
                .map(|(name, n)| match n * 100 / self.files.max(1) {
                    0 => format!("{name} {n} (<1%)"),
                    share => format!("{name} {n} ({share}%)"),
                })
                .collect();
            out.push_str(&format!("Languages (files): {}\n", parts.join(", ")));
        }

        let mut notable = self.notable.clone();
        notable.sort();
        if !notable.is_empty() {
            out.push_str("Notable files:\n");
            for (_, path, label) in notable.iter().take(MAX_NOTABLE) {
                match label {
                    Some(label) => out.push_str(&format!("  {path} ({label})\n")),
                    None => out.push_str(&format!("  {path}\n")),
                }
            }
            if notable.len() > MAX_NOTABLE {
                out.push_str(&format!("  … {} more\n", notable.len() - MAX_NOTABLE));
            }
        }

        out.push_str(&format!("Tree ({}; file counts include subdirectories):\n", count(depth, "level", "levels")));
        for (path, stats) in self.tree.iter().take(max_entries) {
            let level = path.components().count();
            let name = if level == 0 {
                ".".to_string()
            } else {
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            };
            out.push_str(&format!("{}{name}/ {}\n", "  ".repeat(level + 1), summary(stats)));
        }
        let truncated = self.tree.len() > max_entries;
        if truncated {
            out.push_str(&format!(
                "… {} more directories not shown; raise limit, lower depth, or map a subdirectory\n",
                self.tree.len() - max_entries
            ));
        }
        (out, truncated)
    }
}

/// `12 files (rs 9, toml 2, md 1)`: the three most common kinds beneath a directory.
fn summary(stats: &DirStats) -> String {
    if stats.files == 0 {
        return "(no files)".into();
    }
    let mut kinds: Vec<(&String, &usize)> = stats.kinds.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut parts: Vec<String> = kinds.iter().take(3).map(|(k, n)| format!("{k} {n}")).collect();
    if kinds.len() > 3 {
        parts.push("…".into());
    }
    format!("{} ({})", count(stats.files, "file", "files"), parts.join(", "))
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The lowercased extension, or `.` when there is none (and never empty).
fn extension(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => ext,
        _ => ".",
    }
}

/// What a file counts as in a directory's summary: its extension, or for an
/// extensionless file its name when that names a language (`Makefile`). Other
/// extensionless files (`LICENSE-MIT`) are counted but not summarized.
fn kind_key(name: &str, known_language: bool) -> Option<String> {
    match extension(name) {
        "." if known_language => Some(name.to_string()),
        "." => None,
        ext => Some(ext.to_ascii_lowercase()),
    }
}

fn language(name: &str) -> Option<&'static str> {
    let by_name = match name {
        "CMakeLists.txt" => Some("CMake"),
        "Makefile" | "makefile" | "GNUmakefile" => Some("Make"),
        "Dockerfile" | "Containerfile" => Some("Dockerfile"),
        _ => None,
    };
    by_name.or(match extension(name).to_ascii_lowercase().as_str() {
        "rs" => Some("Rust"),
        "py" | "pyi" => Some("Python"),
        "js" | "mjs" | "cjs" | "jsx" => Some("JavaScript"),
        "ts" | "mts" | "cts" | "tsx" => Some("TypeScript"),
        "go" => Some("Go"),
        "java" => Some("Java"),
        "kt" | "kts" => Some("Kotlin"),
        "scala" => Some("Scala"),
        "c" => Some("C"),
        "h" => Some("C/C++ header"),
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Some("C++"),
        "cs" => Some("C#"),
        "swift" => Some("Swift"),
        "m" | "mm" => Some("Objective-C"),
        "rb" => Some("Ruby"),
        "php" => Some("PHP"),
        "pl" | "pm" => Some("Perl"),
        "lua" => Some("Lua"),
        "r" => Some("R"),
        "jl" => Some("Julia"),
        "ex" | "exs" => Some("Elixir"),
        "erl" | "hrl" => Some("Erlang"),
        "hs" => Some("Haskell"),
        "ml" | "mli" => Some("OCaml"),
        "clj" | "cljs" => Some("Clojure"),
        "dart" => Some("Dart"),
        "zig" => Some("Zig"),
        "sh" | "bash" | "zsh" => Some("Shell"),
        "ps1" => Some("PowerShell"),
        "sql" => Some("SQL"),
        "html" | "htm" => Some("HTML"),
        "css" => Some("CSS"),
        "scss" | "sass" | "less" => Some("SCSS/Less"),
        "vue" => Some("Vue"),
        "svelte" => Some("Svelte"),
        "md" | "markdown" | "mdx" => Some("Markdown"),
        "rst" => Some("reStructuredText"),
        "toml" => Some("TOML"),
        "yaml" | "yml" => Some("YAML"),
        "json" | "jsonc" => Some("JSON"),
        "xml" => Some("XML"),
        "proto" => Some("Protobuf"),
        "tf" => Some("Terraform"),
        "nix" => Some("Nix"),
        "graphql" | "gql" => Some("GraphQL"),
        "ipynb" => Some("Jupyter"),
        _ => None,
    })
}

/// Directories whose files describe test inputs or third-party code, not the project.
const NOT_THE_PROJECT: &[&str] = &["fixtures", "testdata", "test-data", "vendor", "third_party", "node_modules"];
/// Docs deeper than this are part of a component, not of the project's front page.
const MAX_DOC_DEPTH: usize = 3;

/// Whether a file is worth pointing out, with what it tells about the project.
fn notable(name: &str, rel: &Path) -> Option<Option<&'static str>> {
    if rel.components().any(|c| NOT_THE_PROJECT.iter().any(|skip| c.as_os_str() == *skip)) {
        return None;
    }
    let label = match name {
        "Cargo.toml" => Some("Rust"),
        "package.json" => Some("Node"),
        "pyproject.toml" | "setup.py" | "setup.cfg" | "requirements.txt" | "Pipfile" => Some("Python"),
        "go.mod" => Some("Go"),
        "pom.xml" | "build.gradle" | "build.gradle.kts" => Some("JVM"),
        "Gemfile" => Some("Ruby"),
        "composer.json" => Some("PHP"),
        "mix.exs" => Some("Elixir"),
        "deno.json" => Some("Deno"),
        "CMakeLists.txt" | "meson.build" => Some("C/C++ build"),
        "Makefile" | "makefile" | "GNUmakefile" | "justfile" | "Justfile" => Some("tasks"),
        "Dockerfile" | "Containerfile" | "docker-compose.yml" | "docker-compose.yaml" | "compose.yaml" => {
            Some("containers")
        }
        "flake.nix" => Some("Nix"),
        "tsconfig.json" => Some("TypeScript"),
        "AGENTS.md" | "CLAUDE.md" => Some("agent instructions"),
        "main.rs" | "main.go" | "__main__.py" | "manage.py" => Some("entry point"),
        _ => {
            let lower = name.to_ascii_lowercase();
            let doc = ["readme", "license", "licence", "contributing", "changelog", "copying"].iter().any(|p| {
                lower.strip_prefix(p).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '-', '_']))
            });
            return (doc && rel.components().count() <= MAX_DOC_DEPTH).then_some(None);
        }
    };
    Some(label)
}

#[cfg(test)]
#[path = "project_map_tests.rs"]
mod tests;
