//! Stateless (2026-07-28) relayed calls over stdio, answered beside rmcp by
//! the same lane as over HTTP (`http_stateless_calls`).
//!
//! Over stdio a request that names its protocol version in `_meta` is left
//! to rmcp by `stdio_calls` (rmcp scopes that version around the handler for
//! its checks), so a 2026-07-28 client over stdio had none of the lane's
//! speed: every call went through rmcp's loop, a handler and dispatch. Here
//! such a line is offered to the stateless lane first; what it takes is
//! relayed and answered as lines on the client's pipe by a task of its own,
//! and the client's `notifications/cancelled` for it (by its own id) cancels
//! it downstream. Everything else goes on to rmcp as before.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

use super::http_stateless_calls::StatelessLane;
use super::stdio_calls::Respond;

pub(crate) struct StdioStateless {
    lane: StatelessLane,
    /// Calls on the lane not answered yet, by the client's id: (serial, cancel).
    in_flight: Arc<Mutex<HashMap<RequestId, (u64, CancellationToken)>>>,
    next: AtomicU64,
    /// Cancelled when the client closes its side: every call is given up.
    closed: CancellationToken,
}

impl StdioStateless {
    pub(crate) fn new(lane: StatelessLane) -> Self {
        StdioStateless { lane, in_flight: Arc::default(), next: AtomicU64::new(0), closed: CancellationToken::new() }
    }

    /// Takes `line` when it is a stateless call the lane relays, or the
    /// cancellation of one; the answer goes out through `respond`.
    pub(crate) fn take(&self, line: &[u8], respond: &Respond) -> bool {
        if let Some(id) = super::http_calls::cancelled_call(line) {
            let call = self.in_flight.lock().remove(&id);
            return call.map(|(_, cancel)| cancel.cancel()).is_some();
        }
        let Some((id, pending)) = self.lane.take_line(line, &self.closed) else { return false };
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        self.in_flight.lock().insert(id.clone(), (serial, cancel.clone()));
        let (in_flight, respond) = (Arc::clone(&self.in_flight), Arc::clone(respond));
        tokio::spawn(async move {
            // Cancelled: the pending call is dropped, which cancels it downstream.
            tokio::select! {
                () = pending.deliver_lines(respond) => {}
                () = cancel.cancelled() => {}
            }
            let mut in_flight = in_flight.lock();
            if in_flight.get(&id).is_some_and(|(s, _)| *s == serial) {
                in_flight.remove(&id);
            }
        });
        true
    }

    /// The client closed its side: nothing in flight will be read.
    pub(crate) fn close(&self) {
        self.closed.cancel();
    }
}
