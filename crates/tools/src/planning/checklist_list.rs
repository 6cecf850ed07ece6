//! `checklist_list`: show the session checklist.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::planning::checklist::{Checklist, render};

pub struct ChecklistList;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistListInput {}

impl Tool for ChecklistList {
    type Input = ChecklistListInput;
    const NAME: &'static str = "checklist_list";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Show the task checklist with ids and statuses.".into()
    }

    async fn run(&self, _input: ChecklistListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(render(&ctx.session.state::<Checklist>().items()))
    }
}
