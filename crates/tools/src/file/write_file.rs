//! `write_file`: create or replace a whole file, atomically.
//!
//! The bytes go to a temporary file in the target's own directory, are flushed to
//! disk, and only then renamed over the target. A crash or a full disk therefore
//! leaves either the old file or the new one, never a torn mix; and because the
//! rename stays on one file system it is atomic.

use std::io::Write;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::util::io_error;

pub struct WriteFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileInput {
    /// File path, relative to the workspace root.
    pub path: String,
    /// The complete new file content.
    pub content: String,
}

impl Tool for WriteFile {
    type Input = WriteFileInput;
    const NAME: &'static str = "write_file";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::WRITES_FILES;

    fn description(&self) -> String {
        "Create or overwrite a whole file (parent dirs created). For changes to an existing file prefer edit_file."
            .into()
    }

    async fn run(&self, input: WriteFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.path.ends_with('/') {
            return Err(ToolError::model(format!("`{}` ends with `/`; give the path of a file", input.path)));
        }
        let path = ctx.workspace.resolve(&input.path)?;
        let shown = ctx.workspace.display(&path);
        let previous = match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::model(format!("`{shown}` is a directory; give the path of a file")));
            }
            Ok(meta) if !meta.is_file() => {
                return Err(ToolError::model(format!("`{shown}` is not a regular file; refusing to replace it")));
            }
            Ok(meta) => Some(meta.len()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error("inspect", &shown, &e)),
        };
        let bytes = input.content.into_bytes();
        let lines = line_count(&bytes);

        // Rewriting identical bytes would only bump the mtime and wake file watchers.
        if previous == Some(bytes.len() as u64) && tokio::fs::read(&path).await.is_ok_and(|current| current == bytes) {
            return Ok(ToolOutput::text(format!(
                "`{shown}` already has exactly this content ({} bytes); nothing written",
                bytes.len()
            ))
            .with_meta("path", shown)
            .with_meta("bytes", bytes.len())
            .with_meta("created", false)
            .with_meta("changed", false));
        }

        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| io_error("create directory", &ctx.workspace.display(parent), &e))?;
        }
        let size = bytes.len();
        write_atomically(path, bytes, &shown).await?;

        let text = match previous {
            None => format!("Created `{shown}` ({size} bytes, {lines} lines)"),
            Some(old) => format!("Overwrote `{shown}` ({size} bytes, {lines} lines; was {old} bytes)"),
        };
        Ok(ToolOutput::text(text)
            .with_meta("path", shown)
            .with_meta("bytes", size)
            .with_meta("created", previous.is_none())
            .with_meta("changed", true))
    }
}

fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// Writes `bytes` to `path` through a temp file + rename, off the async runtime.
/// Errors are phrased for the model; `shown` is the path as the model knows it.
pub(crate) async fn write_atomically(path: PathBuf, bytes: Vec<u8>, shown: &str) -> Result<(), ToolError> {
    tokio::task::spawn_blocking(move || atomic_write(&path, &bytes))
        .await
        .map_err(|e| ToolError::Fatal(anyhow::anyhow!("atomic write task panicked: {e}")))?
        .map_err(|e| io_error("write", shown, &e))
}

/// The temp file lives next to the target so the rename cannot cross file systems.
/// An existing file keeps its permission bits (a script stays executable); a new
/// one gets the usual 0666-minus-umask instead of tempfile's private 0600.
fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let parent = path.parent().ok_or_else(|| std::io::Error::other("path has no parent directory"))?;
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    // A rename would replace a read-only file without complaint; an ordinary
    // write would be refused, and so is this one.
    if existing.as_ref().is_some_and(std::fs::Permissions::readonly) {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only file"));
    }
    let mode = existing.clone().unwrap_or_else(|| std::fs::Permissions::from_mode(0o666));
    let mut tmp =
        tempfile::Builder::new().prefix(".quiver-write-").suffix(".tmp").permissions(mode).tempfile_in(parent)?;
    tmp.write_all(bytes)?;
    if let Some(perms) = existing {
        // The create mode above was filtered by the umask; restore the exact bits.
        tmp.as_file().set_permissions(perms)?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable; failing here cannot corrupt anything, so it
    // is best effort (some file systems refuse fsync on directories).
    if let Ok(dir) = std::fs::File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
#[path = "write_file_tests.rs"]
mod tests;
