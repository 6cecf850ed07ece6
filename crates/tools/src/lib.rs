//! quiver's native coding tools. One file per tool: an input struct whose doc
//! comments become the argument schema, and a handler implementing
//! [`quiver_engine::Tool`]. [`register_all`] puts every tool in a registry.

use quiver_engine::Registry;

mod util;
pub mod web;

pub mod apply_patch;
pub mod checklist;
pub mod checklist_add;
pub mod checklist_list;
pub mod checklist_update;
pub mod checklist_write;
pub mod diagnostics;
pub mod edit_file;
pub mod exec_policy;
pub mod exec_shell;
pub mod exec_shell_cancel;
pub mod exec_shell_interact;
pub mod exec_shell_wait;
pub mod fetch_url;
pub mod file_search;
mod git;
pub mod git_diff;
pub mod git_status;
pub mod grep_files;
pub mod handle_read;
pub mod list_dir;
pub mod note;
pub mod project_map;
pub mod read_file;
pub mod remember;
pub mod retrieve_tool_result;
pub mod run_tests;
pub mod shell_jobs;
pub mod speech;
pub mod task_shell_start;
pub mod task_shell_wait;
pub mod update_plan;
pub mod web_search;
pub mod write_file;

/// Where native tools keep state that outlives the workspace. `replay` points
/// these into its scratch directory so re-running a transcript cannot touch the
/// user's real files.
#[derive(Debug, Clone, Default)]
pub struct NativeOptions {
    /// The memory file `remember` appends to (default: found from the environment).
    pub memory_file: Option<std::path::PathBuf>,
}

/// Registers every native tool.
pub fn register_all(registry: &mut Registry) -> anyhow::Result<()> {
    register_all_with(registry, &NativeOptions::default())
}

/// Registers every native tool, with `options`.
pub fn register_all_with(registry: &mut Registry, options: &NativeOptions) -> anyhow::Result<()> {
    registry.register(quiver_engine::tool_search::ToolSearch)?;
    registry.register(read_file::ReadFile)?;
    registry.register(exec_shell::ExecShell)?;
    registry.register(exec_shell_wait::ExecShellWait)?;
    registry.register(exec_shell_interact::ExecShellInteract)?;
    registry.register(exec_shell_cancel::ExecShellCancel)?;
    registry.register(task_shell_start::TaskShellStart)?;
    registry.register(task_shell_wait::TaskShellWait)?;
    registry.register(list_dir::ListDir)?;
    registry.register(write_file::WriteFile)?;
    registry.register(edit_file::EditFile)?;
    registry.register(apply_patch::ApplyPatch)?;
    registry.register(project_map::ProjectMap)?;
    registry.register(git_status::GitStatus)?;
    registry.register(git_diff::GitDiff)?;
    registry.register(diagnostics::Diagnostics)?;
    registry.register(match &options.memory_file {
        Some(file) => remember::Remember::at(file),
        None => remember::Remember::default(),
    })?;
    registry.register(run_tests::RunTests)?;
    registry.register(speech::Speech)?;
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
    native_registry_with(&NativeOptions::default())
}

/// A registry holding every native tool, with `options`.
pub fn native_registry_with(options: &NativeOptions) -> anyhow::Result<Registry> {
    let mut registry = Registry::new();
    register_all_with(&mut registry, options)?;
    Ok(registry)
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
pub(crate) mod test_support;
