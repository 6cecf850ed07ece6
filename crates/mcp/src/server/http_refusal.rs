//! Connections turned away for lack of a slot, answered as a reply to their
//! request rather than before it.
//!
//! A status written the moment a connection is accepted reaches a client
//! that has not yet sent its request: an HTTP client reads bytes on a
//! connection with no request in flight as a broken connection (hyper:
//! `UnexpectedMessage`), and closing a socket whose request was not read
//! resets it. Under a flood of connections from a client's own address,
//! 132 of 300 of its requests ended so, with no status at all. Here a
//! refused connection's request is read first (up to the first-byte grace),
//! then the status goes out, the write side is shut, and the socket is
//! drained until the client closes, so that nothing unread is left to reset.
//!
//! Connections waiting here are bounded: at the bound the oldest one that
//! has sent nothing (a flood's) is answered at once and closed to make room;
//! a client's request follows its connect within milliseconds, so it is
//! read long before that.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Refused connections waiting for their request at once (file descriptors
/// beside the listener's `max_connections`).
pub(super) const WAITING_MAX: usize = 128;

/// The longest request head read before answering, and the most of a body
/// or of what follows read before the close.
const HEAD_MAX: usize = 16 * 1024;
const DRAIN_MAX: usize = 256 * 1024;

/// How long the answer may take to write, and the client to close after it.
const WRITE_WAIT: Duration = Duration::from_secs(1);
const LINGER: Duration = Duration::from_secs(1);

/// Refused connections waiting for their request.
pub(super) struct Refusals {
    wait: Duration,
    state: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    /// By arrival (oldest first): whether it has sent anything, and how to
    /// tell it to give up waiting.
    connections: BTreeMap<u64, (Arc<AtomicBool>, Arc<Notify>)>,
}

/// How a refused connection's wait ended.
enum Waited {
    /// Its request was read (or the wait ran out, or it closed): answered.
    Answered,
    /// Newer connections needed its place while it had sent nothing.
    PushedOut,
}

impl Refusals {
    /// `wait`: how long a refused connection's request is waited for.
    pub(super) fn new(wait: Duration) -> Arc<Self> {
        Arc::new(Refusals { wait, state: Mutex::new(Waiting::default()) })
    }

    /// Turns `stream` away with `response` (a whole HTTP response with
    /// `Connection: close`), after its request when one comes.
    pub(super) fn refuse(self: &Arc<Self>, stream: TcpStream, response: &'static [u8]) {
        let active = Arc::new(AtomicBool::new(false));
        let Some((id, pushed_out)) = self.enter(active.clone()) else {
            // Every waiting connection is reading a request: this one is
            // answered as before, at once.
            let _ = stream.try_write(response);
            return;
        };
        let refusals = Arc::clone(self);
        tokio::spawn(async move {
            let mut stream = stream;
            let waited = tokio::select! {
                () = answer(&mut stream, response, refusals.wait, &active) => Waited::Answered,
                () = pushed_out.notified() => Waited::PushedOut,
            };
            if let Waited::PushedOut = waited {
                let _ = stream.try_write(response);
            }
            refusals.leave(id);
        });
    }

    /// A place among the waiting, pushing out the oldest silent one at the
    /// bound; `None` when every one has sent something.
    fn enter(&self, active: Arc<AtomicBool>) -> Option<(u64, Arc<Notify>)> {
        let mut state = self.state.lock();
        if state.connections.len() >= WAITING_MAX {
            let silent = state.connections.iter().find(|(_, (active, _))| !active.load(Ordering::Relaxed));
            let oldest = *silent?.0;
            if let Some((_, pushed_out)) = state.connections.remove(&oldest) {
                pushed_out.notify_one();
            }
        }
        let id = state.next;
        state.next += 1;
        let pushed_out = Arc::new(Notify::new());
        state.connections.insert(id, (active, pushed_out.clone()));
        Some((id, pushed_out))
    }

    fn leave(&self, id: u64) {
        self.state.lock().connections.remove(&id);
    }
}

/// Reads the request (head, then the body its `Content-Length` declares)
/// within `wait`, writes `response`, shuts the write side and reads until
/// the client closes, each step bounded.
async fn answer(stream: &mut TcpStream, response: &[u8], wait: Duration, active: &AtomicBool) {
    let deadline = Instant::now() + wait;
    let mut buf = vec![0u8; 8 * 1024];
    let mut head = Vec::new();
    let mut body_left = 0usize;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                active.store(true, Ordering::Relaxed);
                head.extend_from_slice(&buf[..n]);
                if let Some(end) = memchr::memmem::find(&head, b"\r\n\r\n") {
                    let after = head.len() - (end + 4);
                    body_left = content_length(&head[..end]).saturating_sub(after).min(DRAIN_MAX);
                    break;
                }
                if head.len() > HEAD_MAX {
                    break;
                }
            }
            // No (whole) request in time, or the client left: answered anyway.
            _ => break,
        }
    }
    let body_deadline = Instant::now() + LINGER;
    while body_left > 0 {
        match tokio::time::timeout_at(body_deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => body_left = body_left.saturating_sub(n),
            _ => break,
        }
    }
    if tokio::time::timeout(WRITE_WAIT, stream.write_all(response)).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    // What the client still sends (a body without a length) is read, not
    // left unread for the close to answer with a reset.
    let linger = Instant::now() + LINGER;
    let mut drained = 0usize;
    while drained < DRAIN_MAX {
        match tokio::time::timeout_at(linger, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => drained += n,
            _ => break,
        }
    }
}

/// A request head's `Content-Length` (0 when absent or unreadable).
fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_length_is_read_from_the_head() {
        assert_eq!(content_length(b"POST /mcp HTTP/1.1\r\nHost: x\r\ncontent-length: 42"), 42);
        assert_eq!(content_length(b"POST /mcp HTTP/1.1\r\nHost: x"), 0);
        assert_eq!(content_length(b"POST /mcp HTTP/1.1\r\nContent-Length: nope"), 0);
    }

    /// At the bound the oldest silent connection makes room; when all have
    /// sent something, none does.
    #[test]
    fn the_oldest_silent_connection_makes_room() {
        let refusals = Refusals::new(Duration::from_secs(1));
        let flags: Vec<Arc<AtomicBool>> = (0..WAITING_MAX).map(|_| Arc::new(AtomicBool::new(false))).collect();
        let entered: Vec<_> = flags.iter().map(|f| refusals.enter(f.clone()).unwrap()).collect();
        flags[0].store(true, Ordering::Relaxed);
        assert!(refusals.enter(Arc::new(AtomicBool::new(false))).is_some());
        assert!(refusals.state.lock().connections.contains_key(&entered[0].0), "it has sent its request");
        assert!(!refusals.state.lock().connections.contains_key(&entered[1].0), "the oldest silent one left");
        refusals.state.lock().connections.values().for_each(|(active, _)| active.store(true, Ordering::Relaxed));
        assert_eq!(refusals.state.lock().connections.len(), WAITING_MAX);
        assert!(refusals.enter(Arc::new(AtomicBool::new(false))).is_none());
    }
}
