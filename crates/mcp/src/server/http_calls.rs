//! A session's relayed `tools/call` over streamable HTTP, answered beside
//! rmcp: the HTTP twin of what `stdio_calls` does on stdio.
//!
//! Through rmcp, one call of a tool on a server behind quiver is read into
//! rmcp's message enum, handed to the session's worker and on to its service
//! loop (two channel hops), run by a handler task through dispatch and rmcp's
//! client, and its answer serialized as an SSE event that `http_plain` reads
//! back to make one JSON body. For a call that dispatch would pass on
//! unchanged ([`DirectCalls::relay_call`]: the same test as on stdio), none
//! of that changes a byte: here it is relayed from the POST's own task, the
//! arguments' text going down as the client wrote it and the server's result
//! text coming back as the response body. That path was where quiver's HTTP
//! gateway lost to a plain proxy (`bench/gateway`).
//!
//! What the client gets is what rmcp's path would give it: one JSON object
//! when the answer is the first thing to send (as `http_plain` answers),
//! else an SSE stream with what the relay sent first (progress, a log
//! message, a server's request: `call_streams` routes them into this call's
//! side channel) and then the answer. A client's answer to a relayed request
//! goes through rmcp, which sent the request. The connection dropping, or a
//! `notifications/cancelled` for the call, cancels it downstream.
//!
//! Only a plain request is taken: a live session's (whose client sent
//! `notifications/initialized`, which arms the lane), a relayable call,
//! headers rmcp would accept without a word (Accept, Content-Type, a Host it
//! allows, no protocol version but the session's). Anything else goes to
//! rmcp, which answers or refuses it as before.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::header::{self, HeaderValue};
use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use rmcp::service::Peer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::{mpsc, oneshot};

use super::QuiverServer;
use super::call_streams::CallStreams;
use super::http_stateless_calls::StatelessLane;
use super::stdio_calls::{self, DirectCalls, Reply, Respond, Taken};
use super::verbatim::VerbatimResults;
use crate::lines::QueuedLines;

/// The header naming a request's MCP session.
const SESSION_ID_HEADER: &str = "mcp-session-id";

/// The sessions of one HTTP listener, as the lane and the handlers see them.
pub struct Lanes {
    sessions: Arc<CallStreams<LocalSessionManager>>,
    verbatim: Arc<VerbatimResults>,
    /// rmcp checks the `Host` of every request only when this is false.
    any_host: bool,
    /// Calls relayed from here so far (for tests and benches to tell the paths apart).
    taken: std::sync::atomic::AtomicU64,
    /// Stateless (2026-07-28) calls (`http_stateless_calls`).
    stateless: StatelessLane,
}

impl Lanes {
    /// Must be called inside the runtime (the stateless lane serves its
    /// handler, `stateless_server`, at once).
    pub fn new(
        sessions: Arc<CallStreams<LocalSessionManager>>,
        verbatim: Arc<VerbatimResults>,
        any_host: bool,
        stateless_server: QuiverServer,
    ) -> Self {
        let stateless = StatelessLane::new(stateless_server, Arc::clone(&verbatim));
        Lanes { sessions, verbatim, any_host, taken: Default::default(), stateless }
    }

    /// How many calls were relayed from the lane so far.
    pub fn calls_taken(&self) -> u64 {
        self.taken.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Arms session `session_id`'s lane: from now on its plain relayed calls
    /// are answered here, by `server` (the session's handler) with `peer` as
    /// the client. Called when the client says it is initialized.
    pub(crate) fn arm(&self, session_id: &str, server: QuiverServer, peer: Peer<RoleServer>) {
        if let Some(routes) = self.sessions.session(session_id) {
            routes.calls().arm(server, peer);
        }
    }

    /// Answers the POST (`parts`, `body`) here when it is a plain relayed
    /// call or the cancellation of one; `None` leaves it to rmcp.
    pub(crate) fn take(&self, parts: &http::request::Parts, body: &Bytes) -> Option<Taking> {
        let headers = &parts.headers;
        if !plain_media(headers) || !(self.any_host || loopback_host(headers)) {
            return None;
        }
        let Some(id) = headers.get(SESSION_ID_HEADER) else {
            let pending = self.stateless.take(headers, body)?;
            self.taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Some(Taking::Call(pending));
        };
        let routes = self.sessions.session(id.to_str().ok()?)?;
        let calls = Arc::clone(routes.calls());
        if !session_version(headers, calls.negotiated_version()?) {
            return None;
        }
        if let Some(id) = cancelled_call(body)
            && calls.cancel(&id)
        {
            return Some(Taking::Cancelled);
        }
        let call = stdio_calls::relayable_call_of(body)?;
        // Open before the call goes down, so nothing relayed for it is missed.
        let (side, registration) = routes.open_lane(call.id.clone());
        let (answer, rx) = OneAnswer::new();
        let respond = answer_with(Arc::clone(&answer), Arc::clone(&self.verbatim));
        let out = Arc::clone(&answer) as Arc<dyn QueuedLines>;
        match calls.relay_call(&call, &respond, &out)? {
            Taken::Queued(writer) => writer.flush(),
            Taken::Yes | Taken::No => {}
        }
        self.taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cancel = CancelOnDrop { calls, id: Some(call.id) };
        let registration = Box::new(registration);
        Some(Taking::Call(Pending { side, answer: rx, registration, cancel, finish: Box::new(|line| line) }))
    }
}

/// Whether rmcp would take the media types of a POST without a word: the
/// client accepts both JSON and SSE and sends JSON.
fn plain_media(headers: &http::HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for essence in headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.split(';').next().unwrap_or("").trim())
    {
        json |= essence.eq_ignore_ascii_case("application/json");
        sse |= essence.eq_ignore_ascii_case("text/event-stream");
    }
    let content_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"));
    json && sse && content_json
}

/// Whether a session's POST names no protocol version but the session's
/// (`version`; a revision with SEP-2243's headers brings checks of its own).
fn session_version(headers: &http::HeaderMap, version: &str) -> bool {
    let standard = rmcp::model::ProtocolVersion::STANDARD_HEADERS;
    headers
        .get("mcp-protocol-version")
        .is_none_or(|v| v.as_bytes() == version.as_bytes() && version < standard.as_str())
}

/// A `Host` among rmcp's default allowed hosts (any port).
fn loopback_host(headers: &http::HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let Ok(authority) = http::uri::Authority::try_from(host) else { return false };
    let name = authority.host().trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "::1"
}

/// The call a `notifications/cancelled` body names, if it is one.
fn cancelled_call(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Cancelled<'a> {
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
        params: Params,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    // Most bodies are calls: one substring search keeps them from a second parse.
    memchr::memmem::find(body, b"notifications/cancelled")?;
    let cancelled: Cancelled = serde_json::from_slice(crate::lines::without_bom(body)).ok()?;
    (cancelled.method == "notifications/cancelled").then_some(cancelled.params.request_id)
}

/// What the lane took.
pub(crate) enum Taking {
    /// A call's cancellation: answered `202 Accepted`, as rmcp answers a notification.
    Cancelled,
    Call(Pending),
}

impl Taking {
    pub(crate) async fn response(self) -> Response {
        match self {
            Taking::Cancelled => status(http::StatusCode::ACCEPTED),
            Taking::Call(pending) => pending.response().await,
        }
    }
}

fn empty_stream() -> Response {
    let mut response = Response::new(Body::empty());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    response
}

fn status(code: http::StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

/// A call relayed from the lane, not answered yet.
pub(crate) struct Pending {
    pub(super) side: mpsc::Receiver<ServerJsonRpcMessage>,
    pub(super) answer: oneshot::Receiver<Vec<u8>>,
    /// Keeps the call's side channel open while it is held.
    pub(super) registration: Box<dyn Send + Sync>,
    pub(super) cancel: CancelOnDrop,
    /// What the client gets for the answer line (a stateless call's is rewritten).
    pub(super) finish: Finish,
}

/// Turns the answer line (its final newline gone) into the body the client gets.
pub(super) type Finish = Box<dyn FnOnce(Vec<u8>) -> Vec<u8> + Send + Sync>;

impl Pending {
    async fn response(mut self) -> Response {
        tokio::select! {
            // What the relay queued first goes out first.
            biased;
            Some(first) = self.side.recv() => self.streamed(first),
            answer = &mut self.answer => {
                // No answer: the call was cancelled, and its stream ends with none (as rmcp's does).
                let Ok(mut line) = answer else { return empty_stream() };
                self.cancel.id = None;
                // Sent on the side channel before the answer came? Then a stream after all.
                line.pop_if(|b| *b == b'\n');
                let line = (self.finish)(line);
                if let Ok(first) = self.side.try_recv() {
                    let answer = Answer::Ready(Some(line));
                    return Self::stream(first, self.side, answer, self.cancel, self.registration, Box::new(|l| l));
                }
                let mut response = Response::new(Body::from(line));
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
        }
    }

    fn streamed(self, first: ServerJsonRpcMessage) -> Response {
        Self::stream(first, self.side, Answer::Waiting(self.answer), self.cancel, self.registration, self.finish)
    }

    /// An SSE stream: `first`, what else comes on the side channel, then the
    /// answer (and what was queued before it), then the end.
    fn stream(
        first: ServerJsonRpcMessage,
        side: mpsc::Receiver<ServerJsonRpcMessage>,
        answer: Answer,
        cancel: CancelOnDrop,
        registration: Box<dyn Send + Sync>,
        finish: Finish,
    ) -> Response {
        let finish = Some(finish);
        let state = Streaming { side, answer, cancel, _registration: registration, finish, done: false };
        let head = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(event(&first)) });
        let rest = futures::stream::unfold(state, |mut state| async move {
            let bytes = state.next().await?;
            Some((Ok(bytes), state))
        });
        let mut response = Response::new(Body::from_stream(futures::StreamExt::chain(head, rest)));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

enum Answer {
    Waiting(oneshot::Receiver<Vec<u8>>),
    Ready(Option<Vec<u8>>),
}

struct Streaming {
    side: mpsc::Receiver<ServerJsonRpcMessage>,
    answer: Answer,
    cancel: CancelOnDrop,
    /// Held for its drop: the call's side channel stays open until then.
    _registration: Box<dyn Send + Sync>,
    finish: Option<Finish>,
    done: bool,
}

impl Streaming {
    /// The next event's bytes; `None` once the answer went out.
    async fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        if let Answer::Waiting(answer) = &mut self.answer {
            tokio::select! {
                biased;
                Some(message) = self.side.recv() => return Some(event(&message)),
                line = answer => {
                    self.cancel.id = None;
                    self.answer = Answer::Ready(line.ok());
                }
            }
        }
        // Answered: what was queued before the answer, then the answer.
        if let Ok(message) = self.side.try_recv() {
            return Some(event(&message));
        }
        self.done = true;
        let Answer::Ready(line) = &mut self.answer else { return None };
        let mut line = line.take()?;
        line.pop_if(|b| *b == b'\n');
        let line = match self.finish.take() {
            Some(finish) => finish(line),
            None => line,
        };
        Some(data_event(&line))
    }
}

fn event(message: &ServerJsonRpcMessage) -> Bytes {
    data_event(&serde_json::to_vec(message).unwrap_or_default())
}

fn data_event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Cancels the call downstream unless it was answered (`id` taken) first:
/// the client hung up, or the server is shutting down.
pub(super) struct CancelOnDrop {
    pub(super) calls: Arc<DirectCalls>,
    pub(super) id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.calls.cancel(&id);
        }
    }
}

/// The one answer line a call on the lane gets, however it is made: queued
/// where the server's output is read ([`QueuedLines`]), or written by the
/// slow end ([`Respond`]).
pub(super) struct OneAnswer {
    line: Mutex<Vec<u8>>,
    tx: Mutex<Option<oneshot::Sender<Vec<u8>>>>,
}

impl OneAnswer {
    pub(super) fn new() -> (Arc<Self>, oneshot::Receiver<Vec<u8>>) {
        let (tx, rx) = oneshot::channel();
        (Arc::new(OneAnswer { line: Mutex::default(), tx: Mutex::new(Some(tx)) }), rx)
    }

    fn send(&self, line: Vec<u8>) {
        if let Some(tx) = self.tx.lock().take() {
            let _ = tx.send(line);
        }
    }
}

impl QueuedLines for OneAnswer {
    fn queue_with(&self, write: &mut dyn FnMut(&mut Vec<u8>)) {
        write(&mut self.line.lock());
    }

    fn flush(self: Arc<Self>) {
        let line = std::mem::take(&mut *self.line.lock());
        if !line.is_empty() {
            self.send(line);
        }
    }
}

/// The call's [`Respond`]: its reply encoded as the stdio transport encodes
/// one (a placeholder result as its verbatim text), into `answer`.
pub(super) fn answer_with(answer: Arc<OneAnswer>, verbatim: Arc<VerbatimResults>) -> Respond {
    Arc::new(move |reply| {
        let line = match reply {
            Reply::Message(message) => super::stdio_line::encode(&message, &verbatim),
            Reply::Result { id, text } => Ok(stdio_calls::result_line(&id, text.as_bytes())),
        };
        match line {
            Ok(line) => answer.send(line),
            Err(e) => tracing::warn!(error = %e, "could not encode a tool call's answer"),
        }
        Box::pin(async {})
    })
}

#[cfg(test)]
#[path = "http_calls_tests.rs"]
mod tests;
