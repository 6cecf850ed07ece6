//! One child run as the parent sees it: identity, state, and the last answer.
//! State lives in a `watch` channel so `agent_eval` can wait on it without
//! polling, and a dropped wait costs the child nothing.

use std::path::PathBuf;
use std::time::Instant;

use parking_lot::Mutex;

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::message::Usage;
use crate::subagent::contract;
use crate::subagent::role::Role;
use crate::subagent::store::AgentRecord;

#[derive(Debug, Clone, PartialEq)]
pub enum AgentState {
    Pending,
    Running,
    Completed,
    Failed(String),
    Cancelled,
    Interrupted(String),
}

impl AgentState {
    pub fn as_str(&self) -> &'static str {
        match self {
            AgentState::Pending => "pending",
            AgentState::Running => "running",
            AgentState::Completed => "completed",
            AgentState::Failed(_) => "failed",
            AgentState::Cancelled => "cancelled",
            AgentState::Interrupted(_) => "interrupted",
        }
    }

    /// Holds a concurrency slot.
    pub fn is_active(&self) -> bool {
        matches!(self, AgentState::Pending | AgentState::Running)
    }
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub state: AgentState,
    /// The last run's final answer.
    pub answer: Option<String>,
    pub turns: u32,
    pub usage: Usage,
    /// Runs finished so far (the first, then one per follow-up input).
    pub runs: u32,
}

pub struct AgentHandle {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub parent_session: String,
    pub session_id: String,
    pub transcript: PathBuf,
    pub started: Instant,
    /// Unix time in ms, for the persisted record.
    pub started_ms: u64,
    pub status: watch::Sender<Snapshot>,
    /// Follow-up inputs; dropping it ends the child's task once it is idle.
    pub input: Mutex<Option<mpsc::UnboundedSender<String>>>,
    pub task: Mutex<Option<AbortHandle>>,
}

impl AgentHandle {
    pub fn snapshot(&self) -> Snapshot {
        self.status.borrow().clone()
    }

    /// What `agent_open`/`agent_eval`/`agent_close` show: identity and state
    /// in the content; parsed sections and the transcript in metadata.
    pub fn projection(&self) -> (Value, Map<String, Value>) {
        let s = self.snapshot();
        let mut content = json!({
            "agent_id": self.id, "name": self.name, "role": self.role.as_str(), "status": s.state.as_str(),
            "turns": s.turns, "duration_ms": self.started.elapsed().as_millis() as u64,
        });
        if let AgentState::Failed(reason) | AgentState::Interrupted(reason) = &s.state {
            content["reason"] = json!(reason);
        }
        let mut meta = Map::new();
        meta.insert("session_id".into(), json!(self.session_id));
        meta.insert("transcript".into(), json!(self.transcript.to_string_lossy()));
        meta.insert("tokens".into(), json!(s.usage.input_tokens + s.usage.output_tokens));
        if let Some(answer) = &s.answer {
            let parsed = contract::parse(answer);
            meta.insert("sections".into(), Value::Object(parsed.sections));
            meta.insert("contract_ok".into(), json!(parsed.contract_ok));
        }
        (content, meta)
    }

    /// The persisted form (see `store.rs`).
    pub fn record(&self, boot: &str) -> AgentRecord {
        let s = self.snapshot();
        AgentRecord {
            id: self.id.clone(),
            name: self.name.clone(),
            role: self.role.as_str().to_string(),
            state: s.state.as_str().to_string(),
            reason: match &s.state {
                AgentState::Failed(r) | AgentState::Interrupted(r) => Some(r.clone()),
                _ => None,
            },
            boot: boot.to_string(),
            parent_session: self.parent_session.clone(),
            session_id: self.session_id.clone(),
            transcript: self.transcript.to_string_lossy().into_owned(),
            started_ms: self.started_ms,
            duration_ms: self.started.elapsed().as_millis() as u64,
            tokens: s.usage.input_tokens + s.usage.output_tokens,
        }
    }

    pub fn set(&self, f: impl FnOnce(&mut Snapshot)) {
        self.status.send_modify(f);
    }

    pub fn abort(&self) {
        if let Some(task) = self.task.lock().take() {
            task.abort();
        }
        self.input.lock().take();
    }
}
