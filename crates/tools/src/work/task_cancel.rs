//! `task_cancel`: stop a queued or running durable task (approval-required).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_durable::TaskState;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, approve, blocking};

pub struct TaskCancel(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCancelInput {
    /// The task id, e.g. "task-3".
    pub task_id: String,
}

impl Tool for TaskCancel {
    type Input = TaskCancelInput;
    const NAME: &'static str = "task_cancel";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS.union(Capabilities::GATES_ITSELF);

    // Before one vocabulary the task was `id` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "task_id")];
    fn description(&self) -> String {
        "Cancel a queued or running durable task (asks for approval).".into()
    }

    async fn run(&self, input: TaskCancelInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = self.0.get()?;
        let id = input.task_id.trim().to_string();
        let task = blocking(store.clone(), {
            let id = id.clone();
            move |s| s.task(&id)
        })
        .await?;
        let prompt: String = task.prompt.chars().take(80).collect();
        approve(ctx, &format!("cancel durable task {} ({}: \"{prompt}\")?", task.id, task.state.as_str())).await?;
        let after = blocking(store, move |s| s.cancel_task(&id)).await?;
        let text = if after.state == TaskState::Cancelled {
            format!("{} cancelled before it started.", after.id)
        } else {
            format!("{} is running; its worker was asked to stop and will record it as cancelled.", after.id)
        };
        Ok(ToolOutput::text(text).with_meta("task_id", after.id).with_meta("state", after.state.as_str()))
    }
}
