//! Artifacts: logs, diffs and bodies too large for a result, kept as files beside
//! the database and referenced by id. The file is written to a temporary name,
//! synced, renamed into place and its directory synced *before* the row naming it
//! commits, so a row never points at a missing or torn file; a crash in between
//! leaves at most an orphan file, which nothing references.

use std::io::Write;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::rfc3339;
use crate::error::StoreError;
use crate::store::{ARTIFACT_DIR, Store};
use crate::summary::summarize;
use crate::task::{append_event, parse_id};

/// How much of a body a result shows inline.
const SUMMARY_CHARS: usize = 1200;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Artifact {
    pub id: String,
    pub task_id: Option<String>,
    pub kind: String,
    pub name: String,
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
    pub summary: String,
    pub created_at: String,
}

pub(crate) fn artifact_id(n: i64) -> String {
    format!("art-{n}")
}

impl Store {
    /// Stores `body` as an artifact of `kind` ("log", "patch", "body", …), on a
    /// task's timeline when `task` is given.
    pub fn put_artifact(
        &self,
        task: Option<&str>,
        kind: &str,
        name: &str,
        body: &[u8],
    ) -> Result<Artifact, StoreError> {
        let task_n = task.map(|t| parse_id("task", "task", t)).transpose()?;
        let dir = self.dir.join(ARTIFACT_DIR);
        let now = self.now();
        let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), unique()));
        write_synced(&tmp, body)?;
        let sha = hex::encode(Sha256::digest(body));
        let summary = summarize(&String::from_utf8_lossy(body), SUMMARY_CHARS);
        let result = self.write(|tx| {
            tx.execute(
                "INSERT INTO artifacts (task_id, kind, name, file, bytes, sha256, summary, created_at) VALUES (?1, ?2, ?3, '', ?4, ?5, ?6, ?7)",
                params![task_n, kind, name, body.len() as i64, sha, summary, now],
            )?;
            let id = tx.last_insert_rowid();
            let file = format!("{}.{}", artifact_id(id), extension(kind));
            tx.execute("UPDATE artifacts SET file = ?2 WHERE id = ?1", params![id, file])?;
            if let Some(t) = task_n {
                append_event(tx, t, now, "artifact", &serde_json::json!({"artifact": artifact_id(id), "kind": kind, "name": name, "bytes": body.len()}))?;
            }
            let dest = dir.join(&file);
            std::fs::rename(&tmp, &dest).map_err(|e| StoreError::io(format!("placing artifact {}", dest.display()), e))?;
            sync_dir(&dir)?;
            Ok(id)
        });
        match result {
            Ok(id) => self.artifact(&artifact_id(id)),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    pub fn artifact(&self, id: &str) -> Result<Artifact, StoreError> {
        let n = parse_id("artifact", "art", id)?;
        let dir = self.dir.join(ARTIFACT_DIR);
        self.read(|c| {
            c.query_row(
                "SELECT id, task_id, kind, name, file, bytes, sha256, summary, created_at FROM artifacts WHERE id = ?1",
                [n],
                |r| {
                    Ok(Artifact {
                        id: artifact_id(r.get(0)?),
                        task_id: r.get::<_, Option<i64>>(1)?.map(crate::task::task_id),
                        kind: r.get(2)?,
                        name: r.get(3)?,
                        path: dir.join(r.get::<_, String>(4)?).display().to_string(),
                        bytes: r.get::<_, i64>(5)? as u64,
                        sha256: r.get(6)?,
                        summary: r.get(7)?,
                        created_at: rfc3339(r.get(8)?),
                    })
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound { kind: "artifact", id: id.to_string() })
        })
    }

    /// The artifact's bytes, checked against the digest recorded with it.
    pub fn artifact_bytes(&self, id: &str) -> Result<Vec<u8>, StoreError> {
        let a = self.artifact(id)?;
        let bytes = std::fs::read(&a.path).map_err(|e| StoreError::io(format!("reading artifact {id}"), e))?;
        if hex::encode(Sha256::digest(&bytes)) != a.sha256 {
            return Err(StoreError::Corrupt(format!("artifact {id} at {} does not match its recorded sha256", a.path)));
        }
        Ok(bytes)
    }
}

fn extension(kind: &str) -> &'static str {
    match kind {
        "patch" | "diff" => "patch",
        "json" => "json",
        _ => "txt",
    }
}

fn unique() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    nanos ^ u128::from(COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn write_synced(path: &std::path::Path, body: &[u8]) -> Result<(), StoreError> {
    let mut f = std::fs::File::create(path).map_err(|e| StoreError::io(format!("creating {}", path.display()), e))?;
    f.write_all(body).map_err(|e| StoreError::io(format!("writing {}", path.display()), e))?;
    f.sync_all().map_err(|e| StoreError::io(format!("syncing {}", path.display()), e))
}

fn sync_dir(dir: &std::path::Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        let d = std::fs::File::open(dir).map_err(|e| StoreError::io(format!("opening {}", dir.display()), e))?;
        d.sync_all().map_err(|e| StoreError::io(format!("syncing {}", dir.display()), e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
