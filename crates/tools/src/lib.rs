//! quiver's native coding tools. One file per tool: an input struct whose doc
//! comments become the argument schema, and a handler implementing
//! [`quiver_engine::Tool`]. [`register_all`] puts every tool in a registry.

use quiver_engine::Registry;

mod util;
mod web;

pub mod apply_patch;
pub mod checklist;
pub mod fetch_url;
pub mod handle_read;
pub mod checklist_add;
pub mod checklist_list;
pub mod checklist_update;
pub mod checklist_write;
pub mod file_search;
pub mod grep_files;
pub mod note;
pub mod read_file;
pub mod retrieve_tool_result;
pub mod update_plan;
pub mod web_search;

/// Registers every native tool.
pub fn register_all(registry: &mut Registry) -> anyhow::Result<()> {
    registry.register(quiver_engine::tool_search::ToolSearch)?;
    registry.register(read_file::ReadFile)?;
    registry.register(grep_files::GrepFiles)?;
    registry.register(file_search::FileSearch)?;
    registry.register(checklist_write::ChecklistWrite)?;
    registry.register(checklist_add::ChecklistAdd)?;
    registry.register(checklist_update::ChecklistUpdate)?;
    registry.register(checklist_list::ChecklistList)?;
    registry.register(update_plan::UpdatePlan)?;
    registry.register(note::Note)?;
    registry.register(retrieve_tool_result::RetrieveToolResult)?;
    registry.register(handle_read::HandleRead)?;
    registry.register(fetch_url::FetchUrl)?;
    registry.register(web_search::WebSearch)?;
    Ok(())
}

/// A registry holding every native tool.
pub fn native_registry() -> anyhow::Result<Registry> {
    let mut registry = Registry::new();
    register_all(&mut registry)?;
    Ok(registry)
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
pub(crate) mod test_support;
