//! `agent_open`: start a sub-agent and return at once with its id and state.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::subagent::hub::{AgentHub, OpenRequest};
use crate::subagent::role::Role;

pub struct AgentOpen(pub Arc<AgentHub>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentOpenInput {
    /// The task.
    pub prompt: String,
    /// general, explore, plan, review, implementer, verifier or custom.
    #[serde(default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// Start from this conversation (default: fresh).
    #[serde(default)]
    pub fork_context: Option<bool>,
    /// Tool allowlist (custom needs one).
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    #[serde(default)]
    pub model: Option<String>,
}

impl Tool for AgentOpen {
    type Input = AgentOpenInput;
    const NAME: &'static str = "agent_open";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // The schema once had both `type` and `agent_type` (`type` won silently).
    // Recorded calls with `type` still run; one giving both, disagreeing, is
    // refused: which role was meant cannot be known.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("type", "agent_type")];

    fn description(&self) -> String {
        "Start a sub-agent on a task in the background; returns agent_id at once. Use agent_eval for its result.".into()
    }

    async fn run(&self, input: AgentOpenInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let role = match input.agent_type.as_deref() {
            Some(kind) => Role::parse(kind).map_err(ToolError::model)?,
            None => Role::General,
        };
        if input.prompt.trim().is_empty() {
            return Err(ToolError::model("prompt is empty: give the sub-agent its task"));
        }
        let allowed = input.allowed_tools.filter(|list| !list.is_empty());
        if role == Role::Custom && allowed.is_none() {
            return Err(ToolError::model("agent_type `custom` needs allowed_tools: the exact tool names it may call"));
        }
        let request = OpenRequest {
            prompt: input.prompt,
            role,
            name: input.name.filter(|n| !n.trim().is_empty()),
            fork_context: input.fork_context.unwrap_or(false),
            allowed_tools: allowed,
            model: input.model.filter(|m| !m.trim().is_empty()),
            thinking_off: false,
        };
        let handle = self.0.open(ctx, request)?;
        Ok(super::output_of(&handle))
    }
}
