//! quiver's native coding tools. One file per tool: an input struct whose doc
//! comments become the argument schema, and a handler implementing
//! [`quiver_engine::Tool`]. [`register_all`] puts every tool in a registry.

use quiver_engine::Registry;

mod git_settings_write;
mod util;

/// The one helper every child process starts through (gate → sandbox → env → containment).
pub mod process;

// Tools live in folders by family, one file per tool; helpers sit beside
// their family.
pub mod diagnostics;
pub mod evidence;
pub mod file;
pub mod git;
pub mod media;
pub mod memory;
pub mod planning;
pub mod search;
pub mod shell;
pub mod web;
pub mod work;

/// Where native tools keep state that outlives the workspace. `replay` points
/// these into its scratch directory so re-running a transcript cannot touch the
/// user's real files.
#[derive(Debug, Clone, Default)]
pub struct NativeOptions {
    /// The memory file `remember` appends to (default: found from the environment).
    pub memory_file: Option<std::path::PathBuf>,
    /// The durable store's directory for tasks and gates (default: `$QUIVER_WORK_DIR`,
    /// else `$QUIVER_STATE_DIR/work`, else the platform's state directory).
    pub work_dir: Option<std::path::PathBuf>,
}

/// Registers every native tool.
pub fn register_all(registry: &mut Registry) -> anyhow::Result<()> {
    register_all_with(registry, &NativeOptions::default())
}

/// Registers every native tool, with `options`.
pub fn register_all_with(registry: &mut Registry, options: &NativeOptions) -> anyhow::Result<()> {
    registry.register(quiver_engine::tool_search::ToolSearch)?;
    registry.register(file::read_file::ReadFile)?;
    registry.register(shell::exec_shell::ExecShell)?;
    registry.register(shell::exec_shell_wait::ExecShellWait)?;
    registry.register(shell::exec_shell_interact::ExecShellInteract)?;
    registry.register(shell::exec_shell_cancel::ExecShellCancel)?;
    registry.register(shell::task_shell_start::TaskShellStart)?;
    let work = work::WorkStore::new(options.work_dir.clone());
    registry.register(shell::task_shell_wait::TaskShellWait(work.clone()))?;
    registry.register(file::list_dir::ListDir)?;
    registry.register(file::write_file::WriteFile)?;
    registry.register(file::edit_file::EditFile)?;
    registry.register(file::fim_edit::FimEdit)?;
    registry.register(file::apply_patch::ApplyPatch)?;
    registry.register(file::project_map::ProjectMap)?;
    registry.register(git::git_status::GitStatus)?;
    registry.register(git::git_diff::GitDiff)?;
    registry.register(diagnostics::diagnostics::Diagnostics)?;
    registry.register(match &options.memory_file {
        Some(file) => memory::remember::Remember::at(file),
        None => memory::remember::Remember::default(),
    })?;
    registry.register(diagnostics::run_tests::RunTests)?;
    registry.register(media::speech::Speech)?;
    registry.register(search::grep_files::GrepFiles)?;
    registry.register(search::file_search::FileSearch)?;
    registry.register(planning::checklist_write::ChecklistWrite)?;
    registry.register(planning::checklist_add::ChecklistAdd)?;
    registry.register(planning::checklist_update::ChecklistUpdate)?;
    registry.register(planning::checklist_list::ChecklistList)?;
    registry.register(planning::update_plan::UpdatePlan)?;
    registry.register(planning::note::Note)?;
    registry.register(evidence::retrieve_tool_result::RetrieveToolResult)?;
    registry.register(evidence::handle_read::HandleRead)?;
    registry.register(web::fetch_url::FetchUrl)?;
    registry.register(web::web_search::WebSearch)?;
    registry.register(work::task_create::TaskCreate(work.clone()))?;
    registry.register(work::task_list::TaskList(work.clone()))?;
    registry.register(work::task_read::TaskRead(work.clone()))?;
    registry.register(work::task_cancel::TaskCancel(work.clone()))?;
    registry.register(work::task_gate_run::TaskGateRun(work.clone()))?;
    registry.register(work::pr_attempt_record::PrAttemptRecord(work.clone()))?;
    registry.register(work::pr_attempt_list::PrAttemptList(work.clone()))?;
    registry.register(work::pr_attempt_read::PrAttemptRead(work.clone()))?;
    registry.register(work::pr_attempt_preflight::PrAttemptPreflight(work.clone()))?;
    registry.register(work::automation_create::AutomationCreate(work.clone()))?;
    registry.register(work::automation_list::AutomationList(work.clone()))?;
    registry.register(work::automation_read::AutomationRead(work.clone()))?;
    registry.register(work::automation_update::AutomationUpdate(work.clone()))?;
    registry.register(work::automation_pause::AutomationPause(work.clone()))?;
    registry.register(work::automation_resume::AutomationResume(work.clone()))?;
    registry.register(work::automation_delete::AutomationDelete(work.clone()))?;
    registry.register(work::automation_run::AutomationRun(work.clone()))?;
    let gh = work::github::GhCli::new(None);
    registry.register(work::github_issue_context::GithubIssueContext(work.clone(), gh.clone()))?;
    registry.register(work::github_pr_context::GithubPrContext(work.clone(), gh.clone()))?;
    registry.register(work::github_comment::GithubComment(work.clone(), gh.clone()))?;
    registry.register(work::github_close_issue::GithubCloseIssue(work.clone(), gh.clone()))?;
    registry.register(work::github_issue_list::GithubIssueList(gh.clone()))?;
    registry.register(work::github_pr_list::GithubPrList(gh.clone()))?;
    registry.register(work::github_create_issue::GithubCreateIssue(work.clone(), gh.clone()))?;
    registry.register(work::github_create_pr::GithubCreatePr(work.clone(), gh.clone()))?;
    registry.register(work::github_close_pr::GithubClosePr(work, gh))?;
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

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod hostile_tests;

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod schema_minimums_tests;

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod search_load_tests;
