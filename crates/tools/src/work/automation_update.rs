//! `automation_update`: change an automation's prompt, schedule, time zone or cwd.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_durable::AutomationPatch;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, approve, blocking};

pub struct AutomationUpdate(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationUpdateInput {
    /// The automation's id ("auto-2") or name.
    pub automation_id: String,
    /// New prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// New cron schedule.
    #[serde(default)]
    pub schedule: Option<String>,
    /// New IANA time zone.
    #[serde(default)]
    pub timezone: Option<String>,
    /// New working directory, relative to the workspace.
    #[serde(default)]
    pub cwd: Option<String>,
}

impl Tool for AutomationUpdate {
    type Input = AutomationUpdateInput;
    const NAME: &'static str = "automation_update";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS.union(Capabilities::GATES_ITSELF);

    // Before one vocabulary the input was `id`; `automation_id` says whose.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "automation_id")];

    fn description(&self) -> String {
        "Change an automation's prompt, schedule, time zone or cwd. Asks for approval.".into()
    }

    async fn run(&self, input: AutomationUpdateInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let cwd = match input.cwd.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(dir) => Some(ctx.workspace.resolve(dir)?.display().to_string()),
            None => None,
        };
        let patch = AutomationPatch {
            prompt: input.prompt.map(|p| p.trim().to_string()).filter(|p| !p.is_empty()),
            schedule: input.schedule.map(|p| p.trim().to_string()).filter(|p| !p.is_empty()),
            tz: input.timezone.map(|p| p.trim().to_string()).filter(|p| !p.is_empty()),
            cwd,
            mode: None,
            model: None,
        };
        let store = self.0.get()?;
        let id = input.automation_id.trim().to_string();
        let current = blocking(store.clone(), {
            let id = id.clone();
            move |s| s.automation(&id)
        })
        .await?;
        quiver_durable::validate_schedule(
            patch.schedule.as_deref().unwrap_or(&current.schedule),
            patch.tz.as_deref().unwrap_or(&current.tz),
        )
        .map_err(super::store_error)?;
        let mut changes = Vec::new();
        if let Some(p) = &patch.prompt {
            changes.push(format!("prompt → \"{}\"", p.chars().take(80).collect::<String>()));
        }
        if let Some(s) = &patch.schedule {
            changes.push(format!("schedule → '{s}'"));
        }
        if let Some(t) = &patch.tz {
            changes.push(format!("time zone → {t}"));
        }
        if let Some(c) = &patch.cwd {
            changes.push(format!("cwd → {c}"));
        }
        if changes.is_empty() {
            return Err(ToolError::model("nothing to change: give prompt, schedule, timezone or cwd"));
        }
        approve(ctx, &format!("update automation '{}': {}?", current.name, changes.join(", "))).await?;
        let a = blocking(store, move |s| s.update_automation(&id, &patch)).await?;
        Ok(ToolOutput::json(json!({"automation": a})))
    }
}
