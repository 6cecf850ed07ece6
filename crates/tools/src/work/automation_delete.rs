//! `automation_delete`: Delete an automation and its run history (tasks it made stay). Asks for approval.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, change_automation};

pub struct AutomationDelete(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationDeleteInput {
    /// The automation's id ("auto-2") or name.
    pub automation_id: String,
}

impl Tool for AutomationDelete {
    type Input = AutomationDeleteInput;
    const NAME: &'static str = "automation_delete";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS.union(Capabilities::GATES_ITSELF);

    // Before one vocabulary the input was `id`; `automation_id` says whose.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "automation_id")];

    fn description(&self) -> String {
        "Delete an automation and its run history (tasks it made stay). Asks for approval.".into()
    }

    async fn run(&self, input: AutomationDeleteInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let a = change_automation(
            &self.0,
            ctx,
            &input.automation_id,
            |current| format!("delete automation '{}' ({}, '{}')?", current.name, current.id, current.schedule),
            |s, id| s.delete_automation(id),
        )
        .await?;
        Ok(ToolOutput::json(json!({"deleted": a})))
    }
}
