//! `tool_agent`: a blocking executor child with thinking off (gated to the
//! models it is tuned for; dispatchable by everyone so transcripts replay).

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::subagent::hub::{AgentHub, OpenRequest};
use crate::subagent::role::Role;
use crate::subagent::tools::agent_eval::MAX_WAIT_MS;

pub struct ToolAgent(pub Arc<AgentHub>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolAgentInput {
    /// The concrete steps to carry out.
    pub prompt: String,
    /// Limit it to these tools.
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// Longest wait in ms (default and max 600000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl Tool for ToolAgent {
    type Input = ToolAgentInput;
    const NAME: &'static str = "tool_agent";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Hand concrete tool work to an executor sub-agent (thinking off) and wait for its result.".into()
    }

    async fn run(&self, input: ToolAgentInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.prompt.trim().is_empty() {
            return Err(ToolError::model("prompt is empty: give the executor its steps"));
        }
        let hub = &self.0;
        let request = OpenRequest {
            prompt: input.prompt,
            role: Role::Implementer,
            name: None,
            fork_context: false,
            allowed_tools: input.allowed_tools.filter(|l| !l.is_empty()),
            model: None,
            thinking_off: true,
        };
        let handle = hub.open(ctx, request)?;
        let ms = input.timeout_ms.unwrap_or(MAX_WAIT_MS).min(MAX_WAIT_MS);
        let finished = hub.wait(&handle, Duration::from_millis(ms)).await;
        if !finished {
            hub.cancel_tree(&handle);
        }
        let mut output = super::output_of(&handle);
        if !finished {
            output.content["timed_out"] = json!(true);
        }
        if let Some(answer) = handle.snapshot().answer {
            output.content["answer"] = json!(answer);
        }
        hub.release(&handle);
        Ok(output)
    }
}
