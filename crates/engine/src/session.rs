//! One conversation's state: which deferred tools it has loaded (and when), what it
//! searched for, and typed state that tools keep for the session (a checklist,
//! notes, background jobs).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use serde::{Deserialize, Serialize};

/// The part of a session that shapes the catalog tail. Serializable so a transcript
/// can restore it on resume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LazyToolState {
    /// Canonical names in load order; this is the catalog tail.
    pub loaded_lazy_tools: Vec<String>,
    pub loaded_at_turn: BTreeMap<String, u64>,
    pub search_history: Vec<SearchRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    pub turn: u64,
    pub query: String,
    pub loaded: Vec<String>,
}

#[derive(Default)]
pub struct Session {
    id: String,
    turn: AtomicU64,
    lazy: Mutex<LazyToolState>,
    /// The head as first sent in this session: it never changes afterwards.
    head: Mutex<Option<Vec<String>>>,
    state: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl Session {
    pub fn new(id: impl Into<String>) -> Self {
        Session { id: id.into(), ..Default::default() }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn turn(&self) -> u64 {
        self.turn.load(Ordering::SeqCst)
    }

    /// Called once per model request; loads are stamped with the turn they happen in.
    pub fn advance_turn(&self) -> u64 {
        self.turn.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether a catalog was built for this session yet (see [`Self::pinned_head`]),
    /// without copying the names: asked on every call.
    pub fn is_head_pinned(&self) -> bool {
        self.head.lock().is_some()
    }

    /// The head names this session was first given, if a catalog was built yet.
    pub fn pinned_head(&self) -> Option<Vec<String>> {
        self.head.lock().clone()
    }

    /// Pins the head on first use; later calls keep the first pin.
    pub fn pin_head(&self, names: Vec<String>) -> Vec<String> {
        self.head.lock().get_or_insert(names).clone()
    }

    pub fn lazy_state(&self) -> LazyToolState {
        self.lazy.lock().clone()
    }

    pub fn restore_lazy_state(&self, state: LazyToolState) {
        *self.lazy.lock() = state;
    }

    pub fn loaded(&self) -> Vec<String> {
        self.lazy.lock().loaded_lazy_tools.clone()
    }

    pub fn is_loaded(&self, name: &str) -> bool {
        self.lazy.lock().loaded_lazy_tools.iter().any(|n| n == name)
    }

    /// Appends names not loaded yet, in the given order; returns the newly loaded.
    pub fn load(&self, names: &[String]) -> Vec<String> {
        let turn = self.turn();
        let mut lazy = self.lazy.lock();
        let mut added = Vec::new();
        for name in names {
            if !lazy.loaded_lazy_tools.contains(name) {
                lazy.loaded_lazy_tools.push(name.clone());
                lazy.loaded_at_turn.insert(name.clone(), turn);
                added.push(name.clone());
            }
        }
        added
    }

    /// Explicit unload; returns whether the name was loaded.
    pub fn unload(&self, name: &str) -> bool {
        let mut lazy = self.lazy.lock();
        let before = lazy.loaded_lazy_tools.len();
        lazy.loaded_lazy_tools.retain(|n| n != name);
        lazy.loaded_at_turn.remove(name);
        before != lazy.loaded_lazy_tools.len()
    }

    /// The compaction hook: after the context is compacted the tail starts empty.
    pub fn reset_loads(&self) {
        let mut lazy = self.lazy.lock();
        lazy.loaded_lazy_tools.clear();
        lazy.loaded_at_turn.clear();
    }

    pub fn record_search(&self, query: &str, loaded: Vec<String>) {
        let turn = self.turn();
        self.lazy.lock().search_history.push(SearchRecord { turn, query: query.to_string(), loaded });
    }

    /// Typed per-session state, created on first use. `T` carries its own locking.
    pub fn state<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut map = self.state.lock();
        let entry = map.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(T::default()));
        match Arc::clone(entry).downcast::<T>() {
            Ok(state) => state,
            // Unreachable by construction (keyed by TypeId); recover with a fresh value.
            Err(_) => {
                let fresh = Arc::new(T::default());
                map.insert(TypeId::of::<T>(), fresh.clone());
                fresh
            }
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
