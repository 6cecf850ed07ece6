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
//! Connections waiting here are bounded. At the bound the oldest one that
//! has sent nothing for [`SILENT_FOR`] (a flood's) is answered at once and
//! closed to make room. Counting alone was not enough: under a flood of
//! 2,300 connections a second, 128 newer connections arrived within 50 ms,
//! and a client whose request was still being written on a busy machine was
//! pushed out before it (hyper: `UnexpectedMessage`; 11 of 300 in one CI
//! run). When every waiting connection is younger than that, or reading a
//! request, the accept loop waits for a place ([`Refusals::room`]): new
//! connections queue in the kernel's backlog, which delays them instead of
//! cutting them. A connection pushed out whose request has arrived but not
//! yet been read is answered after it all the same.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::has_bytes_waiting;

/// Refused connections waiting for their request at once (file descriptors
/// beside the listener's `max_connections`).
pub(super) const WAITING_MAX: usize = 128;

/// How long a waiting connection must have sent nothing before a newer one
/// may take its place (at most the whole wait): a client's request follows
/// its connect within milliseconds, even on a loaded machine.
const SILENT_FOR: Duration = Duration::from_millis(250);

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
    silent_for: Duration,
    state: Mutex<Waiting>,
    /// Told whenever a waiting connection leaves (see [`Refusals::room`]).
    left: Notify,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    /// By arrival (oldest first).
    connections: BTreeMap<u64, Entry>,
}

struct Entry {
    entered: Instant,
    /// Whether it has sent anything.
    active: Arc<AtomicBool>,
    /// Tells it to give up waiting.
    pushed_out: Arc<Notify>,
}

/// Whether a newer connection can enter the waiting set now.
enum Room {
    Now,
    /// At this instant the oldest silent connection may be pushed out.
    At(Instant),
    /// Every waiting connection is reading a request: when one leaves.
    WhenOneLeaves,
}

impl Refusals {
    /// `wait`: how long a refused connection's request is waited for.
    pub(super) fn new(wait: Duration) -> Arc<Self> {
        Arc::new(Refusals {
            wait,
            silent_for: SILENT_FOR.min(wait),
            state: Mutex::new(Waiting::default()),
            left: Notify::new(),
        })
    }

    /// Returns once a connection refused now would find a place: at once,
    /// unless every place is held by a connection that is reading its
    /// request or has been silent for less than [`SILENT_FOR`]. The accept
    /// loop waits here before accepting, so a flood faster than the places
    /// free queues in the kernel's backlog.
    pub(super) async fn room(&self) {
        loop {
            // Registered before the check, so a leave in between is not missed.
            let left = self.left.notified();
            let room = self.state.lock().room(Instant::now(), self.silent_for);
            match room {
                Room::Now => return,
                Room::At(when) => {
                    tokio::select! {
                        () = left => {}
                        () = tokio::time::sleep_until(when) => {}
                    }
                }
                Room::WhenOneLeaves => left.await,
            }
        }
    }

    /// Turns `stream` away with `response` (a whole HTTP response with
    /// `Connection: close`), after its request when one comes.
    pub(super) fn refuse(self: &Arc<Self>, stream: TcpStream, response: &'static [u8]) {
        self.refuse_after(stream, response, Vec::new());
    }

    /// [`Refusals::refuse`] for a connection of which `read` was read
    /// already (the start of its request).
    pub(super) fn refuse_after(self: &Arc<Self>, stream: TcpStream, response: &'static [u8], read: Vec<u8>) {
        let active = Arc::new(AtomicBool::new(!read.is_empty()));
        let (id, pushed_out) = self.enter(active.clone());
        let refusals = Arc::clone(self);
        tokio::spawn(async move {
            let mut stream = stream;
            let waited = Waited { wait: refusals.wait, active: &active, pushed_out: &pushed_out };
            answer(&mut stream, response, read, waited).await;
            refusals.leave(id);
        });
    }

    /// A place among the waiting, pushing out the oldest connection silent
    /// for [`SILENT_FOR`] at the bound. With none such (it spoke since
    /// [`Refusals::room`] looked) the bound is passed by one.
    fn enter(&self, active: Arc<AtomicBool>) -> (u64, Arc<Notify>) {
        let mut state = self.state.lock();
        let now = Instant::now();
        let old_enough = |(id, e): (u64, &Entry)| (now >= e.entered + self.silent_for).then_some(id);
        let victim = (state.connections.len() >= WAITING_MAX).then(|| state.oldest_silent().and_then(old_enough));
        if let Some(entry) = victim.flatten().and_then(|id| state.connections.remove(&id)) {
            entry.pushed_out.notify_one();
        }
        let id = state.next;
        state.next += 1;
        let pushed_out = Arc::new(Notify::new());
        state.connections.insert(id, Entry { entered: now, active, pushed_out: pushed_out.clone() });
        (id, pushed_out)
    }

    fn leave(&self, id: u64) {
        self.state.lock().connections.remove(&id);
        self.left.notify_waiters();
    }
}

impl Waiting {
    /// The oldest waiting connection that has sent nothing.
    fn oldest_silent(&self) -> Option<(u64, &Entry)> {
        self.connections.iter().find(|(_, e)| !e.active.load(Ordering::Relaxed)).map(|(id, e)| (*id, e))
    }

    fn room(&self, now: Instant, silent_for: Duration) -> Room {
        if self.connections.len() < WAITING_MAX {
            return Room::Now;
        }
        match self.oldest_silent() {
            Some((_, e)) if now >= e.entered + silent_for => Room::Now,
            Some((_, e)) => Room::At(e.entered + silent_for),
            None => Room::WhenOneLeaves,
        }
    }
}

/// How a refused connection waits for its request.
struct Waited<'a> {
    /// The longest wait for the request.
    wait: Duration,
    /// Set on its first byte.
    active: &'a AtomicBool,
    /// Told when a newer connection takes its place.
    pushed_out: &'a Notify,
}

/// Reads the request (head, then the body its `Content-Length` declares;
/// `head` holds what was read of it already) within the wait, writes
/// `response`, shuts the write side and reads until the client closes, each
/// step bounded. Pushed out while silent, with no bytes waiting on the
/// socket, it writes `response` at once and closes.
async fn answer(stream: &mut TcpStream, response: &[u8], mut head: Vec<u8>, waited: Waited<'_>) {
    let Waited { wait, active, pushed_out } = waited;
    let deadline = Instant::now() + wait;
    let mut buf = vec![0u8; 8 * 1024];
    let mut body_left = 0usize;
    let mut pushed = false;
    loop {
        if let Some(end) = memchr::memmem::find(&head, b"\r\n\r\n") {
            let after = head.len() - (end + 4);
            body_left = content_length(&head[..end]).saturating_sub(after).min(DRAIN_MAX);
            break;
        }
        if head.len() > HEAD_MAX {
            break;
        }
        let read = tokio::select! {
            read = tokio::time::timeout_at(deadline, stream.read(&mut buf)) => read,
            () = pushed_out.notified(), if !pushed => {
                pushed = true;
                if head.is_empty() && !has_bytes_waiting(stream) {
                    // It sent nothing for SILENT_FOR: nothing is left unread to reset.
                    let _ = stream.try_write(response);
                    return;
                }
                // Its request came while it was being pushed out: read it, answer after it.
                continue;
            }
        };
        match read {
            Ok(Ok(n)) if n > 0 => {
                active.store(true, Ordering::Relaxed);
                head.extend_from_slice(&buf[..n]);
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

    /// At the bound the oldest connection silent for `SILENT_FOR` makes
    /// room; a younger one does not (its request may be on its way), nor
    /// does one that has sent something, and the accept loop is told to wait.
    #[tokio::test(start_paused = true)]
    async fn only_a_connection_silent_long_enough_makes_room() {
        let refusals = Refusals::new(Duration::from_secs(1));
        let flags: Vec<Arc<AtomicBool>> = (0..WAITING_MAX).map(|_| Arc::new(AtomicBool::new(false))).collect();
        let entered: Vec<_> = flags.iter().map(|f| refusals.enter(f.clone())).collect();
        let room = || refusals.state.lock().room(Instant::now(), refusals.silent_for);
        assert!(matches!(room(), Room::At(when) if when == Instant::now() + SILENT_FOR), "all are young");

        tokio::time::advance(SILENT_FOR).await;
        flags[0].store(true, Ordering::Relaxed);
        assert!(matches!(room(), Room::Now));
        let newer = refusals.enter(Arc::new(AtomicBool::new(false)));
        let waiting = |id: u64| refusals.state.lock().connections.contains_key(&id);
        assert!(waiting(entered[0].0), "it has sent its request");
        assert!(!waiting(entered[1].0), "the oldest silent one left");
        assert!(waiting(newer.0));
        assert_eq!(refusals.state.lock().connections.len(), WAITING_MAX);

        refusals.state.lock().connections.values().for_each(|e| e.active.store(true, Ordering::Relaxed));
        assert!(matches!(room(), Room::WhenOneLeaves));
        // Entered anyway (it spoke since `room` looked): the bound passes by one.
        refusals.enter(Arc::new(AtomicBool::new(false)));
        assert_eq!(refusals.state.lock().connections.len(), WAITING_MAX + 1);
    }

    /// `room` waits while the places are held, and returns when one leaves.
    #[tokio::test(start_paused = true)]
    async fn the_accept_loop_waits_for_a_place() {
        let refusals = Refusals::new(Duration::from_secs(1));
        let ids: Vec<u64> = (0..WAITING_MAX).map(|_| refusals.enter(Arc::new(AtomicBool::new(true))).0).collect();
        let waiting = tokio::spawn({
            let refusals = refusals.clone();
            async move { refusals.room().await }
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!waiting.is_finished(), "every place is reading a request");
        refusals.leave(ids[7]);
        tokio::time::timeout(Duration::from_millis(10), waiting).await.expect("a place freed").unwrap();
    }
}
