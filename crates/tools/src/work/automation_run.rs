//! `automation_run`: run an automation now; the run enqueues a normal task.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, change_automation};

pub struct AutomationRun(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationRunInput {
    /// The automation's id ("auto-2") or name.
    pub automation_id: String,
}

impl Tool for AutomationRun {
    type Input = AutomationRunInput;
    const NAME: &'static str = "automation_run";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS.union(Capabilities::GATES_ITSELF);

    // Before one vocabulary the input was `id`; `automation_id` says whose.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "automation_id")];

    fn description(&self) -> String {
        "Run an automation now, outside its schedule: enqueues a durable task. Asks for approval.".into()
    }

    async fn run(&self, input: AutomationRunInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mut name = String::new();
        let task = change_automation(
            &self.0,
            ctx,
            &input.automation_id,
            |current| {
                name = current.id.clone();
                let prompt: String = current.prompt.chars().take(80).collect();
                format!("run automation '{}' now (\"{prompt}\")?", current.name)
            },
            |s, id| s.run_automation_now(id),
        )
        .await?;
        Ok(ToolOutput::json(json!({"automation_id": name, "task_id": task.id, "state": task.state})))
    }
}
