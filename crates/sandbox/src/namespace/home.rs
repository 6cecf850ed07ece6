//! The home directory a sandboxed command sees: an allowlist, not a mask list.
//!
//! A home holds every tool's tokens under names nobody can list in advance
//! (`~/.codex/auth.json`, `~/.claude/.credentials.json`, `~/.pgpass`, the
//! next tool's). So the command gets an empty, read-only home with only the
//! toolchains and package caches of [`HOME_TOOLCHAIN_ALLOW`] (and the
//! user's `[sandbox] home_allow`) bound back read-only, a `.gitconfig` that
//! carries only the user's name, email and default branch (so `git commit`
//! works without handing over credential helpers or tokens in `insteadOf`
//! URLs), and whatever the command was given beneath the home: the
//! workspace, its repository, its working directory, `PATH` entries.
//!
//! When a writable root contains the home (a workspace at `~`, `/home` or
//! `/`), the home is the work: its ordinary entries stay writable, and the
//! same rule applies to its dot entries, which are the home's configuration:
//! each is hidden (an empty read-only mount) unless it is on the allowlist
//! (then read-only), except `.cache` (writable, as a build expects) and the
//! home's own `.git` when the workspace is the home.

use std::path::{Path, PathBuf};

use crate::paths::normalize;

/// What becomes of the home for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HomeView {
    /// The home, normalized.
    pub home: PathBuf,
    /// No writable root contains the home: it is replaced by a skeleton.
    pub replaced: bool,
    /// Entries of the real home kept visible, read-only (existing ones).
    pub allowed: Vec<PathBuf>,
    /// A writable root contains the home: what of its configuration is
    /// hidden (directories and files), each an existing path.
    pub hidden: Vec<PathBuf>,
    /// The `.gitconfig` the command sees (name, email, default branch), when
    /// the user has one.
    pub gitconfig: Option<String>,
}

/// Whether the sandbox replaces `home` with a skeleton of its own: no
/// writable root contains it.
pub(crate) fn is_replaced(home: &Path, writable: &[PathBuf]) -> bool {
    !writable.iter().any(|w| home.starts_with(w))
}

/// The view for `home` (`None`: no home to restrict) given the writable
/// roots (normalized) and the user's extra allowlist (relative to the home).
pub(crate) fn view(home: Option<&Path>, writable: &[PathBuf], extra_allow: &[String]) -> Option<HomeView> {
    let home = normalize(home?);
    if home == Path::new("/") || !home.is_dir() {
        return None;
    }
    let allowed = crate::protected::home_allowed(&home, extra_allow);
    let replaced = is_replaced(&home, writable);
    let hidden =
        if replaced { Vec::new() } else { crate::protected::home_hidden(&home, &allowed, writable.contains(&home)) };
    let gitconfig = identity_gitconfig(&home);
    Some(HomeView { home, replaced, allowed, hidden, gitconfig })
}

/// A `.gitconfig` with only `user.name`, `user.email` and
/// `init.defaultBranch` of the user's own (`~/.gitconfig`, then
/// `$XDG_CONFIG_HOME/git/config`), or `None` when neither names any.
pub(crate) fn identity_gitconfig(home: &Path) -> Option<String> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let mut found: Vec<(&str, &str, String)> = Vec::new();
    // Later files win, as in git: the XDG file is read first.
    for file in [xdg.join("git/config"), home.join(".gitconfig")] {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for (section, key, value) in identity_entries(&text) {
            found.retain(|(s, k, _)| !(*s == section && *k == key));
            found.push((section, key, value));
        }
    }
    if found.is_empty() {
        return None;
    }
    found.sort();
    let mut out = String::from("# What quiver's sandbox shows of your git config: identity only.\n");
    let mut current = "";
    for (section, key, value) in found {
        if section != current {
            out.push_str(&format!("[{section}]\n"));
            current = section;
        }
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("\t{key} = \"{escaped}\"\n"));
    }
    Some(out)
}

/// `(section, key, value)` for the identity keys of one git config text.
fn identity_entries(text: &str) -> Vec<(&'static str, &'static str, String)> {
    const WANTED: [(&str, &str); 3] = [("user", "name"), ("user", "email"), ("init", "defaultBranch")];
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            // `[user]`; a subsection (`[includeIf "..."]`) is not ours.
            section = rest.split(']').next().unwrap_or_default().trim().to_ascii_lowercase();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim();
        for (s, k) in WANTED {
            if section == s && key.eq_ignore_ascii_case(k) {
                let value = strip_comment(value.trim());
                let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(&value).to_string();
                // A value with a newline or NUL cannot come from git's own
                // syntax; it is not passed on.
                if !value.is_empty() && !value.contains(['\n', '\0']) {
                    out.push((s, k, value.replace("\\\"", "\"").replace("\\\\", "\\")));
                }
            }
        }
    }
    out
}

/// A value without a trailing `#` or `;` comment outside quotes.
fn strip_comment(value: &str) -> String {
    let mut quoted = false;
    let mut out = String::new();
    let mut chars = value.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                out.push(ch);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '"' => {
                quoted = !quoted;
                out.push(ch);
            }
            '#' | ';' if !quoted => break,
            _ => out.push(ch),
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "home_tests.rs"]
mod tests;
