//! What a sandboxed command may do.

use std::path::PathBuf;

/// The filesystem half of a policy: where a command may write. What it may
/// read is the same in every restricted policy: the system's trees,
/// toolchains and caches, the workspace, and of the home only an allowlist
/// (the namespace sandbox's view; the Landlock fallback's `read_allow`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxPolicy {
    /// Writes nothing but its private temp dir.
    ReadOnly,
    /// Writes the given roots (the workspace, usually) and its private temp dir,
    /// except the paths kept read-only ([`Sandbox::read_only_paths`](crate::Sandbox::read_only_paths)):
    /// `<root>/.git/config`, `<root>/.git/hooks` and quiver's own config dir.
    WorkspaceWrite { writable_roots: Vec<PathBuf> },
    /// No filesystem restriction (only with approval, or in yolo).
    Full,
}

impl SandboxPolicy {
    /// Whether the filesystem part needs Landlock at all.
    pub fn restricts_filesystem(&self) -> bool {
        !matches!(self, SandboxPolicy::Full)
    }
}

/// quiver's own configuration directory (`$XDG_CONFIG_HOME/quiver`, else
/// `~/.config/quiver`): it decides which commands are trusted and which servers
/// start, so a sandboxed command must never write it, even when it lies inside a
/// writable root (a workspace at `~`).
pub fn quiver_config_dir() -> Option<PathBuf> {
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(xdg).join("quiver"));
    }
    std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|home| PathBuf::from(home).join(".config/quiver"))
}

/// quiver's own state directory (`$QUIVER_STATE_DIR`, else
/// `$XDG_STATE_HOME/quiver`, else `~/.local/state/quiver`): remembered
/// approvals, sessions, OAuth tokens. A sandboxed command neither reads nor
/// writes it.
pub fn quiver_state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("QUIVER_STATE_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(xdg).join("quiver"));
    }
    std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|home| PathBuf::from(home).join(".local/state/quiver"))
}

/// `$HOME`, when set and absolute.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The user's own settings file: `$QUIVER_CONFIG_DIR/config.toml`, else
/// `config.toml` in [`quiver_config_dir`](crate::quiver_config_dir). Only this
/// file is read: a project's `quiver.toml` comes with a cloned repository and
/// gets no say over what children inherit.
pub fn user_config_file() -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("QUIVER_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(std::path::PathBuf::from(dir)),
        None => quiver_config_dir(),
    };
    dir.map(|d| d.join("config.toml"))
}

/// More entries of the home a sandboxed command may read, from `path`'s
/// `[sandbox] home_allow = [".m2/repository", "~/.gradle/caches"]` (relative
/// to the home, or `~/…`), beside
/// [`HOME_TOOLCHAIN_ALLOW`](crate::protected::HOME_TOOLCHAIN_ALLOW). Only
/// the user's own config is read: a project cannot widen what its commands see.
pub fn user_home_allow(path: &std::path::Path) -> Result<Vec<String>, String> {
    let entries =
        user_sandbox_list(path, "home_allow", "paths in the home", "[\".m2/repository\", \"~/.gradle/caches\"]")?;
    entries
        .into_iter()
        .map(|e| {
            let rel = e.strip_prefix("~/").unwrap_or(&e).trim_end_matches('/').to_string();
            let bad = rel.is_empty()
                || rel.starts_with('/')
                || rel == "~"
                || std::path::Path::new(&rel).components().any(|c| !matches!(c, std::path::Component::Normal(_)));
            if bad {
                Err(format!("`[sandbox] home_allow` entry `{e}` must name something inside the home (`.m2/repository` or `~/.m2/repository`), not the home itself or a path outside it"))
            } else {
                Ok(rel)
            }
        })
        .collect()
}

/// `[sandbox] KEY`, a list of non-empty strings, from the user's config file.
pub(crate) fn user_sandbox_list(
    path: &std::path::Path,
    key: &str,
    what: &str,
    example: &str,
) -> Result<Vec<String>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.to_string()),
    };
    let table: toml::Table = toml::from_str(&text).map_err(|e| e.to_string())?;
    let Some(list) = table.get("sandbox").and_then(|s| s.get(key)) else { return Ok(Vec::new()) };
    let shape = || format!("`[sandbox] {key}` must be a list of {what}, e.g. {example}");
    let items = list.as_array().ok_or_else(shape)?;
    items.iter().map(|v| v.as_str().map(str::to_string).filter(|s| !s.trim().is_empty()).ok_or_else(shape)).collect()
}
