//! `agent_eval`: send a sub-agent more input, wait for it (bounded), or read
//! its state; with no id, list this session's sub-agents.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::subagent::hub::AgentHub;

pub const DEFAULT_WAIT_MS: u64 = 30_000;
pub const MAX_WAIT_MS: u64 = 600_000;

pub struct AgentEval(pub Arc<AgentHub>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentEvalInput {
    /// Omit (and name) to list this session's agents.
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// Follow-up message for the agent.
    #[serde(default)]
    pub input: Option<String>,
    /// Wait until it finishes (default false).
    #[serde(default)]
    pub block: Option<bool>,
    /// Longest wait in ms (default 30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl Tool for AgentEval {
    type Input = AgentEvalInput;
    const NAME: &'static str = "agent_eval";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Get a sub-agent's status and result (SUMMARY, CHANGES, EVIDENCE, RISKS, BLOCKERS); send it input; block to wait."
            .into()
    }

    async fn run(&self, input: AgentEvalInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let hub = &self.0;
        if input.agent_id.is_none() && input.name.is_none() {
            if input.input.is_some() {
                return Err(ToolError::model("input needs an agent_id or name to send it to"));
            }
            let agents: Vec<Value> = hub.list(ctx).iter().map(|a| a.projection().0).collect();
            return Ok(ToolOutput::json(json!({ "agents": agents, "running": hub.running() })));
        }
        let handle = hub.find(ctx, input.agent_id.as_deref(), input.name.as_deref())?;
        if let Some(text) = input.input {
            hub.send_input(&handle, text)?;
        }
        let mut output = if input.block.unwrap_or(false) {
            let ms = input.timeout_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS);
            let finished = hub.wait(&handle, Duration::from_millis(ms)).await;
            let mut output = super::output_of(&handle);
            if !finished {
                output.content["timed_out"] = json!(true);
            }
            output
        } else {
            super::output_of(&handle)
        };
        output.content["running"] = json!(hub.running());
        Ok(output)
    }
}
