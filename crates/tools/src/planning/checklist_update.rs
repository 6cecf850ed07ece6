//! `checklist_update`: change one item's status or text.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::planning::checklist::{Checklist, ItemStatus, render, validate_content};

pub struct ChecklistUpdate;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistUpdateInput {
    /// Item id as shown by the checklist tools.
    pub item_id: u32,
    #[serde(default)]
    pub status: Option<ItemStatus>,
    #[serde(default)]
    pub content: Option<String>,
}

impl Tool for ChecklistUpdate {
    type Input = ChecklistUpdateInput;
    const NAME: &'static str = "checklist_update";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    // Before one vocabulary the input was `id`; `item_id` says whose.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "item_id")];

    fn description(&self) -> String {
        "Update one checklist item's status or text by id.".into()
    }

    async fn run(&self, input: ChecklistUpdateInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.status.is_none() && input.content.is_none() {
            return Err(ToolError::model("nothing to update: give `status`, `content` or both"));
        }
        let content = input.content.as_deref().map(|c| validate_content(c, "content")).transpose()?;
        let checklist = ctx.session.state::<Checklist>();
        let items = checklist.with(|items, _| {
            let known: Vec<String> = items.iter().map(|i| i.id.to_string()).collect();
            let Some(item) = items.iter_mut().find(|i| i.id == input.item_id) else {
                return Err(ToolError::model(if known.is_empty() {
                    format!("no checklist item {}: the checklist is empty", input.item_id)
                } else {
                    format!("no checklist item {}; ids are {}", input.item_id, known.join(", "))
                }));
            };
            if let Some(status) = input.status {
                item.status = status;
            }
            if let Some(content) = content {
                item.content = content;
            }
            Ok(items.clone())
        })?;
        super::checklist::mirror_to_active_task(&items);
        Ok(render(&items))
    }
}
