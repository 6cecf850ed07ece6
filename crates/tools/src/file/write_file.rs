//! `write_file`: create or replace a whole file, atomically.
//!
//! The bytes go to a temporary file in the target's own directory, are flushed to
//! disk, and only then renamed over the target. A crash or a full disk therefore
//! leaves either the old file or the new one, never a torn mix; and because the
//! rename stays on one file system it is atomic.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput, Workspace};

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
        crate::file::protected_write::guard(ctx, &path, &shown).await?;
        let previous = match ctx.workspace.symlink_metadata(&path) {
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
        if previous == Some(bytes.len() as u64)
            && ctx.workspace.read_regular(&path, bytes.len() as u64).is_ok_and(|current| current == bytes)
        {
            return Ok(ToolOutput::text(format!(
                "`{shown}` already has exactly this content ({} bytes); nothing written",
                bytes.len()
            ))
            .with_meta("path", shown)
            .with_meta("bytes", bytes.len())
            .with_meta("created", false)
            .with_meta("changed", false));
        }

        let size = bytes.len();
        write_atomically(&ctx.workspace, path, bytes, &shown).await?;

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
///
/// Everything happens beneath the workspace root's descriptor
/// ([`Workspace::write_atomic`]): missing parents are created there, the temp
/// file lives next to the target (the rename cannot cross file systems), and a
/// directory swapped for a symlink mid-call makes the write fail, never land
/// outside. An existing file keeps its permission bits (a script stays
/// executable) and a read-only one is refused, as an ordinary write would be.
pub(crate) async fn write_atomically(
    ws: &Workspace,
    path: PathBuf,
    bytes: Vec<u8>,
    shown: &str,
) -> Result<(), ToolError> {
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || ws.write_atomic(&path, &bytes, None))
        .await
        .map_err(|e| ToolError::Fatal(anyhow::anyhow!("atomic write task panicked: {e}")))?
        .map_err(|e| io_error("write", shown, &e))
}

#[cfg(test)]
#[path = "write_file_tests.rs"]
mod tests;
