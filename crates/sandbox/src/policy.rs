//! What a sandboxed command may do.

use std::path::PathBuf;

/// The filesystem half of a policy. Reading is allowed everywhere in every
/// policy (a coding agent reads system headers, toolchains, caches); what
/// differs is where a command may write.
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
