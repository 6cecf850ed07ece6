//! `task_create`: enqueue a durable background agent run and return its id at once.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_durable::NewTask;
use quiver_engine::{Capabilities, Domain, Mode, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, blocking, mode_rank};

const MAX_PROMPT_CHARS: usize = 100_000;
const MAX_CHECKLIST: usize = 50;

pub struct TaskCreate(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// What the background agent should do, self-contained (it does not see this conversation).
    pub prompt: String,
    /// Working directory, relative to the workspace (default: the workspace root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// plan, agent or yolo; never looser than this session's mode (the default).
    #[serde(default)]
    pub mode: Option<String>,
    /// Model id for the run (default: the configured model).
    #[serde(default)]
    pub model: Option<String>,
    /// Initial checklist items for the task.
    #[serde(default)]
    pub checklist: Option<Vec<String>>,
}

impl Tool for TaskCreate {
    type Input = TaskCreateInput;
    const NAME: &'static str = "task_create";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS;

    fn description(&self) -> String {
        "Queue a durable background agent task (outlives this session); returns its id at once. Follow it with task_read.".into()
    }

    async fn run(&self, input: TaskCreateInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let prompt = input.prompt.trim().to_string();
        if prompt.is_empty() {
            return Err(ToolError::model("`prompt` is empty; say what the task should do"));
        }
        if prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(ToolError::model(format!(
                "`prompt` is over {MAX_PROMPT_CHARS} characters; put large context in a file and name it"
            )));
        }
        let mode = match input.mode.as_deref() {
            None => ctx.mode(),
            Some(m) => m.trim().parse::<Mode>().map_err(|e| ToolError::model(e.to_string()))?,
        };
        if mode_rank(mode) > mode_rank(ctx.mode()) {
            return Err(ToolError::model(format!(
                "a task cannot run in {} mode from a {} session: a task never gets a looser mode than the session that creates it",
                mode.as_str(),
                ctx.mode().as_str()
            )));
        }
        let cwd = match input.cwd.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(dir) => ctx.workspace.resolve(dir)?,
            None => ctx.workspace.root().to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(ToolError::model(format!("`cwd` {} is not a directory", cwd.display())));
        }
        let checklist = input.checklist.unwrap_or_default();
        if checklist.len() > MAX_CHECKLIST {
            return Err(ToolError::model(format!("at most {MAX_CHECKLIST} checklist items")));
        }
        let new = NewTask {
            prompt,
            cwd: Some(cwd.display().to_string()),
            mode: Some(mode.as_str().to_string()),
            model: input.model.map(|m| m.trim().to_string()).filter(|m| !m.is_empty()),
            checklist: checklist.into_iter().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect(),
            automation_id: None,
        };
        let store = self.0.get()?;
        let task = blocking(store, move |s| s.create_task(&new)).await?;
        Ok(ToolOutput::text(format!(
            "Queued {} ({} mode). The worker pool (`quiver tasks run`) runs it; check it with task_read {{\"id\": \"{}\"}}.",
            task.id,
            mode.as_str(),
            task.id
        ))
        .with_meta("task_id", task.id)
        .with_meta("state", "queued"))
    }
}
