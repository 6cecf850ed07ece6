//! Evidence on a task: verification gates, PR attempts and the audit trail of
//! guarded writes (GitHub comments and closures).

use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifact::artifact_id;
use crate::clock::rfc3339;
use crate::error::StoreError;
use crate::store::Store;
use crate::task::{append_event, load_task, parse_id, task_id};

/// What a gate's outcome means for the work, not just its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum GateClass {
    Passed,
    Failed,
    /// Same command, same tree, a different outcome from an earlier run on the
    /// same task: the verdict cannot be trusted either way.
    Flaky,
    /// The command could not run as a verification at all (not found, killed,
    /// timed out, no network, no disk): says nothing about the change.
    Infra,
}

impl GateClass {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
    fn parse(s: &str) -> GateClass {
        match s {
            "passed" => GateClass::Passed,
            "failed" => GateClass::Failed,
            "flaky" => GateClass::Flaky,
            _ => GateClass::Infra,
        }
    }
}

/// A finished verification command, as the gate tool saw it.
#[derive(Debug, Clone, Default)]
pub struct NewGate {
    pub task: Option<String>,
    pub name: String,
    pub command: String,
    pub cwd: String,
    /// None when a signal ended the command.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub log: Vec<u8>,
    /// A fingerprint of the work tree the command ran against (e.g. the hash of
    /// `git diff HEAD` plus HEAD); lets a rerun on an unchanged tree spot flakes.
    pub tree: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateRecord {
    pub id: String,
    pub task_id: Option<String>,
    pub name: String,
    pub command: String,
    pub cwd: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub classification: GateClass,
    pub summary: String,
    pub log_artifact: Option<String>,
    pub at: String,
}

/// Log lines that mean the environment failed, not the code under test.
const INFRA_MARKERS: &[&str] = &[
    "command not found",
    "no space left on device",
    "could not resolve host",
    "temporary failure in name resolution",
    "network is unreachable",
    "connection refused",
    "cannot allocate memory",
    "out of memory",
    "killed by signal",
    "failed to download",
    "spurious network error",
];

/// Classifies one run; `previous` is the class of the last run of the same
/// command on the same task and tree, if any.
pub fn classify(exit_code: Option<i32>, timed_out: bool, log: &str, previous: Option<GateClass>) -> GateClass {
    let base = match exit_code {
        _ if timed_out => GateClass::Infra,
        None => GateClass::Infra,
        Some(126 | 127) => GateClass::Infra,
        Some(0) => GateClass::Passed,
        Some(_) => {
            let tail: String =
                log.chars().rev().take(4000).collect::<Vec<_>>().into_iter().rev().collect::<String>().to_lowercase();
            if INFRA_MARKERS.iter().any(|m| tail.contains(m)) { GateClass::Infra } else { GateClass::Failed }
        }
    };
    match (previous, base) {
        (Some(GateClass::Passed), GateClass::Failed) | (Some(GateClass::Failed), GateClass::Passed) => GateClass::Flaky,
        (Some(GateClass::Flaky), GateClass::Passed | GateClass::Failed) => GateClass::Flaky,
        _ => base,
    }
}

#[derive(Debug, Clone, Default)]
pub struct NewPrAttempt {
    pub task: Option<String>,
    pub base_commit: String,
    pub files: Vec<String>,
    pub additions: u64,
    pub deletions: u64,
    pub patch: Vec<u8>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrAttempt {
    pub id: String,
    pub task_id: Option<String>,
    pub base_commit: String,
    pub files: Vec<String>,
    pub additions: u64,
    pub deletions: u64,
    pub patch_artifact: String,
    pub note: Option<String>,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRecord {
    pub id: i64,
    pub task_id: Option<String>,
    pub action: String,
    pub detail: Value,
    pub at: String,
}

fn gate_from_row(r: &Row<'_>) -> rusqlite::Result<GateRecord> {
    Ok(GateRecord {
        id: format!("gate-{}", r.get::<_, i64>(0)?),
        task_id: r.get::<_, Option<i64>>(1)?.map(task_id),
        name: r.get(2)?,
        command: r.get(3)?,
        cwd: r.get(4)?,
        exit_code: r.get(5)?,
        duration_ms: r.get::<_, i64>(6)? as u64,
        classification: GateClass::parse(&r.get::<_, String>(7)?),
        summary: r.get(8)?,
        log_artifact: r.get::<_, Option<i64>>(9)?.map(artifact_id),
        at: rfc3339(r.get(10)?),
    })
}

fn attempt_from_row(r: &Row<'_>) -> rusqlite::Result<(PrAttempt, String)> {
    let files: String = r.get(3)?;
    Ok((
        PrAttempt {
            id: format!("pr-{}", r.get::<_, i64>(0)?),
            task_id: r.get::<_, Option<i64>>(1)?.map(task_id),
            base_commit: r.get(2)?,
            files: Vec::new(),
            additions: r.get::<_, i64>(4)? as u64,
            deletions: r.get::<_, i64>(5)? as u64,
            patch_artifact: artifact_id(r.get(6)?),
            note: r.get(7)?,
            at: rfc3339(r.get(8)?),
        },
        files,
    ))
}

const GATE_COLUMNS: &str = "id, task_id, name, command, cwd, exit_code, duration_ms, class, summary, log_artifact, at";
const ATTEMPT_COLUMNS: &str = "id, task_id, base_commit, files, additions, deletions, patch_artifact, note, at";

impl Store {
    /// Stores a gate's log as an artifact, classifies the run and records it on
    /// the task's timeline.
    pub fn record_gate(&self, gate: &NewGate) -> Result<GateRecord, StoreError> {
        if gate.command.trim().is_empty() {
            return Err(StoreError::Invalid("a gate needs the command it ran".into()));
        }
        let task_n = gate.task.as_deref().map(|t| parse_id("task", "task", t)).transpose()?;
        if let Some(n) = task_n {
            self.read(|c| load_task(c, n))?;
        }
        let name = if gate.name.trim().is_empty() { gate.command.clone() } else { gate.name.clone() };
        let log = String::from_utf8_lossy(&gate.log).into_owned();
        let artifact = self.put_artifact(gate.task.as_deref(), "log", &format!("gate {name}"), &gate.log)?;
        let log_n = parse_id("artifact", "art", &artifact.id)?;
        let now = self.now();
        let id = self.write(|tx| {
            let previous: Option<String> = match (task_n, &gate.tree) {
                (Some(t), Some(tree)) => tx
                    .query_row(
                        "SELECT class FROM gates WHERE task_id = ?1 AND command = ?2 AND tree = ?3 ORDER BY id DESC LIMIT 1",
                        params![t, gate.command, tree],
                        |r| r.get(0),
                    )
                    .optional()?,
                _ => None,
            };
            let class = classify(gate.exit_code, gate.timed_out, &log, previous.as_deref().map(GateClass::parse));
            let summary = gate_summary(gate, class, &artifact.summary);
            tx.execute(
                "INSERT INTO gates (task_id, name, command, cwd, exit_code, duration_ms, class, summary, log_artifact, tree, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![task_n, name, gate.command, gate.cwd, gate.exit_code, gate.duration_ms as i64, class.as_str(), summary, log_n, gate.tree, now],
            )?;
            let id = tx.last_insert_rowid();
            if let Some(t) = task_n {
                append_event(tx, t, now, "gate", &serde_json::json!({
                    "gate": format!("gate-{id}"), "name": name, "command": gate.command,
                    "exit_code": gate.exit_code, "classification": class.as_str(), "log": artifact.id,
                }))?;
            }
            Ok(id)
        })?;
        self.gate(&format!("gate-{id}"))
    }

    pub fn gate(&self, id: &str) -> Result<GateRecord, StoreError> {
        let n = parse_id("gate", "gate", id)?;
        self.read(|c| {
            c.query_row(&format!("SELECT {GATE_COLUMNS} FROM gates WHERE id = ?1"), [n], gate_from_row)
                .optional()?
                .ok_or_else(|| StoreError::NotFound { kind: "gate", id: id.to_string() })
        })
    }

    pub fn gates_of(&self, task: &str) -> Result<Vec<GateRecord>, StoreError> {
        let n = parse_id("task", "task", task)?;
        self.read(|c| {
            let mut stmt = c.prepare(&format!("SELECT {GATE_COLUMNS} FROM gates WHERE task_id = ?1 ORDER BY id"))?;
            Ok(stmt.query_map([n], gate_from_row)?.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Stores the patch as an artifact and the attempt's metadata.
    pub fn record_attempt(&self, attempt: &NewPrAttempt) -> Result<PrAttempt, StoreError> {
        if attempt.patch.is_empty() {
            return Err(StoreError::Invalid("nothing to record: the diff is empty".into()));
        }
        let task_n = attempt.task.as_deref().map(|t| parse_id("task", "task", t)).transpose()?;
        if let Some(n) = task_n {
            self.read(|c| load_task(c, n))?;
        }
        let artifact = self.put_artifact(
            attempt.task.as_deref(),
            "patch",
            &format!("attempt on {}", attempt.base_commit),
            &attempt.patch,
        )?;
        let patch_n = parse_id("artifact", "art", &artifact.id)?;
        let now = self.now();
        let id = self.write(|tx| {
            tx.execute(
                "INSERT INTO pr_attempts (task_id, base_commit, files, additions, deletions, patch_artifact, note, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![task_n, attempt.base_commit, serde_json::to_string(&attempt.files)?, attempt.additions as i64, attempt.deletions as i64, patch_n, attempt.note, now],
            )?;
            let id = tx.last_insert_rowid();
            if let Some(t) = task_n {
                append_event(tx, t, now, "attempt", &serde_json::json!({
                    "attempt": format!("pr-{id}"), "base": attempt.base_commit, "files": attempt.files.len(),
                    "additions": attempt.additions, "deletions": attempt.deletions, "patch": artifact.id,
                }))?;
            }
            Ok(id)
        })?;
        self.attempt(&format!("pr-{id}"))
    }

    pub fn attempt(&self, id: &str) -> Result<PrAttempt, StoreError> {
        let n = parse_id("PR attempt", "pr", id)?;
        let (mut a, files) = self.read(|c| {
            c.query_row(&format!("SELECT {ATTEMPT_COLUMNS} FROM pr_attempts WHERE id = ?1"), [n], attempt_from_row)
                .optional()?
                .ok_or_else(|| StoreError::NotFound { kind: "PR attempt", id: id.to_string() })
        })?;
        a.files = serde_json::from_str(&files)?;
        Ok(a)
    }

    pub fn attempts_of(&self, task: &str) -> Result<Vec<PrAttempt>, StoreError> {
        let n = parse_id("task", "task", task)?;
        let rows = self.read(|c| {
            let mut stmt =
                c.prepare(&format!("SELECT {ATTEMPT_COLUMNS} FROM pr_attempts WHERE task_id = ?1 ORDER BY id"))?;
            Ok(stmt.query_map([n], attempt_from_row)?.collect::<Result<Vec<_>, _>>()?)
        })?;
        rows.into_iter()
            .map(|(mut a, files)| {
                a.files = serde_json::from_str(&files)?;
                Ok(a)
            })
            .collect()
    }

    /// Records a guarded write (who asked, what was approved, what was sent).
    pub fn record_audit(&self, task: Option<&str>, action: &str, detail: &Value) -> Result<AuditRecord, StoreError> {
        let task_n = task.map(|t| parse_id("task", "task", t)).transpose()?;
        let now = self.now();
        let id = self.write(|tx| {
            if let Some(t) = task_n {
                load_task(tx, t)?;
            }
            tx.execute(
                "INSERT INTO audit (task_id, action, detail, at) VALUES (?1, ?2, ?3, ?4)",
                params![task_n, action, serde_json::to_string(detail)?, now],
            )?;
            let id = tx.last_insert_rowid();
            if let Some(t) = task_n {
                append_event(tx, t, now, "audit", &serde_json::json!({"audit": id, "action": action}))?;
            }
            Ok(id)
        })?;
        Ok(AuditRecord {
            id,
            task_id: task_n.map(task_id),
            action: action.to_string(),
            detail: detail.clone(),
            at: rfc3339(now),
        })
    }

    pub fn audit_of(&self, task: &str) -> Result<Vec<AuditRecord>, StoreError> {
        let n = parse_id("task", "task", task)?;
        let rows: Vec<(i64, String, String, i64)> = self.read(|c| {
            let mut stmt = c.prepare("SELECT id, action, detail, at FROM audit WHERE task_id = ?1 ORDER BY id")?;
            Ok(stmt
                .query_map([n], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<Result<Vec<_>, _>>()?)
        })?;
        rows.into_iter()
            .map(|(id, action, detail, at)| {
                Ok(AuditRecord {
                    id,
                    task_id: Some(task_id(n)),
                    action,
                    detail: serde_json::from_str(&detail)?,
                    at: rfc3339(at),
                })
            })
            .collect()
    }
}

fn gate_summary(gate: &NewGate, class: GateClass, log_summary: &str) -> String {
    let status = match (gate.exit_code, gate.timed_out) {
        (_, true) => "timed out".to_string(),
        (Some(code), _) => format!("exit {code}"),
        (None, _) => "killed by a signal".to_string(),
    };
    // The last lines carry the verdict (test totals, the first error): keep them short.
    let tail: Vec<&str> = log_summary.lines().rev().filter(|l| !l.trim().is_empty()).take(6).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    format!("{} ({status}, {} ms): {}", class.as_str(), gate.duration_ms, tail.join(" | "))
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
