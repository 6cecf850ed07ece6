//! `task_read`: one task's state, checklist, timeline, gates, PR attempts,
//! artifacts and transcript link.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, active_task, blocking};

/// The newest timeline events shown; older ones are counted, not pasted.
const DEFAULT_EVENTS: usize = 50;

pub struct TaskRead(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskReadInput {
    /// The task id, e.g. "task-3" (default: the task this session runs for).
    #[serde(default)]
    pub id: Option<String>,
    /// How many of the newest timeline events to show (default 50).
    #[serde(default)]
    pub events: Option<usize>,
}

impl Tool for TaskRead {
    type Input = TaskReadInput;
    const NAME: &'static str = "task_read";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Read a durable task: state, result, checklist, timeline, gate evidence, PR attempts, artifacts, transcript."
            .into()
    }

    async fn run(&self, input: TaskReadInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let id = input.id.or_else(active_task).ok_or_else(|| {
            ToolError::model("`id` is required (this session runs for no task); task_list shows the ids")
        })?;
        let keep = input.events.unwrap_or(DEFAULT_EVENTS).clamp(1, 1000);
        let store = self.0.get()?;
        let (view, gates, attempts) = blocking(store, move |s| {
            let view = s.read_task(&id)?;
            let gates = s.gates_of(&view.task.id)?;
            let attempts = s.attempts_of(&view.task.id)?;
            Ok((view, gates, attempts))
        })
        .await?;
        let total = view.timeline.len();
        let shown: Vec<_> = view.timeline.iter().skip(total.saturating_sub(keep)).collect();
        let artifacts: Vec<_> = view.timeline.iter().filter(|e| e.kind == "artifact").map(|e| e.data.clone()).collect();
        Ok(ToolOutput::json(json!({
            "task": view.task,
            "checklist": view.checklist,
            "gates": gates,
            "attempts": attempts,
            "artifacts": artifacts,
            "timeline": shown,
            "timeline_omitted": total - shown.len(),
        })))
    }
}
