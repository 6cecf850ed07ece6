//! `task_list`: durable tasks, newest first, optionally by state.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_durable::{TaskFilter, TaskState};
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, blocking, store_error};

pub struct TaskList(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListInput {
    /// Only tasks in these states: queued, running, succeeded, failed, cancelled, interrupted.
    #[serde(default)]
    pub state: Option<Vec<String>>,
    /// At most this many (default 20, max 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Tool for TaskList {
    type Input = TaskListInput;
    const NAME: &'static str = "task_list";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "List durable background tasks (id, state, prompt, times), newest first; filter by state.".into()
    }

    async fn run(&self, input: TaskListInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let states = input
            .state
            .unwrap_or_default()
            .iter()
            .map(|s| TaskState::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(store_error)?;
        let filter = TaskFilter { states, limit: Some(input.limit.unwrap_or(20).clamp(1, 200)) };
        let store = self.0.get()?;
        let tasks = blocking(store, move |s| s.list_tasks(&filter)).await?;
        let rows: Vec<_> = tasks
            .iter()
            .map(|t| {
                let prompt: String = t.prompt.chars().take(120).collect();
                json!({
                    "id": t.id, "state": t.state, "prompt": prompt, "created_at": t.created_at,
                    "finished_at": t.finished_at, "session_id": t.session_id, "automation_id": t.automation_id,
                })
            })
            .collect();
        Ok(ToolOutput::json(json!({"tasks": rows, "count": rows.len()})))
    }
}
