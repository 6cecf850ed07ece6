//! The file tools' half of the sandbox's credential masks
//! (`quiver_sandbox::protected::secret_paths`): when the workspace contains
//! the home (a workspace at `~` or `/`), `~/.ssh`, `~/.aws`, `~/.netrc`, ...
//! and quiver's own config and state lie inside it, and a sandboxed command
//! sees them empty. `read_file`, `list_dir`, `grep_files`, `file_search` and
//! `project_map` must not hand them to the model either: yolo reads them,
//! agent and plan mode ask, and with nobody to ask refuse with the reason.
//! Walks (`grep_files`, `file_search`) leave them out silently.

use std::path::Path;

use quiver_engine::{Mode, ToolContext, ToolError};

/// Refuses, or asks about, reading `path` (resolved, inside the workspace).
pub(crate) async fn guard(ctx: &ToolContext, path: &Path, shown: &str) -> Result<(), ToolError> {
    let Some(why) = quiver_sandbox::protected::secret_reason(ctx.workspace.root(), path) else {
        return Ok(());
    };
    match ctx.mode() {
        Mode::Yolo => Ok(()),
        _ if ctx.approver.is_none() => Err(ToolError::model(format!(
            "`{shown}` was not read: {why}. Reading it needs the user's approval, and this session has nobody to ask."
        ))),
        _ => ctx.ask(&format!("let the model read `{shown}`? ({why})")).await,
    }
}
