//! `checklist_write`: replace the session checklist in one call.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::planning::checklist::{Checklist, Item, ItemStatus, render, validate_content};

pub struct ChecklistWrite;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistWriteInput {
    /// The full list, in order; replaces the current one.
    pub items: Vec<NewItem>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewItem {
    pub content: String,
    pub status: ItemStatus,
}

impl Tool for ChecklistWrite {
    type Input = ChecklistWriteInput;
    const NAME: &'static str = "checklist_write";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Replace the task checklist (pending/in_progress/completed) to track multi-step work.".into()
    }

    async fn run(&self, input: ChecklistWriteInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.items.len() > 100 {
            return Err(ToolError::model("a checklist holds at most 100 items"));
        }
        let mut new_items = Vec::with_capacity(input.items.len());
        for (i, item) in input.items.into_iter().enumerate() {
            let content = validate_content(&item.content, &format!("items[{i}].content"))?;
            new_items.push(Item { id: i as u32 + 1, content, status: item.status });
        }
        let checklist = ctx.session.state::<Checklist>();
        let items = checklist.with(|items, next_id| {
            *next_id = new_items.len() as u32 + 1;
            *items = new_items;
            items.clone()
        });
        super::checklist::mirror_to_active_task(&items);
        Ok(render(&items))
    }
}
