//! `pr_attempt_record`: capture the current changes as a PR attempt on a task.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_durable::NewPrAttempt;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::pr_attempt::{PrivateIndex, capture};
use super::{WorkStore, active_task, blocking};

pub struct PrAttemptRecord(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrAttemptRecordInput {
    /// The task to record it on (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
    /// What this attempt tries, in a sentence.
    #[serde(default)]
    pub note: Option<String>,
}

impl Tool for PrAttemptRecord {
    type Input = PrAttemptRecordInput;
    const NAME: &'static str = "pr_attempt_record";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS.union(Capabilities::RUNS_COMMANDS);

    // Before one vocabulary the durable task was `task` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task", "task_id")];
    fn description(&self) -> String {
        "Record the current git changes (untracked files included) as a PR attempt: a patch artifact plus base commit, files and line counts, on a durable task.".into()
    }

    async fn run(&self, input: PrAttemptRecordInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let task = input.task_id.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).or_else(active_task);
        let store = self.0.get()?;
        if let Some(t) = task.clone() {
            blocking(store.clone(), move |s| s.task(&t)).await?;
        }
        let ix = PrivateIndex::new(ctx, "capture the changes").await?;
        let captured = capture(&ix).await?;
        if captured.patch.is_empty() {
            return Err(ToolError::model(format!(
                "nothing to record: the work tree matches HEAD ({})",
                &captured.base[..captured.base.len().min(12)]
            )));
        }
        let new = NewPrAttempt {
            task: task.clone(),
            base_commit: captured.base,
            files: captured.files,
            additions: captured.additions,
            deletions: captured.deletions,
            patch: captured.patch,
            note: input.note.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()),
        };
        let attempt = blocking(store, move |s| s.record_attempt(&new)).await?;
        Ok(ToolOutput::json(json!({
            "attempt": attempt,
            "next": format!("pr_attempt_preflight {{\"id\": \"{}\"}} checks that it still applies", attempt.id),
            "note": if task.is_none() { "no active task: the attempt is kept but attached to no task (pass `task_id`)" } else { "" },
        })))
    }
}
