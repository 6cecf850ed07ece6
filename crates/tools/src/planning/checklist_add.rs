//! `checklist_add`: append one item to the session checklist.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::planning::checklist::{Checklist, Item, ItemStatus, render, validate_content};

pub struct ChecklistAdd;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistAddInput {
    pub content: String,
    /// Default: pending.
    #[serde(default)]
    pub status: Option<ItemStatus>,
}

impl Tool for ChecklistAdd {
    type Input = ChecklistAddInput;
    const NAME: &'static str = "checklist_add";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Append one item to the task checklist.".into()
    }

    async fn run(&self, input: ChecklistAddInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let content = validate_content(&input.content, "content")?;
        let status = input.status.unwrap_or(ItemStatus::Pending);
        let checklist = ctx.session.state::<Checklist>();
        let items = checklist.with(|items, next_id| {
            if *next_id == 0 {
                *next_id = 1;
            }
            if items.len() >= 100 {
                return Err(ToolError::model("a checklist holds at most 100 items"));
            }
            items.push(Item { id: *next_id, content, status });
            *next_id += 1;
            Ok(items.clone())
        })?;
        super::checklist::mirror_to_active_task(&items);
        Ok(render(&items))
    }
}
