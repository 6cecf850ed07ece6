//! Tasks: an agent run that outlives the request that made it.
//!
//! States: `queued → running → succeeded | failed | cancelled | interrupted`, and
//! `queued → cancelled`. A worker claims a queued task under a lease it renews;
//! a task whose lease lapsed (its worker died) becomes `interrupted` when any
//! pool next recovers, never silently re-run. Only the worker that holds the
//! lease can finish a task, so a worker that comes back late cannot overwrite
//! what recovery decided.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::{Timestamp, rfc3339};
use crate::error::StoreError;
use crate::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum TaskState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    Interrupted,
}

impl TaskState {
    pub const ALL: [TaskState; 6] = [
        TaskState::Queued,
        TaskState::Running,
        TaskState::Succeeded,
        TaskState::Failed,
        TaskState::Cancelled,
        TaskState::Interrupted,
    ];

    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn is_final(self) -> bool {
        !matches!(self, TaskState::Queued | TaskState::Running)
    }

    pub fn parse(s: &str) -> Result<TaskState, StoreError> {
        TaskState::ALL.into_iter().find(|st| st.as_str().eq_ignore_ascii_case(s.trim())).ok_or_else(|| {
            let all: Vec<&str> = TaskState::ALL.iter().map(|s| s.as_str()).collect();
            StoreError::Invalid(format!("unknown task state '{s}'; expected one of: {}", all.join(", ")))
        })
    }
}

/// What `task_create` asks for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NewTask {
    pub prompt: String,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub model: Option<String>,
    #[serde(default)]
    pub checklist: Vec<String>,
    #[serde(skip)]
    pub automation_id: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    pub id: String,
    pub prompt: String,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub model: Option<String>,
    pub state: TaskState,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub cancel_requested: bool,
    pub result: Option<String>,
    pub error: Option<String>,
    pub session_id: Option<String>,
    pub transcript: Option<String>,
    pub automation_id: Option<String>,
    #[serde(skip)]
    pub(crate) owner: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskEvent {
    pub seq: i64,
    pub at: String,
    pub kind: String,
    pub data: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChecklistItem {
    pub idx: i64,
    pub text: String,
    pub status: String,
}

/// Everything `task_read` shows.
#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    pub task: Task,
    pub checklist: Vec<ChecklistItem>,
    pub timeline: Vec<TaskEvent>,
}

#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    pub states: Vec<TaskState>,
    pub limit: Option<usize>,
}

pub(crate) fn task_id(n: i64) -> String {
    format!("task-{n}")
}

/// Accepts `task-7` or `7`.
pub(crate) fn parse_id(kind: &'static str, prefix: &str, id: &str) -> Result<i64, StoreError> {
    let raw = id.trim();
    let digits = raw.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')).unwrap_or(raw);
    digits
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| StoreError::Invalid(format!("'{id}' is not a {kind} id (expected {prefix}-N)")))
}

const TASK_COLUMNS: &str = "id, prompt, cwd, mode, model, state, created_at, started_at, finished_at, cancel_requested, result, error, session_id, transcript, automation_id, owner";

fn task_from_row(r: &Row<'_>) -> rusqlite::Result<Task> {
    let state: String = r.get(5)?;
    Ok(Task {
        id: task_id(r.get(0)?),
        prompt: r.get(1)?,
        cwd: r.get(2)?,
        mode: r.get(3)?,
        model: r.get(4)?,
        state: TaskState::parse(&state).unwrap_or(TaskState::Failed),
        created_at: rfc3339(r.get(6)?),
        started_at: r.get::<_, Option<i64>>(7)?.map(rfc3339),
        finished_at: r.get::<_, Option<i64>>(8)?.map(rfc3339),
        cancel_requested: r.get::<_, i64>(9)? != 0,
        result: r.get(10)?,
        error: r.get(11)?,
        session_id: r.get(12)?,
        transcript: r.get(13)?,
        automation_id: r.get::<_, Option<i64>>(14)?.map(|n| format!("auto-{n}")),
        owner: r.get(15)?,
    })
}

pub(crate) fn load_task(conn: &Connection, id: i64) -> Result<Task, StoreError> {
    conn.query_row(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"), [id], task_from_row)
        .optional()?
        .ok_or_else(|| StoreError::NotFound { kind: "task", id: task_id(id) })
}

/// Appends one event to a task's timeline inside the caller's transaction.
pub(crate) fn append_event(
    tx: &Transaction<'_>,
    task: i64,
    at: Timestamp,
    kind: &str,
    data: &Value,
) -> Result<i64, StoreError> {
    let seq: i64 =
        tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM task_events WHERE task_id = ?1", [task], |r| r.get(0))?;
    tx.execute(
        "INSERT INTO task_events (task_id, seq, at, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![task, seq, at, kind, serde_json::to_string(data)?],
    )?;
    Ok(seq)
}

pub(crate) fn insert_task(tx: &Transaction<'_>, new: &NewTask, now: Timestamp) -> Result<i64, StoreError> {
    if new.prompt.trim().is_empty() {
        return Err(StoreError::Invalid("a task needs a non-empty prompt".into()));
    }
    tx.execute(
        "INSERT INTO tasks (prompt, cwd, mode, model, state, created_at, automation_id) VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?6)",
        params![new.prompt, new.cwd, new.mode, new.model, now, new.automation_id],
    )?;
    let id = tx.last_insert_rowid();
    for (i, text) in new.checklist.iter().enumerate() {
        tx.execute(
            "INSERT INTO checklist_items (task_id, idx, text, status) VALUES (?1, ?2, ?3, 'pending')",
            params![id, i as i64 + 1, text],
        )?;
    }
    append_event(tx, id, now, "state", &serde_json::json!({"state": "queued"}))?;
    Ok(id)
}

impl Store {
    /// Enqueues a task; returns it in state `queued`.
    pub fn create_task(&self, new: &NewTask) -> Result<Task, StoreError> {
        let now = self.now();
        let id = self.write(|tx| insert_task(tx, new, now))?;
        self.read(|c| load_task(c, id))
    }

    pub fn task(&self, id: &str) -> Result<Task, StoreError> {
        let n = parse_id("task", "task", id)?;
        self.read(|c| load_task(c, n))
    }

    /// The task, its checklist and its whole timeline.
    pub fn read_task(&self, id: &str) -> Result<TaskView, StoreError> {
        let n = parse_id("task", "task", id)?;
        self.read(|c| {
            let task = load_task(c, n)?;
            let mut stmt =
                c.prepare("SELECT idx, text, status FROM checklist_items WHERE task_id = ?1 ORDER BY idx")?;
            let checklist = stmt
                .query_map([n], |r| Ok(ChecklistItem { idx: r.get(0)?, text: r.get(1)?, status: r.get(2)? }))?
                .collect::<Result<Vec<_>, _>>()?;
            let mut stmt = c.prepare("SELECT seq, at, kind, data FROM task_events WHERE task_id = ?1 ORDER BY seq")?;
            let rows = stmt
                .query_map([n], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            let mut timeline = Vec::with_capacity(rows.len());
            for (seq, at, kind, data) in rows {
                timeline.push(TaskEvent { seq, at: rfc3339(at), kind, data: serde_json::from_str(&data)? });
            }
            Ok(TaskView { task, checklist, timeline })
        })
    }

    /// Newest first.
    pub fn list_tasks(&self, filter: &TaskFilter) -> Result<Vec<Task>, StoreError> {
        self.read(|c| {
            let mut sql = format!("SELECT {TASK_COLUMNS} FROM tasks");
            if !filter.states.is_empty() {
                let states: Vec<String> = filter.states.iter().map(|s| format!("'{}'", s.as_str())).collect();
                sql.push_str(&format!(" WHERE state IN ({})", states.join(",")));
            }
            sql.push_str(" ORDER BY id DESC");
            if let Some(limit) = filter.limit {
                sql.push_str(&format!(" LIMIT {limit}"));
            }
            let mut stmt = c.prepare(&sql)?;
            let tasks = stmt.query_map([], task_from_row)?.collect::<Result<Vec<_>, _>>()?;
            Ok(tasks)
        })
    }

    /// Claims the oldest queued task for `owner`, holding it until `lease_ms`
    /// from now unless renewed with [`Store::renew_lease`].
    pub fn claim_next(&self, owner: &str, lease_ms: i64) -> Result<Option<Task>, StoreError> {
        // An idle pool asks several times a second: answer "nothing" from a read
        // instead of taking the database's write lock each time.
        let queued: bool = self.read(|c| {
            Ok(c.query_row("SELECT EXISTS(SELECT 1 FROM tasks WHERE state = 'queued')", [], |r| r.get(0))?)
        })?;
        if !queued {
            return Ok(None);
        }
        let now = self.now();
        let claimed = self.write(|tx| {
            let id: Option<i64> = tx
                .query_row("SELECT id FROM tasks WHERE state = 'queued' ORDER BY id LIMIT 1", [], |r| r.get(0))
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            tx.execute(
                "UPDATE tasks SET state = 'running', owner = ?2, lease_until = ?3, started_at = ?4 WHERE id = ?1",
                params![id, owner, now + lease_ms, now],
            )?;
            append_event(tx, id, now, "state", &serde_json::json!({"state": "running", "worker": owner}))?;
            Ok(Some(id))
        })?;
        match claimed {
            Some(id) => Ok(Some(self.read(|c| load_task(c, id))?)),
            None => Ok(None),
        }
    }

    /// Extends the lease on every task `owner` runs; returns how many it holds.
    pub fn renew_lease(&self, owner: &str, lease_ms: i64) -> Result<usize, StoreError> {
        let now = self.now();
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE tasks SET lease_until = ?2 WHERE owner = ?1 AND state = 'running'",
                params![owner, now + lease_ms],
            )?)
        })
    }

    /// Marks every running task whose lease lapsed as `interrupted` (its worker
    /// died: a crash, a kill -9, a reboot). Returns the ids.
    pub fn recover_interrupted(&self) -> Result<Vec<String>, StoreError> {
        let now = self.now();
        self.write(|tx| {
            let ids: Vec<i64> = {
                let mut stmt = tx.prepare("SELECT id FROM tasks WHERE state = 'running' AND (lease_until IS NULL OR lease_until < ?1)")?;
                stmt.query_map([now], |r| r.get(0))?.collect::<Result<Vec<_>, _>>()?
            };
            for id in &ids {
                tx.execute(
                    "UPDATE tasks SET state = 'interrupted', finished_at = ?2, error = 'the worker running this task stopped before it finished (quiver exited or was killed)' WHERE id = ?1",
                    params![id, now],
                )?;
                append_event(tx, *id, now, "state", &serde_json::json!({"state": "interrupted"}))?;
            }
            Ok(ids.into_iter().map(task_id).collect())
        })
    }

    /// Records what the run produced, under the worker's lease.
    pub fn finish_task(
        &self,
        id: &str,
        owner: &str,
        state: TaskState,
        result: Option<&str>,
        error: Option<&str>,
    ) -> Result<Task, StoreError> {
        if !state.is_final() {
            return Err(StoreError::Invalid(format!("'{}' is not a final state", state.as_str())));
        }
        let n = parse_id("task", "task", id)?;
        let now = self.now();
        self.write(|tx| {
            let task = load_task(tx, n)?;
            if task.state != TaskState::Running || task.owner.as_deref() != Some(owner) {
                return Err(StoreError::Conflict(format!(
                    "{id} is {} and not held by this worker; its outcome was already decided",
                    task.state.as_str()
                )));
            }
            tx.execute(
                "UPDATE tasks SET state = ?2, finished_at = ?3, result = ?4, error = ?5, lease_until = NULL WHERE id = ?1",
                params![n, state.as_str(), now, result, error],
            )?;
            append_event(tx, n, now, "state", &serde_json::json!({"state": state.as_str(), "error": error}))?;
            Ok(())
        })?;
        self.read(|c| load_task(c, n))
    }

    /// Cancels a queued task at once; asks a running one to stop (its worker sees
    /// `cancel_requested` and finishes it as `cancelled`). A finished task is a
    /// conflict, not a silent success.
    pub fn cancel_task(&self, id: &str) -> Result<Task, StoreError> {
        let n = parse_id("task", "task", id)?;
        let now = self.now();
        self.write(|tx| {
            let task = load_task(tx, n)?;
            match task.state {
                TaskState::Queued => {
                    tx.execute(
                        "UPDATE tasks SET state = 'cancelled', finished_at = ?2, cancel_requested = 1 WHERE id = ?1",
                        params![n, now],
                    )?;
                    append_event(tx, n, now, "state", &serde_json::json!({"state": "cancelled"}))?;
                }
                TaskState::Running => {
                    tx.execute("UPDATE tasks SET cancel_requested = 1 WHERE id = ?1", [n])?;
                    append_event(tx, n, now, "cancel_requested", &serde_json::json!({}))?;
                }
                done => {
                    return Err(StoreError::Conflict(format!(
                        "{id} already ended ({}); nothing to cancel",
                        done.as_str()
                    )));
                }
            }
            Ok(())
        })?;
        self.read(|c| load_task(c, n))
    }

    /// Appends one event (a turn, a tool call, a note) to a task's timeline.
    pub fn append_task_event(&self, id: &str, kind: &str, data: &Value) -> Result<i64, StoreError> {
        let n = parse_id("task", "task", id)?;
        let now = self.now();
        self.write(|tx| {
            load_task(tx, n)?;
            append_event(tx, n, now, kind, data)
        })
    }

    /// Links a task to the session transcript its run writes.
    pub fn set_task_session(&self, id: &str, session_id: &str, transcript: &str) -> Result<(), StoreError> {
        let n = parse_id("task", "task", id)?;
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE tasks SET session_id = ?2, transcript = ?3 WHERE id = ?1",
                params![n, session_id, transcript],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound { kind: "task", id: task_id(n) });
            }
            Ok(())
        })
    }

    /// Replaces a task's checklist (what `checklist_write` does to the active task).
    pub fn set_checklist(&self, id: &str, items: &[ChecklistItem]) -> Result<(), StoreError> {
        let n = parse_id("task", "task", id)?;
        let now = self.now();
        self.write(|tx| {
            load_task(tx, n)?;
            tx.execute("DELETE FROM checklist_items WHERE task_id = ?1", [n])?;
            for item in items {
                tx.execute(
                    "INSERT INTO checklist_items (task_id, idx, text, status) VALUES (?1, ?2, ?3, ?4)",
                    params![n, item.idx, item.text, item.status],
                )?;
            }
            append_event(tx, n, now, "checklist", &serde_json::to_value(items)?)?;
            Ok(())
        })
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
