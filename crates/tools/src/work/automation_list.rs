//! `automation_list`: every automation with its schedule, state and next due time.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, blocking};

pub struct AutomationList(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationListInput {}

impl Tool for AutomationList {
    type Input = AutomationListInput;
    const NAME: &'static str = "automation_list";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "List scheduled automations: name, schedule (and in words), time zone, state, next due time.".into()
    }

    async fn run(&self, _input: AutomationListInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = self.0.get()?;
        let all = blocking(store, |s| s.list_automations()).await?;
        Ok(ToolOutput::json(json!({"automations": all, "count": all.len()})))
    }
}
