//! What a running tool can reach: the workspace, its session, the audience it is
//! serving, the engine (for meta tools) and whoever can approve risky steps.

use std::sync::Arc;

use crate::engine::Engine;
use crate::lifecycle::Audience;
use crate::permissions::{Approver, Mode};
use crate::session::Session;
use crate::tool::ToolError;
use crate::transcript::TranscriptWriter;
use crate::workspace::Workspace;

#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Workspace,
    pub session: Arc<Session>,
    pub audience: Audience,
    pub engine: Arc<Engine>,
    pub approver: Option<Arc<dyn Approver>>,
    /// Where every call, result and load of this session is recorded, if anywhere.
    pub transcript: Option<Arc<TranscriptWriter>>,
}

impl ToolContext {
    /// A context with a fresh session and nobody to ask for approvals.
    pub fn new(engine: Arc<Engine>, workspace: Workspace, audience: Audience) -> Self {
        ToolContext {
            workspace,
            session: Arc::new(Session::new("session")),
            audience,
            engine,
            approver: None,
            transcript: None,
        }
    }

    /// Dispatches through this context's engine (the one path every call takes).
    pub async fn call(&self, name: &str, args: serde_json::Value) -> anyhow::Result<crate::tool::ToolResult> {
        self.engine.dispatch(name, args, self).await
    }

    pub fn mode(&self) -> Mode {
        self.audience.mode
    }

    /// Asks the host; refuses with a message that says why when nobody can be asked.
    pub async fn ask(&self, question: &str) -> Result<(), ToolError> {
        match &self.approver {
            Some(approver) if approver.approve(question).await => Ok(()),
            Some(_) => Err(ToolError::model(format!("not approved: {question} (the user declined)"))),
            None => Err(ToolError::model(format!(
                "needs approval, and this session has nobody to ask: {question} Rerun in yolo mode, or add a trusted rule."
            ))),
        }
    }
}
