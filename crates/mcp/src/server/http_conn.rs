//! The accept loop behind [`HttpServer`](super::HttpServer): admission limits,
//! header and body deadlines, bounded buffers.
//!
//! Without these, idle connections opened without a token exhausted the file
//! descriptors (authenticated calls then timed out), a body sent at 1 byte/s
//! held a connection forever, and a flood's buffers stayed allocated.
//!
//! - Every connection is *pending* until one of its requests passes the
//!   Origin and token checks. Pending connections are capped per client
//!   address and overall; when a cap is reached the oldest pending connection
//!   that has **sent nothing for longer than the first-byte grace** is closed
//!   to admit the new one, so an idle flood cannot lock out the legitimate
//!   client that connects after it (on loopback every client shares one
//!   address, so refusing new connections would).
//! - A connection that has sent bytes is never closed to make room (closing
//!   it dropped legitimate session starts mid-request, with no answer), nor
//!   is one younger than the grace (its request may be on its way). The idle
//!   connection that is closed reads `503` with `Retry-After` first: hyper
//!   hands its socket back, and nothing was ever written on it. With no
//!   such victim, the *new* connection is answered and closed: `429` with
//!   `Retry-After` at the per-address cap, `503` with `Retry-After` at the
//!   connection cap. A client never sees a silent close for lack of a slot.
//! - A refused connection reads its status as the answer to its request,
//!   never before it (see [`refusal`]): an HTTP client takes bytes that come
//!   before its request for a broken connection, and a close that leaves its
//!   request unread resets it. While every place for refused connections is
//!   held by one reading its request or silent for less than a moment, the
//!   accept loop waits: a flood faster than that queues in the kernel's
//!   backlog (a delay for everyone) instead of being cut unanswered.
//! - An idle connection (kept alive, or new) is closed after `idle_timeout`
//!   (hyper's header-read timer, which starts when it waits for a head), a
//!   head not complete `header_timeout` after its first byte is cut by
//!   [`head_clock`]; the
//!   request body has a total deadline (see `read_body`), not a per-read one,
//!   so a trickle is cut too.
//! - Refusals are logged with `tracing::warn!` at most once per burst window,
//!   with the count of those not logged.

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use http_body_util::BodyExt;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc, watch};

/// Limits of the HTTP listener. The defaults suit a local tool server.
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// A request head must be complete within this of its first byte.
    pub header_timeout: Duration,
    /// The longest a kept-alive connection may sit idle between requests
    /// (and a new one before its first request).
    pub idle_timeout: Duration,
    /// A request body must arrive whole within this, however it trickles.
    pub body_timeout: Duration,
    /// Open connections at once (kept well below the usual 1024 fd limit).
    pub max_connections: usize,
    /// Connections from one address that have not yet passed the token check
    /// (on loopback: every client's; so it bounds how many session starts
    /// may be under way at once).
    pub max_pending_per_address: usize,
    /// How long a new connection may stay silent before a newer one may take
    /// its slot: a client's request follows its connect within milliseconds,
    /// a flood's never comes.
    pub first_byte_grace: Duration,
    /// Live MCP sessions at once (each is a quiver session with its own
    /// state). At the cap an `initialize` is answered `503` with `Retry-After`.
    pub max_sessions: usize,
    /// A session with no message either way for this long, and no request
    /// open, is ended (rmcp's own default; see `call_streams`).
    pub session_idle_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: Duration::from_secs(10),
            // What clients expect to reuse: mcp-proxy, nginx and Go's
            // net/http keep an idle connection 75 s or more; quiver closed
            // it after 10 s.
            idle_timeout: Duration::from_secs(75),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_pending_per_address: 256,
            first_byte_grace: Duration::from_secs(1),
            max_sessions: 256,
            session_idle_timeout: Duration::from_secs(300),
        }
    }
}

/// Largest request body buffered before the rest is left to rmcp's own
/// limit (4 MiB, answered with 413): one more byte than that limit.
pub(super) const BODY_BUFFER_LIMIT: usize = 4 * 1024 * 1024 + 1;

/// hyper's read buffer per connection (its minimum is 8 KiB); bodies stream
/// through it, so a flood of connections holds little memory each.
const READ_BUFFER: usize = 64 * 1024;

/// A burst of refusals is logged once per this window.
const LOG_WINDOW: Duration = Duration::from_secs(10);

/// Who holds the connection slots.
pub(super) struct Admission {
    limits: HttpLimits,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    open: usize,
    /// Pending connections by admission order (oldest first).
    pending: BTreeMap<u64, Pending>,
    pending_per_address: HashMap<IpAddr, usize>,
    /// Evicted connections whose task has not yet dropped its ticket.
    evicted: HashSet<u64>,
    log: RefusalLog,
}

struct Pending {
    peer: IpAddr,
    admitted: Instant,
    evicted: Arc<Notify>,
    /// Whether the connection has sent anything yet (see [`Watched`]).
    active: Arc<AtomicBool>,
}

/// Why a connection got no slot: what the client is told before the close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its address holds `max_pending_per_address` connections that are
    /// mid-request or newer than the grace: 429.
    AddressBusy,
    /// Every slot is authenticated, mid-request or newer than the grace: 503.
    Full,
}

#[derive(Default)]
struct RefusalLog {
    window_start: Option<Instant>,
    unlogged: u64,
}

impl RefusalLog {
    fn note(&mut self, what: &str, peer: IpAddr) {
        let now = Instant::now();
        match self.window_start {
            Some(start) if now.duration_since(start) < LOG_WINDOW => self.unlogged += 1,
            _ => {
                tracing::warn!(
                    %peer,
                    earlier_unlogged = self.unlogged,
                    "HTTP listener: {what} (further refusals in the next {}s are counted, not logged)",
                    LOG_WINDOW.as_secs()
                );
                self.window_start = Some(now);
                self.unlogged = 0;
            }
        }
    }
}

/// A connection's slot; dropping it frees the slot.
pub(super) struct Ticket {
    id: u64,
    peer: IpAddr,
    evicted: Arc<Notify>,
    admission: Arc<Admission>,
}

impl Admission {
    pub(super) fn new(limits: HttpLimits) -> Arc<Self> {
        Arc::new(Admission { limits, state: Mutex::new(State::default()) })
    }

    pub(super) fn limits(&self) -> &HttpLimits {
        &self.limits
    }

    /// A slot for a new connection from `peer`, closing the oldest idle
    /// pending connection past its grace when a cap is reached; `Err` when
    /// there is none to close.
    pub(super) fn admit(self: &Arc<Self>, peer: IpAddr, active: Arc<AtomicBool>) -> Result<Ticket, Refusal> {
        let mut state = self.state.lock();
        let now = Instant::now();
        let grace = self.limits.first_byte_grace;
        let per_address = state.pending_per_address.get(&peer).copied().unwrap_or(0);
        if per_address >= self.limits.max_pending_per_address {
            match state.victim(|ip| ip == peer, now, grace) {
                Some(id) => {
                    state.evict(id);
                    state.log.note("closed the oldest idle unauthenticated connection of a client at its cap", peer);
                }
                None => {
                    state.log.note("refused a connection (429): its address has no idle pending one to close", peer);
                    return Err(Refusal::AddressBusy);
                }
            }
        }
        let closing = state.evicted.len();
        if state.open.saturating_sub(closing) >= self.limits.max_connections {
            match state.victim(|_| true, now, grace) {
                Some(id) => {
                    state.evict(id);
                    state.log.note("closed the oldest idle unauthenticated connection at the connection cap", peer);
                }
                None => {
                    state.log.note("refused a connection (503): no idle pending connection to close", peer);
                    return Err(Refusal::Full);
                }
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        state.open += 1;
        let evicted = Arc::new(Notify::new());
        state.pending.insert(id, Pending { peer, admitted: now, evicted: evicted.clone(), active });
        *state.pending_per_address.entry(peer).or_default() += 1;
        Ok(Ticket { id, peer, evicted, admission: self.clone() })
    }

    pub(super) fn note_refusal(&self, what: &str, peer: IpAddr) {
        self.state.lock().log.note(what, peer);
    }
}

impl State {
    /// Drops `id` from the pending set and tells its task to close. Its slot
    /// is freed when the task drops the ticket, a moment later: until then
    /// `open` may exceed the cap by the connections being closed.
    fn evict(&mut self, id: u64) {
        if let Some(pending) = self.pending.remove(&id) {
            self.unpend(pending.peer);
            self.evicted.insert(id);
            pending.evicted.notify_one();
        }
    }

    /// The pending connection of a matching peer to close for a new one: the
    /// oldest that has sent nothing for longer than `grace` (a flood's idle
    /// connection). None other: closing a connection whose request is on its
    /// way (sent, or about to be) drops it with no answer, so the new
    /// connection is refused with a status instead.
    fn victim(&self, matches: impl Fn(IpAddr) -> bool, now: Instant, grace: Duration) -> Option<u64> {
        self.pending
            .iter()
            .find(|(_, p)| {
                matches(p.peer) && !p.active.load(Ordering::Relaxed) && now.duration_since(p.admitted) >= grace
            })
            .map(|(id, _)| *id)
    }

    fn unpend(&mut self, peer: IpAddr) {
        if let Some(n) = self.pending_per_address.get_mut(&peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.pending_per_address.remove(&peer);
            }
        }
    }
}

impl Ticket {
    pub(super) fn peer(&self) -> IpAddr {
        self.peer
    }

    /// The connection passed the Origin and token checks: it keeps its slot.
    pub(super) fn authenticated(&self) {
        let mut state = self.admission.state.lock();
        if state.pending.remove(&self.id).is_some() {
            state.unpend(self.peer);
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.admission.state.lock();
        if state.pending.remove(&self.id).is_some() {
            state.unpend(self.peer);
        }
        state.evicted.remove(&self.id);
        state.open = state.open.saturating_sub(1);
    }
}

/// Reads a whole request body within `deadline`, up to [`BODY_BUFFER_LIMIT`].
/// `None`: the deadline passed (a slow or stalled sender).
pub(super) async fn read_body(body: Body, deadline: Duration) -> Option<Result<Bytes, axum::Error>> {
    let collect = async move {
        let mut body = body;
        let mut buf = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = match frame {
                Ok(f) => f,
                Err(e) => return Err(e),
            };
            if let Ok(data) = frame.into_data() {
                buf.extend_from_slice(&data);
                if buf.len() >= BODY_BUFFER_LIMIT {
                    break;
                }
            }
        }
        Ok(Bytes::from(buf))
    };
    tokio::time::timeout(deadline, collect).await.ok()
}

/// The next connection, with `TCP_NODELAY` set. Without it a small answer
/// waits for the client's delayed ACK (Nagle's algorithm): a kept-alive
/// client saw 44 ms per `tools/call` instead of under 1 ms.
pub(super) async fn accept(listener: &TcpListener) -> std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
    let (stream, peer) = listener.accept().await?;
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(%e, "cannot set TCP_NODELAY on an accepted connection");
    }
    Ok((stream, peer))
}

/// What a client refused for lack of a slot reads before the close: a status
/// it can act on (retry after a second), never a silent reset. Best effort
/// and without waiting: the few bytes fit any fresh socket's send buffer.
const FULL_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n\
Content-Length: 60\r\nConnection: close\r\n\r\nevery connection slot is held by a client that is using it\r\n";
const ADDRESS_BUSY_RESPONSE: &[u8] =
    b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n\
Content-Length: 56\r\nConnection: close\r\n\r\ntoo many connections from your address are mid-request\r\n";

/// What an idle connection closed to make room reads: it sent nothing for
/// longer than the first-byte grace while another client needed its slot.
const EVICTED_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n\
Content-Length: 64\r\nConnection: close\r\n\r\nthis connection sent no request while others waited for a slot\r\n";

fn refusal_response(why: Refusal) -> &'static [u8] {
    match why {
        Refusal::Full => FULL_RESPONSE,
        Refusal::AddressBusy => ADDRESS_BUSY_RESPONSE,
    }
}

/// How a connection's task ended its wait.
enum Ended {
    /// hyper finished with the connection (closed, timed out, or done).
    Served,
    /// Its slot was given to a newer connection.
    Evicted,
    /// The server is shutting down.
    Shutdown,
}

/// Serves one admitted connection until it ends, its slot is taken for a
/// newer one, or the server shuts down (then in-flight requests finish and
/// keep-alive stops).
async fn serve_connection(
    builder: http1::Builder,
    stream: Watched,
    service: impl hyper::service::Service<
        hyper::Request<hyper::body::Incoming>,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
        Future = impl Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send,
    > + Send,
    ticket: Arc<Ticket>,
    mut shutdown: watch::Receiver<bool>,
    (clock, head_limit): (Arc<HeadClock>, Duration),
    refusals: Arc<Refusals>,
) {
    let mut conn = builder.serve_connection(TokioIo::new(stream), service);
    let ended = tokio::select! {
        _ = &mut conn => Ended::Served,
        // Dropping the connection closes it, as hyper's own timeout would.
        () = clock.head_overdue(head_limit) => Ended::Served,
        () = ticket.evicted.notified() => Ended::Evicted,
        _ = shutdown.wait_for(|stop| *stop) => Ended::Shutdown,
    };
    match ended {
        Ended::Served => {}
        Ended::Evicted => {
            // Only a connection that had sent nothing is evicted, so hyper has
            // written nothing on it: the status is its first and only answer.
            // Its request may have come since it was chosen: then the status
            // answers that request, after it (bytes before a request read as
            // a broken connection).
            let parts = conn.into_parts();
            let stream = parts.io.into_inner().inner;
            if parts.read_buf.is_empty() && !has_bytes_waiting(&stream) {
                let _ = stream.try_write(EVICTED_RESPONSE);
            } else {
                refusals.refuse_after(stream, EVICTED_RESPONSE, parts.read_buf.to_vec());
            }
        }
        Ended::Shutdown => {
            std::pin::Pin::new(&mut conn).graceful_shutdown();
            let _ = conn.await;
        }
    }
    drop(ticket);
}

/// Serves connections until `shutdown` completes, then waits (bounded) for
/// the open ones to finish.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    admission: Arc<Admission>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    // Each connection's task holds a clone of `alive`: when every clone is
    // gone, `all_closed` reports it (the shutdown waits for that, bounded).
    let (alive, mut all_closed) = mpsc::channel::<()>(1);
    let (stop, stopping) = watch::channel(false);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(admission.limits().idle_timeout)
        .max_buf_size(READ_BUFFER)
        .keep_alive(true);
    // Refused connections are answered after their request (see `refusal`).
    let refusals = Refusals::new(admission.limits().first_byte_grace);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            // Waits while the refused connections' places are all needed.
            accepted = async { refusals.room().await; accept(&listener).await } => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // EMFILE/ENFILE and the like: back off instead of spinning.
                    admission.note_refusal(&format!("accept failed: {e}"), IpAddr::from([0, 0, 0, 0]));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // A client that sent its request with the connect has bytes waiting
        // already; one whose request comes later is marked on its first read.
        let active = Arc::new(AtomicBool::new(has_bytes_waiting(&stream)));
        let ticket = match admission.admit(peer.ip(), active.clone()) {
            Ok(ticket) => ticket,
            Err(why) => {
                refusals.refuse(stream, refusal_response(why));
                continue;
            }
        };
        let ticket = Arc::new(ticket);
        let clock = Arc::new(HeadClock::new());
        let stream = Watched { inner: stream, active, clock: clock.clone() };
        let service = connection_service(router.clone(), ticket.clone(), clock.clone());
        let head_limit = admission.limits().header_timeout;
        let (builder, stopping, alive, refusals) = (builder.clone(), stopping.clone(), alive.clone(), refusals.clone());
        tokio::spawn(async move {
            serve_connection(builder, stream, service, ticket, stopping, (clock, head_limit), refusals).await;
            drop(alive);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(alive);
    // SSE streams end with their sessions (the caller cancels them); a
    // connection stuck in a request gets a bounded grace period.
    let _ = tokio::time::timeout(Duration::from_secs(10), all_closed.recv()).await;
}

/// Whether `stream` has bytes to read right now (a peek, without waiting).
pub(super) fn has_bytes_waiting(stream: &tokio::net::TcpStream) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = tokio::io::ReadBuf::new(&mut byte);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    matches!(stream.poll_peek(&mut cx, &mut buf), std::task::Poll::Ready(Ok(n)) if n > 0)
}

/// A connection's stream that records when the client first sent something.
struct Watched {
    inner: tokio::net::TcpStream,
    active: Arc<AtomicBool>,
    clock: Arc<HeadClock>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.active.store(true, Ordering::Relaxed);
            self.clock.read();
        }
        polled
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn connection_service(
    router: Router,
    ticket: Arc<Ticket>,
    clock: Arc<HeadClock>,
) -> impl hyper::service::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(ticket.clone());
        let router = router.clone();
        clock.head_done();
        let in_service = InService(clock.clone());
        async move {
            let response = tower::ServiceExt::oneshot(router, request.map(Body::new)).await;
            drop(in_service);
            response
        }
    })
}

#[path = "http_head_clock.rs"]
mod head_clock;
use head_clock::{HeadClock, InService};

#[path = "http_refusal.rs"]
mod refusal;
use refusal::Refusals;

#[cfg(test)]
#[path = "http_conn_tests.rs"]
mod tests;
