//! Durable work: tasks that outlive the request that made them, with their
//! verification gates (and, in sibling files, PR attempts, GitHub context and
//! guarded GitHub writes, and automations). The records live in
//! `quiver-durable`'s store; these tools are the model's view.
//!
//! The *active task* is the one this process runs for: the task pool starts each
//! task's `quiver exec` with `QUIVER_TASK_ID` (and `QUIVER_WORK_DIR`, the store),
//! so gates, attempts and checklists land on that task without the model having
//! to name it.

pub mod automation_create;
pub mod automation_delete;
pub mod automation_list;
pub mod automation_pause;
pub mod automation_read;
pub mod automation_resume;
pub mod automation_run;
pub mod automation_update;
pub mod github;
pub mod github_close_issue;
pub mod github_close_pr;
pub mod github_comment;
mod github_create;
pub mod github_create_issue;
pub mod github_create_pr;
pub mod github_issue_context;
pub mod github_issue_list;
pub mod github_pr_context;
pub mod github_pr_list;
mod github_write;
mod pr_attempt;
pub mod pr_attempt_list;
pub mod pr_attempt_preflight;
pub mod pr_attempt_read;
pub mod pr_attempt_record;
pub mod task_cancel;
pub mod task_create;
pub mod task_gate_run;
pub mod task_list;
pub mod task_read;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use quiver_durable::{Store, StoreError};
use quiver_engine::{Mode, ToolContext, ToolError};

/// The variable naming the task this process runs for.
pub const ACTIVE_TASK_ENV: &str = "QUIVER_TASK_ID";
/// The variable naming the store's directory (else [`Store::default_dir`]).
pub const WORK_DIR_ENV: &str = "QUIVER_WORK_DIR";

/// The store, opened on first use and shared by every work tool of a registry.
#[derive(Debug, Default)]
pub struct WorkStore {
    dir: Option<PathBuf>,
    store: OnceLock<Result<Store, String>>,
}

impl WorkStore {
    /// `dir` pins the store (tests, embedders); otherwise `$QUIVER_WORK_DIR`, else
    /// `$QUIVER_STATE_DIR/work`, else the platform's state directory.
    pub fn new(dir: Option<PathBuf>) -> Arc<WorkStore> {
        Arc::new(WorkStore { dir, store: OnceLock::new() })
    }

    pub fn get(&self) -> Result<Store, ToolError> {
        self.store
            .get_or_init(|| {
                let dir = self
                    .dir
                    .clone()
                    .or_else(|| std::env::var_os(WORK_DIR_ENV).map(PathBuf::from))
                    .or_else(Store::default_dir)
                    .ok_or_else(|| "no state directory for durable tasks: set QUIVER_STATE_DIR".to_string())?;
                Store::open(&dir).map_err(|e| format!("cannot open the durable store in {}: {e}", dir.display()))
            })
            .clone()
            .map_err(ToolError::model)
    }
}

/// The task this process runs for, if any.
pub fn active_task() -> Option<String> {
    std::env::var(ACTIVE_TASK_ENV).ok().filter(|v| !v.trim().is_empty())
}

/// Runs a store operation off the async workers (SQLite syncs to disk).
pub async fn blocking<T: Send + 'static>(
    store: Store,
    f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(move || f(&store)).await.map_err(|e| ToolError::Fatal(e.into()))?.map_err(store_error)
}

/// Store errors are the model's to act on (a wrong id, a finished task), except
/// a broken database, which is fatal.
pub fn store_error(e: StoreError) -> ToolError {
    match e {
        StoreError::Sql(_) | StoreError::Io { .. } | StoreError::Corrupt(_) | StoreError::TooNew { .. } => {
            ToolError::Fatal(anyhow::anyhow!("{e}"))
        }
        other => ToolError::model(other.to_string()),
    }
}

/// Modes ordered by what they allow: a task never runs looser than the session
/// that created it.
pub fn mode_rank(mode: Mode) -> u8 {
    match mode {
        Mode::Plan => 0,
        Mode::Agent => 1,
        Mode::Yolo => 2,
    }
}

/// The shape of every approval-required change to one automation: look it up
/// (a wrong id fails before anyone is asked), ask with the question `ask` words
/// from what it is now, then apply `act` to the store.
pub async fn change_automation<T: Send + 'static>(
    work: &WorkStore,
    ctx: &ToolContext,
    id: &str,
    ask: impl FnOnce(&quiver_durable::Automation) -> String,
    act: impl FnOnce(&Store, &str) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, ToolError> {
    let store = work.get()?;
    let id = id.trim().to_string();
    let lookup = id.clone();
    let current = blocking(store.clone(), move |s| s.automation(&lookup)).await?;
    approve(ctx, &ask(&current)).await?;
    blocking(store, move |s| act(s, &id)).await
}

/// Approval for a durable-work write that changes what runs or what others
/// see (task cancels, automation changes, GitHub writes): asked in agent mode,
/// given in yolo (the user chose to be asked nothing); plan mode never gets here
/// (the gate refuses tools that persist state).
pub async fn approve(ctx: &ToolContext, question: &str) -> Result<(), ToolError> {
    if ctx.mode() == Mode::Yolo {
        return Ok(());
    }
    ctx.ask(question).await
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
#[path = "work_tests.rs"]
mod tests;

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
#[path = "github_tests.rs"]
mod github_tests;

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
#[path = "github_list_create_tests.rs"]
mod github_list_create_tests;
