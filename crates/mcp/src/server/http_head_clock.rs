//! Two clocks where hyper has one. hyper's header-read timeout starts when
//! it begins waiting for a request head, so on a kept-alive connection it
//! also bounds the idle time between requests: with it at 10 s, a client
//! pausing 11 s between calls found its connection closed and paid a new
//! connect (mcp-proxy, and most HTTP servers in front of clients, keep an
//! idle one 75 s). So hyper's timer is set to the idle bound, and this clock
//! bounds a head once its first byte has come: a trickled head is still cut
//! after `header_timeout`, not 75 s.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// One connection's clock: when the head now arriving began, if one is.
pub(super) struct HeadClock {
    epoch: Instant,
    /// Milliseconds after `epoch` (plus one, so 0 means none) at which the
    /// first byte of a request head not yet complete was read.
    started: AtomicU64,
    /// Requests handed to the service whose response has not been produced
    /// yet: bytes read meanwhile are their bodies, not a new head.
    in_service: AtomicUsize,
    started_now: Notify,
}

impl HeadClock {
    pub(super) fn new() -> Self {
        HeadClock {
            epoch: Instant::now(),
            started: AtomicU64::new(0),
            in_service: AtomicUsize::new(0),
            started_now: Notify::new(),
        }
    }

    /// Bytes were read: they begin a head when no request is in service.
    pub(super) fn read(&self) {
        if self.in_service.load(Ordering::Acquire) == 0 && self.started.load(Ordering::Acquire) == 0 {
            let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1;
            if self.started.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                self.started_now.notify_one();
            }
        }
    }

    /// A head was complete and its request went to the service.
    pub(super) fn head_done(&self) {
        self.in_service.fetch_add(1, Ordering::AcqRel);
        self.started.store(0, Ordering::Release);
    }

    /// That request's response was produced (its body may still stream).
    pub(super) fn response_ready(&self) {
        self.in_service.fetch_sub(1, Ordering::AcqRel);
    }

    /// Completes when a head has been arriving for longer than `limit`.
    pub(super) async fn head_overdue(&self, limit: Duration) {
        loop {
            let started = self.started.load(Ordering::Acquire);
            if started == 0 {
                // A permit stored by `read` before this wait is not lost.
                self.started_now.notified().await;
                continue;
            }
            let deadline = self.epoch + Duration::from_millis(started - 1) + limit;
            tokio::time::sleep_until(deadline.into()).await;
            if self.started.load(Ordering::Acquire) == started {
                return;
            }
        }
    }
}

/// Marks a request out of service when its response future ends, however it
/// ends (answered, or dropped with the connection).
pub(super) struct InService(pub(super) std::sync::Arc<HeadClock>);

impl Drop for InService {
    fn drop(&mut self) {
        self.0.response_ready();
    }
}
