//! Sub-agent records on disk: `$QUIVER_STATE_DIR/subagents.v1.json`, so
//! `quiver agents` can list them and a restart can tell live work from
//! stale. Each hub stamps its records with a `session_boot_id`; a record
//! left `running` by a boot whose process is gone is `interrupted`. Schema
//! version 1: unknown fields are ignored and missing ones defaulted, so older
//! and newer quivers read each other's files.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const STORE_VERSION: u32 = 1;
pub const STORE_FILE: &str = "subagents.v1.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    pub id: String,
    pub name: String,
    pub role: String,
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The `session_boot_id` of the hub that ran it.
    pub boot: String,
    #[serde(default)]
    pub parent_session: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub transcript: String,
    /// Unix time in ms.
    #[serde(default)]
    pub started_ms: u64,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub tokens: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    agents: Vec<AgentRecord>,
}

pub fn store_path() -> Option<PathBuf> {
    crate::exec::paths::state_dir().map(|d| d.join(STORE_FILE))
}

/// A boot id for this process: time and pid (the pid tells whether it still runs).
pub fn new_boot_id() -> String {
    let millis =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or_default();
    format!("b{millis:x}-{}", std::process::id())
}

/// Whether the process of `boot` is still running.
pub fn boot_alive(boot: &str) -> bool {
    let Some(pid) = boot.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else { return false };
    pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
}

/// Every record, with `running`/`pending` ones of dead boots as `interrupted`.
/// A missing file is an empty list; an unreadable one is an error.
pub fn load(path: &Path) -> anyhow::Result<Vec<AgentRecord>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow::anyhow!("reading {}: {e}", path.display())),
    };
    let file: StoreFile =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{} is not a sub-agent store: {e}", path.display()))?;
    Ok(file.agents.into_iter().map(mark_interrupted).collect())
}

fn mark_interrupted(mut record: AgentRecord) -> AgentRecord {
    if matches!(record.state.as_str(), "running" | "pending") && !boot_alive(&record.boot) {
        record.reason = Some(format!("quiver exited while it ran (boot {})", record.boot));
        record.state = "interrupted".into();
    }
    record
}

/// Replaces this boot's records in the file with `records`, keeping the
/// others (another quiver's, earlier boots'). Written whole and renamed, so
/// a reader never sees half a file.
pub fn save(path: &Path, boot: &str, records: &[AgentRecord]) -> anyhow::Result<()> {
    // An unreadable file is left alone (the error says why), never overwritten.
    let mut agents: Vec<AgentRecord> = load(path)?.into_iter().filter(|r| r.boot != boot).collect();
    agents.extend(records.iter().cloned());
    let file = StoreFile { version: STORE_VERSION, agents };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&file)?)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn record(id: &str, state: &str, boot: &str) -> AgentRecord {
        AgentRecord {
            id: id.into(),
            name: id.into(),
            role: "explore".into(),
            state: state.into(),
            reason: None,
            boot: boot.into(),
            parent_session: String::new(),
            session_id: String::new(),
            transcript: String::new(),
            started_ms: 1,
            duration_ms: 2,
            tokens: 3,
        }
    }

    #[test]
    fn saves_per_boot_and_marks_dead_boots_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STORE_FILE);
        // pid 0 is never a user process: that boot is dead.
        save(&path, "bdead-0", &[record("agent-1", "running", "bdead-0"), record("agent-2", "completed", "bdead-0")])
            .unwrap();
        let mine = new_boot_id();
        save(&path, &mine, &[record("agent-1", "running", &mine)]).unwrap();
        let all = load(&path).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].state, "interrupted");
        assert!(all[0].reason.as_deref().unwrap().contains("bdead-0"));
        assert_eq!(all[1].state, "completed");
        assert_eq!(all[2].state, "running", "this process is alive");
    }

    #[test]
    fn unknown_fields_are_tolerated_and_missing_ones_defaulted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STORE_FILE);
        std::fs::write(
            &path,
            r#"{"version":1,"future":true,"agents":[{"id":"a","name":"a","role":"plan","state":"completed","boot":"b1-0","color":"red"}]}"#,
        )
        .unwrap();
        let all = load(&path).unwrap();
        assert_eq!(all[0].tokens, 0);
        assert_eq!(all[0].role, "plan");
        std::fs::write(&path, "{not json").unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("not a sub-agent store"));
    }
}
