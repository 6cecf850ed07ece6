//! What can go wrong managing servers; each message names the file or the
//! server, and says what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    /// The file is not TOML at all: nothing can be edited (and nothing is).
    #[error("{}:{line}:{column}: {message} (the file was not changed)", path.display())]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    #[error("no MCP server named `{name}` in {}{}", path.display(), known_list(known))]
    Unknown { name: String, path: PathBuf, known: Vec<String> },
    /// Defined by a project's file, which quiver never edits.
    #[error(
        "MCP server `{name}` is defined by the project's {} and quiver only edits your own config ({}); \
         edit the project's file yourself",
        file.display(),
        user.display()
    )]
    NotUsers { name: String, file: PathBuf, user: PathBuf },
    #[error("an MCP server named `{name}` already exists in {}; pass --force to replace it", path.display())]
    Exists { name: String, path: PathBuf },
    #[error("`{name}` is not a usable server name: {reason}")]
    InvalidName { name: String, reason: String },
    /// The edit would leave a file quiver cannot read; it is not written.
    #[error("the change was not written: {0}")]
    Invalid(String),
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    /// Someone else wrote the file between our read and our write.
    #[error("{} changed while it was being edited; nothing was written, run the command again", path.display())]
    Changed { path: PathBuf },
    #[error("no user config directory (set QUIVER_CONFIG_DIR or HOME)")]
    NoConfigDir,
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (it defines none)".to_string()
    } else {
        let names: Vec<String> = known.iter().map(|n| format!("`{n}`")).collect();
        format!(" (it defines {})", names.join(", "))
    }
}

impl ManageError {
    pub(crate) fn io(path: &std::path::Path, what: &str, e: std::io::Error) -> Self {
        ManageError::Io { path: path.to_path_buf(), message: format!("{what}: {e}") }
    }
}
