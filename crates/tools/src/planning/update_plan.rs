//! `update_plan`: high-level strategy for multi-phase work. The checklist stays
//! the progress surface; the plan is the why and the order.

use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::planning::checklist::{ItemStatus, validate_content};

pub struct UpdatePlan;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePlanInput {
    /// Why the plan looks like this or what changed.
    #[serde(default)]
    pub explanation: Option<String>,
    /// Ordered steps; replaces the previous plan.
    pub plan: Vec<PlanStep>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    pub step: String,
    pub status: ItemStatus,
}

#[derive(Debug, Default)]
pub struct Plan {
    steps: Mutex<(Option<String>, Vec<PlanStep>)>,
}

impl Tool for UpdatePlan {
    type Input = UpdatePlanInput;
    const NAME: &'static str = "update_plan";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Record or revise the high-level plan (ordered steps with status) for complex work.".into()
    }

    async fn run(&self, input: UpdatePlanInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.plan.is_empty() {
            return Err(ToolError::model("`plan` needs at least one step"));
        }
        if input.plan.len() > 50 {
            return Err(ToolError::model("a plan holds at most 50 steps"));
        }
        let mut steps = Vec::with_capacity(input.plan.len());
        for (i, s) in input.plan.into_iter().enumerate() {
            steps.push(PlanStep { step: validate_content(&s.step, &format!("plan[{i}].step"))?, status: s.status });
        }
        let in_progress = steps.iter().filter(|s| s.status == ItemStatus::InProgress).count();
        if in_progress > 1 {
            return Err(ToolError::model(format!("{in_progress} steps are in_progress; at most one may be")));
        }
        let explanation = input.explanation.map(|e| e.trim().to_string()).filter(|e| !e.is_empty());
        let plan = ctx.session.state::<Plan>();
        *plan.steps.lock() = (explanation.clone(), steps.clone());

        let done = steps.iter().filter(|s| s.status == ItemStatus::Completed).count();
        let mut text = format!("Plan updated ({done}/{} steps completed)", steps.len());
        for (i, s) in steps.iter().enumerate() {
            let mark = match s.status {
                ItemStatus::Pending => "[ ]",
                ItemStatus::InProgress => "[~]",
                ItemStatus::Completed => "[x]",
            };
            text.push_str(&format!("\n{mark} {}. {}", i + 1, s.step));
        }
        Ok(ToolOutput::text(text).with_meta("plan", json!(steps)).with_meta("explanation", json!(explanation)))
    }
}
