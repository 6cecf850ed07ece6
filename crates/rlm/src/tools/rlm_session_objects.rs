//! `rlm_session_objects`: compact cards of the active session's prompt,
//! transcript and messages, loadable with `rlm_open {session_object}`.

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::session_objects;

pub struct RlmSessionObjects;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlmSessionObjectsInput {}

impl Tool for RlmSessionObjects {
    type Input = RlmSessionObjectsInput;
    const NAME: &'static str = "rlm_session_objects";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "List compact cards (ref, size, preview) for the active session's system prompt, transcript, latest user message and messages; load one with rlm_open {session_object}.".into()
    }

    async fn run(&self, _input: RlmSessionObjectsInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(session_objects::cards(ctx)?))
    }
}
