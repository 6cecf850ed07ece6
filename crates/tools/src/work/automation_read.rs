//! `automation_read`: one automation and its recent runs (enqueued, manual, missed).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, blocking};

pub struct AutomationRead(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationReadInput {
    /// The automation's id ("auto-2") or name.
    pub automation_id: String,
    /// How many recent runs to show (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Tool for AutomationRead {
    type Input = AutomationReadInput;
    const NAME: &'static str = "automation_read";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    // Before one vocabulary the input was `id` (`automation_id` says whose), and
    // the count was `runs` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] =
        &[InputAlias::rename("id", "automation_id"), InputAlias::rename("runs", "limit")];
    fn description(&self) -> String {
        "Read one automation and its recent runs (enqueued tasks, manual runs, missed due times).".into()
    }

    async fn run(&self, input: AutomationReadInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = self.0.get()?;
        let limit = input.limit.unwrap_or(20).clamp(1, 500);
        let id = input.automation_id.trim().to_string();
        let (a, runs) = blocking(store, move |s| Ok((s.automation(&id)?, s.automation_runs(&id, limit)?))).await?;
        Ok(ToolOutput::json(json!({"automation": a, "recent_runs": runs})))
    }
}
