//! `rlm_close`: stops a session's interpreter and returns its totals.

use std::sync::Arc;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::hub::RlmHub;

pub struct RlmClose {
    pub hub: Arc<RlmHub>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlmCloseInput {
    /// The session's name.
    pub name: String,
}

impl Tool for RlmClose {
    type Input = RlmCloseInput;
    const NAME: &'static str = "rlm_close";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Stop an RLM session's Python runtime and return its stats (evals, child queries, tokens, wall time).".into()
    }

    async fn run(&self, input: RlmCloseInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Found first, so an unknown name lists the open ones.
        self.hub.get(ctx, &input.name)?;
        let Some(handle) = self.hub.remove(ctx, &input.name) else {
            return Err(ToolError::model(format!("no RLM session `{}`", input.name)));
        };
        // A running eval finishes (or hits its limit) before the close.
        let mut session = handle.lock().await;
        let exit = session.close().await;
        let stats = session.stats.to_json(session.opened.elapsed());
        Ok(ToolOutput::json(json!({"name": input.name, "closed": true, "stats": stats})).with_meta("exit", exit))
    }
}
