//! Where git can be pointed away from the protected paths: repositories
//! nested in the workspace, gitfiles, and files a repository's config names.
//!
//! `.git/config` and `.git/hooks` being read-only is not enough when the
//! config names a hooks directory in the working tree (`core.hooksPath =
//! .husky`, as husky sets it), includes a workspace file (`include.path`),
//! or runs a workspace script (`core.fsmonitor = ./tools/watch`): those
//! files run later, unasked, just as a hook would. Nor when a nested
//! repository or a submodule's gitfile carries a config of its own. This
//! module finds them; [`crate::protected`] makes them read-only.

use std::path::{Component, Path, PathBuf};

/// Directories never searched for nested repositories: build output and
/// package stores hold thousands of entries and no repository of the user's.
const SKIPPED_DIRS: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__", ".tox", "dist", "build"];

/// How far (directories) and how deep the search for nested repositories
/// goes: it runs for every sandboxed command.
const SEARCH_BUDGET: usize = 1500;
const SEARCH_DEPTH: usize = 4;

/// The git directories beneath `root` other than `root/.git`: nested
/// repositories (`sub/.git` directories) and the targets of gitfiles
/// (`sub/.git` files, a submodule's or a worktree's), with the gitfiles.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Nested {
    pub git_dirs: Vec<PathBuf>,
    pub gitfiles: Vec<PathBuf>,
}

pub(crate) fn nested(root: &Path) -> Nested {
    let mut out = Nested::default();
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> = std::collections::VecDeque::new();
    queue.push_back((root.to_path_buf(), 0));
    // Submodules at any depth, from `.gitmodules`.
    for path in gitmodules_paths(root) {
        consider(&root.join(path).join(".git"), root, &mut out);
    }
    let mut budget = SEARCH_BUDGET;
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name();
            if name == ".git" {
                if dir != root {
                    consider(&entry.path(), root, &mut out);
                }
                continue;
            }
            if !kind.is_dir() || depth + 1 > SEARCH_DEPTH || SKIPPED_DIRS.iter().any(|s| name == *s) {
                continue;
            }
            if budget == 0 {
                return finish(out);
            }
            budget -= 1;
            queue.push_back((entry.path(), depth + 1));
        }
    }
    finish(out)
}

fn finish(mut out: Nested) -> Nested {
    out.git_dirs.sort();
    out.git_dirs.dedup();
    out.gitfiles.sort();
    out.gitfiles.dedup();
    out
}

/// A `.git` found beneath the root: a directory is a git directory; a file
/// points at one (kept when it lies inside the root: one outside is not the
/// workspace's to protect, and the sandbox keeps it read-only anyway).
fn consider(dot_git: &Path, root: &Path, out: &mut Nested) {
    let Ok(meta) = dot_git.symlink_metadata() else { return };
    if meta.is_dir() {
        out.git_dirs.push(dot_git.to_path_buf());
    } else if meta.is_file() {
        out.gitfiles.push(dot_git.to_path_buf());
        if let Some(target) = gitfile_target(dot_git)
            && target.starts_with(root)
            && target.is_dir()
        {
            out.git_dirs.push(target);
        }
    }
}

/// The git directory a gitfile (`gitdir: PATH`) points at, lexically
/// resolved against the gitfile's directory.
pub(crate) fn gitfile_target(gitfile: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(gitfile).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let base = gitfile.parent()?;
    Some(lexical(&base.join(target)))
}

/// `path = ...` entries of `root/.gitmodules`.
fn gitmodules_paths(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join(".gitmodules")) else { return Vec::new() };
    entries(&text)
        .into_iter()
        .filter(|(section, key, _)| section.starts_with("submodule") && key == "path")
        .map(|(_, _, value)| PathBuf::from(value))
        .filter(|p| p.components().all(|c| matches!(c, Component::Normal(_))))
        .collect()
}

/// What a repository's config points git at inside `root`: every path its
/// values name that lies in the workspace (the value itself, or the first
/// word of a command), resolved as git would (relative to the working tree,
/// or to the git directory for includes), with whether git expects a
/// directory there. Values of keys that only name remotes, branches and
/// submodule URLs are not paths git opens or runs.
pub(crate) fn config_named(git_dir: &Path, worktree: &Path, root: &Path) -> Vec<(PathBuf, bool)> {
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    for file in [git_dir.join("config"), git_dir.join("config.worktree")] {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for (section, key, value) in entries(&text) {
            let base = section.split(['.', ' ']).next().unwrap_or_default();
            if matches!(base, "remote" | "branch" | "user" | "color" | "url") || (base == "submodule" && key == "url") {
                continue;
            }
            let include = base == "include" || base == "includeif";
            let is_dir = section == "core" && key == "hookspath";
            let value = value.trim();
            let first = value.trim_start_matches('!').split_whitespace().next().unwrap_or_default();
            let first = first.trim_matches(['"', '\'']);
            for candidate in [value, first] {
                if candidate.is_empty() {
                    continue;
                }
                let path = if let Some(rest) = candidate.strip_prefix("~/") {
                    match crate::policy::home_dir() {
                        Some(home) => home.join(rest),
                        None => continue,
                    }
                } else if include {
                    git_dir.join(candidate)
                } else {
                    worktree.join(candidate)
                };
                let path = lexical(&path);
                // Never the workspace itself or one of its ancestors.
                if path.starts_with(root) && path != root && !out.iter().any(|(p, _)| *p == path) {
                    let named_as_path = include || is_dir || candidate.contains('/');
                    if path.symlink_metadata().is_ok() || named_as_path && (include || is_dir) {
                        out.push((path, is_dir));
                    }
                }
            }
        }
    }
    out
}

/// `(section, key, value)` of a git config text, sections and keys
/// lower-cased (`[includeIf "gitdir:x"]` → `includeif gitdir:x`), quotes of
/// a whole value removed.
pub(crate) fn entries(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        let mut rest = line;
        if let Some(after) = line.strip_prefix('[') {
            let Some(end) = after.find(']') else { continue };
            let header = &after[..end];
            section = match header.split_once(' ') {
                Some((name, sub)) => format!("{} {}", name.to_ascii_lowercase(), sub.trim().trim_matches('"')),
                None => header.to_ascii_lowercase(),
            };
            rest = after[end + 1..].trim();
            if rest.is_empty() {
                continue;
            }
        }
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (rest, "true"),
        };
        let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        out.push((section.clone(), key.to_ascii_lowercase(), value.to_string()));
    }
    out
}

/// `path` with `.` dropped and `..` applied lexically.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "gitpaths_tests.rs"]
mod tests;
