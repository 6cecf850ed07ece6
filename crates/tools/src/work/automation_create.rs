//! `automation_create`: a prompt on a cron schedule; each run is a normal task.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_durable::NewAutomation;
use quiver_engine::{Capabilities, Domain, Mode, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, approve, blocking, mode_rank};

pub struct AutomationCreate(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationCreateInput {
    /// A unique name, e.g. "nightly-triage".
    pub name: String,
    /// What each run's agent should do, self-contained.
    pub prompt: String,
    /// Cron: five fields "minute hour day-of-month month day-of-week" (e.g. "0 9 * * 1-5") or "@daily".
    pub schedule: String,
    /// IANA time zone for the schedule, e.g. "Europe/Berlin" (default UTC).
    #[serde(default)]
    pub timezone: Option<String>,
    /// Working directory, relative to the workspace (default: the workspace root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// plan or agent (default: this session's mode; never looser).
    #[serde(default)]
    pub mode: Option<String>,
}

impl Tool for AutomationCreate {
    type Input = AutomationCreateInput;
    const NAME: &'static str = "automation_create";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS.union(Capabilities::GATES_ITSELF);

    fn description(&self) -> String {
        "Create a scheduled automation (cron, time zone aware): each due time enqueues a durable task. Asks for approval.".into()
    }

    async fn run(&self, input: AutomationCreateInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mode = match input.mode.as_deref() {
            None => ctx.mode(),
            Some(m) => m.trim().parse::<Mode>().map_err(|e| ToolError::model(e.to_string()))?,
        };
        if mode_rank(mode) > mode_rank(ctx.mode()) {
            return Err(ToolError::model(format!(
                "an automation cannot run in {} mode from a {} session",
                mode.as_str(),
                ctx.mode().as_str()
            )));
        }
        let cwd = match input.cwd.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(dir) => ctx.workspace.resolve(dir)?,
            None => ctx.workspace.root().to_path_buf(),
        };
        let new = NewAutomation {
            name: input.name.trim().to_string(),
            prompt: input.prompt.trim().to_string(),
            schedule: input.schedule.trim().to_string(),
            tz: input.timezone.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
            cwd: Some(cwd.display().to_string()),
            mode: Some(mode.as_str().to_string()),
            model: None,
        };
        // Validate before asking: nobody should approve a schedule that cannot parse.
        quiver_durable::validate_schedule(&new.schedule, new.tz.as_deref().unwrap_or("UTC"))
            .map_err(super::store_error)?;
        let prompt: String = new.prompt.chars().take(100).collect();
        approve(
            ctx,
            &format!(
                "create automation '{}' running \"{prompt}\" on '{}' ({}) in {} mode?",
                new.name,
                new.schedule,
                new.tz.as_deref().unwrap_or("UTC"),
                mode.as_str()
            ),
        )
        .await?;
        let store = self.0.get()?;
        let a = blocking(store, move |s| s.create_automation(&new)).await?;
        Ok(ToolOutput::json(json!({"automation": a})))
    }
}
