//! `agent_close`: cancel a running sub-agent (and its descendants) or
//! release a finished one.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::subagent::hub::AgentHub;

pub struct AgentClose(pub Arc<AgentHub>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentCloseInput {
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// Cancel it if still running (default true).
    #[serde(default)]
    pub cancel: Option<bool>,
}

impl Tool for AgentClose {
    type Input = AgentCloseInput;
    const NAME: &'static str = "agent_close";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Cancel a running sub-agent (and its children) or release a finished one.".into()
    }

    async fn run(&self, input: AgentCloseInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.agent_id.is_none() && input.name.is_none() {
            return Err(ToolError::model("agent_close needs agent_id or name"));
        }
        let hub = &self.0;
        let handle = hub.find(ctx, input.agent_id.as_deref(), input.name.as_deref())?;
        if handle.snapshot().state.is_active() {
            if !input.cancel.unwrap_or(true) {
                return Err(ToolError::model(format!(
                    "agent `{}` is still running; agent_eval with block to wait for it, or close it with cancel: true",
                    handle.id
                )));
            }
            hub.cancel_tree(&handle);
        }
        let output = super::output_of(&handle);
        hub.release(&handle);
        Ok(output)
    }
}
