//! Automations: prompts on a cron schedule, in a time zone, each run a normal task.
//!
//! A tick (the pool calls it about once a second) enqueues one task per due time.
//! When quiver was not running at a due time, that run is recorded as *missed* and
//! reported, not fired late: after a week away, a job due every minute would
//! otherwise start thousands of agents at once. A due time within the grace
//! window of the tick still runs, so a tick that is merely late does not miss.

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::clock::{Timestamp, rfc3339};
use crate::error::StoreError;
use crate::store::Store;
use crate::task::{NewTask, Task, insert_task, load_task, parse_id, task_id};

/// At most this many missed due times are counted one by one per tick; the rest
/// only move the schedule forward.
const MAX_COUNTED_MISSES: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AutomationState {
    Active,
    Paused,
}

#[derive(Debug, Clone, Default)]
pub struct NewAutomation {
    pub name: String,
    pub prompt: String,
    /// Five fields (minute granularity), six (seconds first) or an alias such as `@hourly`.
    pub schedule: String,
    /// An IANA time zone name; UTC when None.
    pub tz: Option<String>,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub model: Option<String>,
}

/// Fields to change; None keeps the current value.
#[derive(Debug, Clone, Default)]
pub struct AutomationPatch {
    pub prompt: Option<String>,
    pub schedule: Option<String>,
    pub tz: Option<String>,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub model: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Automation {
    pub id: String,
    pub name: String,
    pub prompt: String,
    pub schedule: String,
    /// The schedule in words, so a person can check it means what they meant.
    pub describes: String,
    pub tz: String,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub model: Option<String>,
    pub state: AutomationState,
    pub next_due: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOutcome {
    Enqueued,
    Missed,
    Manual,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AutomationRun {
    pub due_at: String,
    pub outcome: RunOutcome,
    /// For a missed entry: how many due times it stands for.
    pub missed_count: i64,
    pub task_id: Option<String>,
    pub at: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TickReport {
    /// (automation, task, due time)
    pub enqueued: Vec<(String, String, String)>,
    /// (automation, due times missed, first, last)
    pub missed: Vec<(String, i64, String, String)>,
}

fn automation_id(n: i64) -> String {
    format!("auto-{n}")
}

/// Checks a schedule and a time zone without storing anything (so a tool can
/// refuse a bad one before asking anybody to approve it).
pub fn validate_schedule(schedule: &str, tz: &str) -> Result<(), StoreError> {
    parse_schedule(schedule, tz).map(|_| ())
}

/// Parses and checks a schedule and a time zone together.
pub(crate) fn parse_schedule(schedule: &str, tz: &str) -> Result<(Cron, Tz), StoreError> {
    let cron = Cron::from_str(schedule.trim()).map_err(|e| {
        StoreError::Invalid(format!(
            "invalid schedule '{schedule}': {e}; use five cron fields (minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5') or an alias like '@hourly'"
        ))
    })?;
    let zone = Tz::from_str(tz.trim()).map_err(|_| {
        StoreError::Invalid(format!(
            "unknown time zone '{tz}'; use an IANA name such as 'UTC', 'Europe/Berlin' or 'America/New_York'"
        ))
    })?;
    Ok((cron, zone))
}

/// The first due time strictly after `t`.
fn next_after(cron: &Cron, tz: Tz, t: Timestamp) -> Result<Option<Timestamp>, StoreError> {
    let Some(utc) = DateTime::<Utc>::from_timestamp_millis(t) else {
        return Err(StoreError::Invalid(format!("time {t} is out of range")));
    };
    let local = tz.from_utc_datetime(&utc.naive_utc());
    match cron.find_next_occurrence(&local, false) {
        Ok(next) => Ok(Some(next.with_timezone(&Utc).timestamp_millis())),
        // A pattern with no future match (e.g. Feb 30) is not an error here: it never fires.
        Err(_) => Ok(None),
    }
}

const COLUMNS: &str = "id, name, prompt, schedule, tz, cwd, mode, model, state, next_due, created_at, updated_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<Automation> {
    let schedule: String = r.get(3)?;
    let describes = Cron::from_str(&schedule).map(|c| c.describe()).unwrap_or_default();
    Ok(Automation {
        id: automation_id(r.get(0)?),
        name: r.get(1)?,
        prompt: r.get(2)?,
        schedule,
        describes,
        tz: r.get(4)?,
        cwd: r.get(5)?,
        mode: r.get(6)?,
        model: r.get(7)?,
        state: if r.get::<_, String>(8)? == "paused" { AutomationState::Paused } else { AutomationState::Active },
        next_due: r.get::<_, Option<i64>>(9)?.map(rfc3339),
        created_at: rfc3339(r.get(10)?),
        updated_at: rfc3339(r.get(11)?),
    })
}

/// Finds an automation by `auto-N` or by its name.
fn lookup(c: &Connection, key: &str) -> Result<i64, StoreError> {
    if let Ok(n) = parse_id("automation", "auto", key) {
        let found: Option<i64> =
            c.query_row("SELECT id FROM automations WHERE id = ?1", [n], |r| r.get(0)).optional()?;
        if let Some(id) = found {
            return Ok(id);
        }
    }
    c.query_row("SELECT id FROM automations WHERE name = ?1", [key.trim()], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::NotFound { kind: "automation", id: key.to_string() })
}

fn load(c: &Connection, id: i64) -> Result<Automation, StoreError> {
    Ok(c.query_row(&format!("SELECT {COLUMNS} FROM automations WHERE id = ?1"), [id], from_row)?)
}

impl Store {
    pub fn create_automation(&self, new: &NewAutomation) -> Result<Automation, StoreError> {
        if new.name.trim().is_empty() || new.prompt.trim().is_empty() {
            return Err(StoreError::Invalid("an automation needs a name and a prompt".into()));
        }
        let tz = new.tz.clone().unwrap_or_else(|| "UTC".into());
        let (cron, zone) = parse_schedule(&new.schedule, &tz)?;
        let now = self.now();
        let next = next_after(&cron, zone, now)?;
        let id = self.write(|tx| {
            let taken: Option<i64> = tx.query_row("SELECT id FROM automations WHERE name = ?1", [new.name.trim()], |r| r.get(0)).optional()?;
            if let Some(other) = taken {
                return Err(StoreError::Conflict(format!("an automation named '{}' exists already ({})", new.name.trim(), automation_id(other))));
            }
            tx.execute(
                "INSERT INTO automations (name, prompt, schedule, tz, cwd, mode, model, state, next_due, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'active', ?8, ?9, ?9)",
                params![new.name.trim(), new.prompt, new.schedule.trim(), tz.trim(), new.cwd, new.mode, new.model, next, now],
            )?;
            Ok(tx.last_insert_rowid())
        })?;
        self.read(|c| load(c, id))
    }

    pub fn automation(&self, key: &str) -> Result<Automation, StoreError> {
        self.read(|c| load(c, lookup(c, key)?))
    }

    pub fn list_automations(&self) -> Result<Vec<Automation>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare(&format!("SELECT {COLUMNS} FROM automations ORDER BY id"))?;
            Ok(stmt.query_map([], from_row)?.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Newest first.
    pub fn automation_runs(&self, key: &str, limit: usize) -> Result<Vec<AutomationRun>, StoreError> {
        self.read(|c| {
            let id = lookup(c, key)?;
            let mut stmt = c.prepare("SELECT due_at, outcome, missed_count, task_id, at FROM automation_runs WHERE automation_id = ?1 ORDER BY id DESC LIMIT ?2")?;
            let runs = stmt
                .query_map(params![id, limit as i64], |r| {
                    let outcome = match r.get::<_, String>(1)?.as_str() {
                        "enqueued" => RunOutcome::Enqueued,
                        "manual" => RunOutcome::Manual,
                        _ => RunOutcome::Missed,
                    };
                    Ok(AutomationRun {
                        due_at: rfc3339(r.get(0)?),
                        outcome,
                        missed_count: r.get(2)?,
                        task_id: r.get::<_, Option<i64>>(3)?.map(task_id),
                        at: rfc3339(r.get(4)?),
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(runs)
        })
    }

    pub fn update_automation(&self, key: &str, patch: &AutomationPatch) -> Result<Automation, StoreError> {
        let now = self.now();
        let id = self.write(|tx| {
            let id = lookup(tx, key)?;
            let cur = load(tx, id)?;
            let schedule = patch.schedule.clone().unwrap_or(cur.schedule.clone());
            let tz = patch.tz.clone().unwrap_or(cur.tz.clone());
            let (cron, zone) = parse_schedule(&schedule, &tz)?;
            let next = if cur.state == AutomationState::Active { next_after(&cron, zone, now)? } else { None };
            tx.execute(
                "UPDATE automations SET prompt = ?2, schedule = ?3, tz = ?4, cwd = ?5, mode = ?6, model = ?7, next_due = ?8, updated_at = ?9 WHERE id = ?1",
                params![
                    id,
                    patch.prompt.clone().unwrap_or(cur.prompt),
                    schedule.trim(),
                    tz.trim(),
                    patch.cwd.clone().or(cur.cwd),
                    patch.mode.clone().or(cur.mode),
                    patch.model.clone().or(cur.model),
                    next,
                    now
                ],
            )?;
            Ok(id)
        })?;
        self.read(|c| load(c, id))
    }

    pub fn pause_automation(&self, key: &str) -> Result<Automation, StoreError> {
        let now = self.now();
        let id = self.write(|tx| {
            let id = lookup(tx, key)?;
            tx.execute(
                "UPDATE automations SET state = 'paused', next_due = NULL, updated_at = ?2 WHERE id = ?1",
                params![id, now],
            )?;
            Ok(id)
        })?;
        self.read(|c| load(c, id))
    }

    /// Resumes from now: due times that passed while paused are skipped, not run.
    pub fn resume_automation(&self, key: &str) -> Result<Automation, StoreError> {
        let now = self.now();
        let id = self.write(|tx| {
            let id = lookup(tx, key)?;
            let cur = load(tx, id)?;
            let (cron, zone) = parse_schedule(&cur.schedule, &cur.tz)?;
            let next = next_after(&cron, zone, now)?;
            tx.execute(
                "UPDATE automations SET state = 'active', next_due = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, next, now],
            )?;
            Ok(id)
        })?;
        self.read(|c| load(c, id))
    }

    /// Deletes the automation and its run history; tasks it enqueued stay.
    pub fn delete_automation(&self, key: &str) -> Result<Automation, StoreError> {
        self.write(|tx| {
            let id = lookup(tx, key)?;
            let gone = load(tx, id)?;
            tx.execute("DELETE FROM automation_runs WHERE automation_id = ?1", [id])?;
            tx.execute("DELETE FROM automations WHERE id = ?1", [id])?;
            Ok(gone)
        })
    }

    /// Enqueues a run now, whatever the schedule says.
    pub fn run_automation_now(&self, key: &str) -> Result<Task, StoreError> {
        let now = self.now();
        let task = self.write(|tx| {
            let id = lookup(tx, key)?;
            let a = load(tx, id)?;
            let t = insert_task(tx, &task_for(&a, id), now)?;
            tx.execute(
                "INSERT INTO automation_runs (automation_id, due_at, outcome, task_id, at) VALUES (?1, ?2, 'manual', ?3, ?2)",
                params![id, now, t],
            )?;
            Ok(t)
        })?;
        self.read(|c| load_task(c, task))
    }

    /// Enqueues due runs and records missed ones. `grace_ms`: how late a due time
    /// may be seen and still run.
    pub fn tick_automations(&self, grace_ms: i64) -> Result<TickReport, StoreError> {
        let now = self.now();
        // Most ticks find nothing due: a read says so without the write lock.
        let due: bool = self.read(|c| {
            Ok(c.query_row(
                "SELECT EXISTS(SELECT 1 FROM automations WHERE state = 'active' AND next_due IS NOT NULL AND next_due <= ?1)",
                [now],
                |r| r.get(0),
            )?)
        })?;
        if !due {
            return Ok(TickReport::default());
        }
        self.write(|tx| {
            let due: Vec<Automation> = {
                let mut stmt = tx.prepare(&format!("SELECT {COLUMNS} FROM automations WHERE state = 'active' AND next_due IS NOT NULL AND next_due <= ?1 ORDER BY id"))?;
                stmt.query_map([now], from_row)?.collect::<Result<Vec<_>, _>>()?
            };
            let mut report = TickReport::default();
            for a in due {
                let id = parse_id("automation", "auto", &a.id)?;
                let (cron, zone) = parse_schedule(&a.schedule, &a.tz)?;
                let first: Timestamp = tx.query_row("SELECT next_due FROM automations WHERE id = ?1", [id], |r| r.get(0))?;
                // Every due time up to now, oldest first.
                let mut times = vec![first];
                let mut cursor = first;
                while times.len() < MAX_COUNTED_MISSES {
                    match next_after(&cron, zone, cursor)? {
                        Some(t) if t <= now => {
                            times.push(t);
                            cursor = t;
                        }
                        _ => break,
                    }
                }
                let latest = times.last().copied().unwrap_or(first);
                let runs_now = now - latest <= grace_ms;
                let missed: &[Timestamp] = if runs_now { &times[..times.len() - 1] } else { &times[..] };
                if let (Some(first_missed), Some(last_missed)) = (missed.first(), missed.last()) {
                    tx.execute(
                        "INSERT INTO automation_runs (automation_id, due_at, outcome, missed_count, at) VALUES (?1, ?2, 'missed', ?3, ?4)",
                        params![id, first_missed, missed.len() as i64, now],
                    )?;
                    report.missed.push((a.id.clone(), missed.len() as i64, rfc3339(*first_missed), rfc3339(*last_missed)));
                }
                if runs_now {
                    let t = insert_task(tx, &task_for(&a, id), now)?;
                    tx.execute(
                        "INSERT INTO automation_runs (automation_id, due_at, outcome, task_id, at) VALUES (?1, ?2, 'enqueued', ?3, ?4)",
                        params![id, latest, t, now],
                    )?;
                    report.enqueued.push((a.id.clone(), task_id(t), rfc3339(latest)));
                }
                let next = next_after(&cron, zone, now.max(cursor))?;
                tx.execute("UPDATE automations SET next_due = ?2 WHERE id = ?1", params![id, next])?;
            }
            Ok(report)
        })
    }
}

fn task_for(a: &Automation, id: i64) -> NewTask {
    NewTask {
        prompt: a.prompt.clone(),
        cwd: a.cwd.clone(),
        mode: a.mode.clone(),
        model: a.model.clone(),
        checklist: Vec::new(),
        automation_id: Some(id),
    }
}

#[cfg(test)]
#[path = "automation_tests.rs"]
mod tests;
