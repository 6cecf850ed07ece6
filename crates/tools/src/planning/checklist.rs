//! The session's checklist, shared by the `checklist_*` tools (and, through the
//! deprecated `todo_*` aliases, by transcripts that still use the old names).

use parking_lot::Mutex;
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
        let mut inner = self.inner.lock();
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

/// The checklist is subordinate to the durable task this process runs for (the
/// task pool sets `QUIVER_TASK_ID`): each change is copied to that task, so
/// `task_read` shows it. A store that cannot be written is logged, not fatal:
/// the session's checklist is the model's working copy either way.
pub fn mirror_to_active_task(items: &[Item]) {
    let Some(task) = crate::work::active_task() else { return };
    static STORE: std::sync::OnceLock<std::sync::Arc<crate::work::WorkStore>> = std::sync::OnceLock::new();
    let work = STORE.get_or_init(|| crate::work::WorkStore::new(None));
    let rows: Vec<quiver_durable::ChecklistItem> = items
        .iter()
        .map(|i| quiver_durable::ChecklistItem {
            idx: i64::from(i.id),
            text: i.content.clone(),
            status: match i.status {
                ItemStatus::Pending => "pending",
                ItemStatus::InProgress => "in_progress",
                ItemStatus::Completed => "completed",
            }
            .to_string(),
        })
        .collect();
    let written = work
        .get()
        .map_err(|e| format!("{e}"))
        .and_then(|store| store.set_checklist(&task, &rows).map_err(|e| e.to_string()));
    if let Err(e) = written {
        tracing::warn!(%task, error = %e, "could not copy the checklist to the active task");
    }
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
