//! Time as the store sees it: milliseconds since the Unix epoch, from a clock the
//! caller chooses, so schedules and leases can be tested without waiting.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since 1970-01-01T00:00:00Z.
pub type Timestamp = i64;

pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that moves only when told to (tests, simulations).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start: Timestamp) -> Self {
        ManualClock(AtomicI64::new(start))
    }
    pub fn set(&self, t: Timestamp) {
        self.0.store(t, Ordering::SeqCst);
    }
    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.0.load(Ordering::SeqCst)
    }
}

/// RFC 3339 in UTC, for people reading a record.
pub(crate) fn rfc3339(t: Timestamp) -> String {
    chrono::DateTime::from_timestamp_millis(t)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| t.to_string())
}
