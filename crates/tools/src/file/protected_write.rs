//! The file tools' half of the one protected-path list
//! (`quiver_sandbox::protected`): `write_file`, `edit_file`, `apply_patch`
//! and `fim_edit` change nothing the sandbox keeps read-only unless the user
//! says yes. Plan mode never writes anyway; yolo asks nothing; agent mode
//! asks, and with nobody to ask refuses with the reason.

use std::path::Path;

use quiver_engine::{Mode, ToolContext, ToolError};

/// Refuses, or asks about, a write to `path` (resolved, inside the workspace).
pub(crate) async fn guard(ctx: &ToolContext, path: &Path, shown: &str) -> Result<(), ToolError> {
    let Some(why) = quiver_sandbox::protected::protected_reason(ctx.workspace.root(), path) else {
        return Ok(());
    };
    match ctx.mode() {
        Mode::Yolo => Ok(()),
        Mode::Plan => Err(ToolError::model(format!("`{shown}` was not changed: {why}, and plan mode writes nothing"))),
        Mode::Agent if ctx.approver.is_none() => Err(ToolError::model(format!(
            "`{shown}` was not changed: {why}. It can run code later without anyone asking, so changing it needs the \
             user's approval, and this session has nobody to ask. Leave it as it is, or tell the user what to change."
        ))),
        Mode::Agent => ctx.ask(&format!("change `{shown}`? ({why})")).await,
    }
}
