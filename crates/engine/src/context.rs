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

/// A session id unique on this machine: time, process and a counter. Spill
/// folders and job logs are keyed by it, so two sessions never share them.
pub fn new_session_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let millis =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or_default();
    format!("s{millis:x}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

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
            session: Arc::new(Session::new(new_session_id())),
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
