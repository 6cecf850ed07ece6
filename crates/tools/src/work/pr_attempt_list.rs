//! `pr_attempt_list`: the PR attempts recorded on a task.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, active_task, blocking};

pub struct PrAttemptList(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrAttemptListInput {
    /// The task (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
}

impl Tool for PrAttemptList {
    type Input = PrAttemptListInput;
    const NAME: &'static str = "pr_attempt_list";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "List the PR attempts recorded on a durable task (base commit, files, line counts, patch artifact).".into()
    }

    async fn run(&self, input: PrAttemptListInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let task = input
            .task_id
            .or_else(active_task)
            .ok_or_else(|| ToolError::model("`task_id` is required (this session runs for no task)"))?;
        let store = self.0.get()?;
        let attempts = blocking(store, move |s| s.attempts_of(&task)).await?;
        Ok(ToolOutput::json(json!({"attempts": attempts, "count": attempts.len()})))
    }
}
