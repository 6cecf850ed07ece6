//! Small helpers shared by several tools.

use quiver_engine::ToolError;

/// Turns an I/O error on `path` into a message the model can act on.
pub fn io_error(action: &str, shown: &str, err: &std::io::Error) -> ToolError {
    let reason = match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_string(),
        _ => err.to_string(),
    };
    ToolError::model(format!("cannot {action} `{shown}`: {reason}"))
}

/// Heuristic used by text tools: a NUL byte in the first 8 KiB means binary.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0)
}

/// Whether a program is on PATH (for optional helpers such as `pdftotext`).
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    which_in(program, std::env::var_os("PATH"))
}

/// `program` on `path` (a `PATH`-style list). A relative entry (`.`) is
/// resolved against `/`, never the working directory: a workspace must not
/// put its own `gh` or `git` in front of the real one.
pub fn which_in(program: &str, path: Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
    which::which_in(program, path, "/").ok()
}

/// Whether an entry a directory walk found really lies inside the workspace.
///
/// The walkers (`ignore`) read directories by path string, so a directory
/// swapped for a symlink mid-walk would list (and be descended into) outside.
/// Every entry is therefore re-opened beneath the root's descriptor with no
/// symlink allowed on its path ([`Workspace::open_walked`]); an entry that fails
/// is dropped and, for a directory, not descended into. So every name a walk
/// reports exists inside the workspace at that path (the walk root itself was
/// resolved and is checked by its children).
pub(crate) fn stays_inside(ws: &quiver_engine::Workspace, entry: &ignore::DirEntry) -> bool {
    entry.depth() == 0 || ws.open_walked(entry.path(), false).is_ok()
}
