//! The session's checklist, shared by the `checklist_*` tools (and, through the
//! deprecated `todo_*` aliases, by transcripts that still use the old names).

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use quiver_engine::ToolOutput;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    Pending,
    InProgress,
    Completed,
}

impl ItemStatus {
    fn mark(self) -> &'static str {
        match self {
            ItemStatus::Pending => "[ ]",
            ItemStatus::InProgress => "[~]",
            ItemStatus::Completed => "[x]",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub id: u32,
    pub content: String,
    pub status: ItemStatus,
}

#[derive(Debug, Default)]
pub struct Checklist {
    inner: Mutex<ChecklistInner>,
}

#[derive(Debug, Default)]
struct ChecklistInner {
    items: Vec<Item>,
    next_id: u32,
}

impl Checklist {
    /// Runs `f` on the items under the lock and renders the result.
    pub fn with<R>(&self, f: impl FnOnce(&mut Vec<Item>, &mut u32) -> R) -> R {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let ChecklistInner { items, next_id } = &mut *inner;
        f(items, next_id)
    }

    pub fn items(&self) -> Vec<Item> {
        self.with(|items, _| items.clone())
    }
}

/// Checks item text: models sometimes send empty strings.
pub fn validate_content(content: &str, field: &str) -> Result<String, quiver_engine::ToolError> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Err(quiver_engine::ToolError::model(format!("`{field}` must not be empty")));
    }
    if trimmed.chars().count() > 500 {
        return Err(quiver_engine::ToolError::model(format!("`{field}` is over 500 characters; keep items short")));
    }
    Ok(trimmed.to_string())
}

/// The checklist as the model sees it, plus the items as metadata.
pub fn render(items: &[Item]) -> ToolOutput {
    let done = items.iter().filter(|i| i.status == ItemStatus::Completed).count();
    let mut text = format!("Checklist ({done}/{} completed)", items.len());
    if items.is_empty() {
        text.push_str(": empty");
    }
    for item in items {
        text.push_str(&format!("\n{} {}. {}", item.status.mark(), item.id, item.content));
    }
    let in_progress = items.iter().filter(|i| i.status == ItemStatus::InProgress).count();
    if in_progress > 1 {
        text.push_str(&format!("\nnote: {in_progress} items are in progress; keep one at a time where you can"));
    }
    ToolOutput::text(text).with_meta("items", json!(items))
}

#[cfg(test)]
#[path = "checklist_tests.rs"]
mod tests;
