//! Where sessions live. Each engine session keeps its own RLM sessions (they
//! die with it); one marked `shared` is also reachable by name from the other
//! engine sessions of this process (sub-agents), through the hub.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use quiver_engine::{ToolContext, ToolError};

use crate::child::ChildModel;
use crate::fanout::Fanout;
use crate::session::RlmSession;

pub type SessionHandle = Arc<tokio::sync::Mutex<RlmSession>>;

/// The RLM sessions of one engine session (its `state`).
#[derive(Default)]
pub struct RlmSessions {
    map: Mutex<BTreeMap<String, SessionHandle>>,
}

impl RlmSessions {
    fn lock(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, SessionHandle>> {
        self.map.lock()
    }
}

/// Shared by the five tools: the child model and the shared sessions.
pub struct RlmHub {
    pub fanout: Fanout,
    shared: Mutex<BTreeMap<String, SessionHandle>>,
}

impl RlmHub {
    pub fn new(child: ChildModel) -> Arc<Self> {
        Arc::new(RlmHub { fanout: Fanout { child: Arc::new(child) }, shared: Mutex::new(BTreeMap::new()) })
    }

    pub fn child(&self) -> &ChildModel {
        &self.fanout.child
    }

    fn shared(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, SessionHandle>> {
        self.shared.lock()
    }

    /// This engine session's session by name, else a shared one.
    pub fn get(&self, ctx: &ToolContext, name: &str) -> Result<SessionHandle, ToolError> {
        let own = ctx.session.state::<RlmSessions>();
        if let Some(s) = own.lock().get(name) {
            return Ok(Arc::clone(s));
        }
        if let Some(s) = self.shared().get(name) {
            return Ok(Arc::clone(s));
        }
        let mut known: Vec<String> = own.lock().keys().cloned().collect();
        known.extend(self.shared().keys().map(|k| format!("{k} (shared)")));
        Err(ToolError::model(if known.is_empty() {
            format!("no RLM session `{name}`: open one with rlm_open")
        } else {
            format!("no RLM session `{name}`; open sessions: {}", known.join(", "))
        }))
    }

    /// Refuses a name already in use (here or shared).
    pub fn check_free(&self, ctx: &ToolContext, name: &str) -> Result<(), ToolError> {
        let taken = ctx.session.state::<RlmSessions>().lock().contains_key(name) || self.shared().contains_key(name);
        if taken {
            return Err(ToolError::model(format!(
                "an RLM session named `{name}` is already open: use it with rlm_eval, or rlm_close it first"
            )));
        }
        Ok(())
    }

    pub fn insert(&self, ctx: &ToolContext, name: &str, session: RlmSession) -> SessionHandle {
        let handle = Arc::new(tokio::sync::Mutex::new(session));
        ctx.session.state::<RlmSessions>().lock().insert(name.to_string(), Arc::clone(&handle));
        handle
    }

    /// Shares (or stops sharing) a session by name.
    pub fn set_shared(&self, name: &str, handle: &SessionHandle, shared: bool) {
        if shared {
            self.shared().insert(name.to_string(), Arc::clone(handle));
        } else {
            self.shared().remove(name);
        }
    }

    /// Forgets the session everywhere; the caller stops it.
    pub fn remove(&self, ctx: &ToolContext, name: &str) -> Option<SessionHandle> {
        let own = ctx.session.state::<RlmSessions>().lock().remove(name);
        let shared = self.shared().remove(name);
        own.or(shared)
    }
}

/// A session name: short, plain, usable as a label.
pub fn check_name(name: &str) -> Result<(), ToolError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ToolError::model(format!("invalid session name `{name}`: use 1-64 letters, digits, `_`, `-` or `.`")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "hub_tests.rs"]
mod tests;
