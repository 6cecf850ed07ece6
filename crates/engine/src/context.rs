//! What a running tool can reach: the workspace, its session, the audience it
//! is serving, whoever can approve risky steps, the command gate, and two
//! narrow handles onto the surface (search/load, dispatch). It holds no engine:
//! a tool needs only these, and holding the engine would tie the engine's
//! modules into one import circle.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::audience::Audience;
use crate::fim::FillInMiddle;
use crate::permissions::command::{CommandGate, CommandRequest, GateVerdict};
use crate::permissions::exec_policy::Permit;
use crate::permissions::{Approver, Mode};
use crate::result::{ToolError, ToolResult};
use crate::session::Session;
use crate::surface::ToolSurface;
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

pub type DispatchFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<ToolResult>> + Send + 'a>>;

/// Runs a call by any name through the one dispatch path (of the newest
/// engine, where a host rebuilds engines).
pub trait Dispatcher: Send + Sync {
    fn dispatch<'a>(&'a self, name: &'a str, args: Value, ctx: &'a ToolContext) -> DispatchFuture<'a>;

    /// Waits up to `within` for tool lists still being discovered (MCP servers
    /// started in the background on a machine with no cached lists), so a
    /// first search can find their tools. Returns one note per source still
    /// pending or failed, worded for the model; nothing when all is settled.
    fn settle<'a>(&'a self, _ctx: &'a ToolContext, _within: std::time::Duration) -> SettleFuture<'a> {
        Box::pin(std::future::ready(Vec::new()))
    }
}

/// What [`Dispatcher::settle`] and [`crate::ToolProvider::settle`] return.
pub type SettleFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<String>> + Send + 'a>>;

#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Workspace,
    pub session: Arc<Session>,
    pub audience: Audience,
    pub approver: Option<Arc<dyn Approver>>,
    /// Where every call, result and load of this session is recorded, if anywhere.
    pub transcript: Option<Arc<TranscriptWriter>>,
    /// Search and load (for `tool_search`).
    pub surface: Arc<dyn ToolSurface>,
    /// Calls by name (for `mcp_call` and hosts).
    pub dispatcher: Arc<dyn Dispatcher>,
    /// Decides whether a process may start.
    pub commands: Arc<CommandGate>,
    /// The model's fill-in-the-middle completions (`fim_edit`), when the host
    /// runs a model that has them.
    pub fim: Option<Arc<dyn FillInMiddle>>,
}

impl ToolContext {
    /// A context with a fresh session and nobody to ask for approvals.
    pub fn new(
        surface: Arc<dyn ToolSurface>,
        dispatcher: Arc<dyn Dispatcher>,
        commands: Arc<CommandGate>,
        workspace: Workspace,
        audience: Audience,
    ) -> Self {
        ToolContext {
            workspace,
            session: Arc::new(Session::new(new_session_id())),
            audience,
            approver: None,
            transcript: None,
            surface,
            dispatcher,
            commands,
            fim: None,
        }
    }

    /// Dispatches through the one path every call takes.
    pub async fn call(&self, name: &str, args: Value) -> anyhow::Result<ToolResult> {
        self.dispatcher.dispatch(name, args, self).await
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

    /// The command gate's verdict before anybody is asked.
    pub fn judge_command(&self, request: &CommandRequest) -> GateVerdict {
        self.commands.judge(self.mode(), request)
    }

    /// The command gate, with the asking done: `Ok` says how the process got
    /// permission, `Err` is the refusal worded for the model.
    pub async fn authorize_command(&self, request: &CommandRequest) -> Result<Permit, ToolError> {
        match self.commands.judge(self.mode(), request) {
            GateVerdict::Allow(permit) => Ok(permit),
            GateVerdict::Deny(message) => Err(ToolError::model(message)),
            GateVerdict::Ask { question, remember } => {
                self.ask(&question).await.map_err(|e| match &remember {
                    Some(key) => ToolError::model(format!(
                        "{e} To trust it for this workspace, run `quiver mcp trust {}` in {}, or move the server into your own config (~/.config/quiver/config.toml).",
                        key.subject,
                        key.workspace.display()
                    )),
                    None => e,
                })?;
                if let Some(key) = remember
                    && let Err(e) = self.commands.trust_store().trust(&key)
                {
                    tracing::warn!(error = %format!("{e:#}"), "could not remember an approval");
                }
                Ok(Permit::Approved)
            }
        }
    }
}
