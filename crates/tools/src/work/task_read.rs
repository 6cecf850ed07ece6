//! `task_read`: one task's state, checklist, timeline, gates, PR attempts,
//! artifacts (each with a `retrieve_tool_result` handle), the audit trail of its
//! guarded writes and transcript link.

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::spill::SpillStore;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, active_task, blocking};

/// The newest timeline events shown; older ones are counted, not pasted.
const DEFAULT_EVENTS: usize = 50;

pub struct TaskRead(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskReadInput {
    /// The task id, e.g. "task-3" (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
    /// How many of the newest timeline events to show (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Tool for TaskRead {
    type Input = TaskReadInput;
    const NAME: &'static str = "task_read";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    // Before one vocabulary: the task was `id`, the count `events` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] =
        &[InputAlias::rename("id", "task_id"), InputAlias::rename("events", "limit")];
    fn description(&self) -> String {
        "Read a durable task: state, result, checklist, timeline, gate evidence, PR attempts, artifacts, transcript."
            .into()
    }

    async fn run(&self, input: TaskReadInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let id = input.task_id.or_else(active_task).ok_or_else(|| {
            ToolError::model("`task_id` is required (this session runs for no task); task_list shows the ids")
        })?;
        let keep = input.limit.unwrap_or(DEFAULT_EVENTS).clamp(1, 1000);
        let store = self.0.get()?;
        let (view, gates, attempts, audit, files) = blocking(store, move |s| {
            let view = s.read_task(&id)?;
            let gates = s.gates_of(&view.task.id)?;
            let attempts = s.attempts_of(&view.task.id)?;
            let audit = s.audit_of(&view.task.id)?;
            let mut files = Vec::new();
            for event in view.timeline.iter().filter(|e| e.kind == "artifact") {
                if let Some(id) = event.data["artifact"].as_str() {
                    files.push(s.artifact(id)?);
                }
            }
            Ok((view, gates, attempts, audit, files))
        })
        .await?;
        let total = view.timeline.len();
        let shown: Vec<_> = view.timeline.iter().skip(total.saturating_sub(keep)).collect();
        let mut artifacts = Vec::with_capacity(files.len());
        for a in files {
            let handle = handle_for(ctx, PathBuf::from(&a.path), a.bytes).await?;
            artifacts.push(json!({
                "artifact": a.id, "kind": a.kind, "name": a.name, "bytes": a.bytes, "handle": handle,
            }));
        }
        Ok(ToolOutput::json(json!({
            "task": view.task,
            "checklist": view.checklist,
            "gates": gates,
            "attempts": attempts,
            "artifacts": artifacts,
            "audit": audit,
            "timeline": shown,
            "timeline_omitted": total - shown.len(),
        })))
    }
}

/// A `retrieve_tool_result` handle on an artifact's file: the one this session
/// already has for that file (a gate's log, an earlier read), else a new one.
/// Only a new one costs a read of the file (its line count); the file is
/// adopted in place, never copied.
pub async fn handle_for(ctx: &ToolContext, path: PathBuf, bytes: u64) -> Result<String, ToolError> {
    let spills = ctx.session.state::<SpillStore>();
    if let Some(known) = spills.handles().iter().filter_map(|h| spills.get(h)).find(|r| r.path == path) {
        return Ok(known.handle);
    }
    let counted = path.clone();
    let lines = tokio::task::spawn_blocking(move || std::fs::read(&counted).map(|b| line_count(&b)))
        .await
        .map_err(|e| ToolError::Fatal(e.into()))?
        .map_err(|e| ToolError::model(format!("artifact file {} cannot be read: {e}", path.display())))?;
    let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    Ok(spills.adopt(TaskRead::NAME, path, bytes, lines).handle)
}

/// Lines as `str::lines` counts them: a last line without a newline counts.
fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}
