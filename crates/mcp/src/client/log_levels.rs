//! `logging/setLevel` when several clients share the servers behind.
//!
//! A gateway over HTTP keeps one connection to each server for every client
//! in front, and a server has one log level per connection. Passing each
//! client's `logging/setLevel` straight down (as quiver did) let the last
//! client to ask set the level for everyone: one client's "error" silenced
//! another's "debug", one client's "debug" flooded another that asked for
//! "error". So each client's choice is kept here; the servers behind are set
//! to the most verbose level any client chose, and a log message is passed on
//! to a client only at or above the level that client chose (one that chose
//! none gets what the server sends, as before).

#![allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision

use parking_lot::Mutex;
use std::collections::BTreeMap;

use rmcp::model::LoggingLevel;

/// Each client's chosen level, by client (session) number.
#[derive(Default)]
pub(crate) struct LogLevels {
    chosen: Mutex<BTreeMap<u64, u8>>,
}

/// A level's severity: 0 (debug) is the most verbose.
pub(crate) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn level_of(severity: u8) -> LoggingLevel {
    match severity {
        0 => LoggingLevel::Debug,
        1 => LoggingLevel::Info,
        2 => LoggingLevel::Notice,
        3 => LoggingLevel::Warning,
        4 => LoggingLevel::Error,
        5 => LoggingLevel::Critical,
        6 => LoggingLevel::Alert,
        _ => LoggingLevel::Emergency,
    }
}

impl LogLevels {
    fn chosen(&self) -> parking_lot::MutexGuard<'_, BTreeMap<u64, u8>> {
        self.chosen.lock()
    }

    /// Records `client`'s choice; returns the level the servers behind must
    /// send at now (the most verbose any client chose).
    pub(crate) fn choose(&self, client: u64, level: LoggingLevel) -> LoggingLevel {
        let mut chosen = self.chosen();
        chosen.insert(client, severity(level));
        level_of(chosen.values().copied().min().unwrap_or(severity(level)))
    }

    /// The level the servers behind send at, if any client chose one (a
    /// server that connects later is set to it).
    pub(crate) fn effective(&self) -> Option<LoggingLevel> {
        self.chosen().values().copied().min().map(level_of)
    }

    /// `client` is gone. Returns the level the servers behind should send at
    /// now when it changed and some client still chose one. (When none is
    /// left the servers keep the last level: MCP has no way to unset it.)
    pub(crate) fn forget(&self, client: u64) -> Option<LoggingLevel> {
        let mut chosen = self.chosen();
        let before = chosen.values().copied().min();
        chosen.remove(&client)?;
        let after = chosen.values().copied().min();
        after.filter(|now| Some(*now) != before).map(level_of)
    }

    /// Whether a message at `level` reaches `client`.
    pub(crate) fn passes(&self, client: u64, level: LoggingLevel) -> bool {
        self.chosen().get(&client).is_none_or(|least| severity(level) >= *least)
    }
}

#[cfg(test)]
#[path = "log_levels_tests.rs"]
mod tests;
