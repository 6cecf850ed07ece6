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

use axum::body::Bytes;
use axum::response::Response;
use http::header;
use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::Peer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::QuiverServer;
use super::call_streams::CallStreams;
use super::handler::ArmLane;
use super::http_answer::{CancelOnDrop, OneAnswer, Pending, answer_with, status};
use super::http_stateless_calls::StatelessLane;
use super::stdio_calls::{self, Taken};
use super::verbatim::VerbatimResults;
use crate::lines::QueuedLines;
use tokio_util::sync::CancellationToken;

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
    /// Cancelled as the listener shuts down (see [`Pending`]).
    shutdown: CancellationToken,
}

impl Lanes {
    /// Must be called inside the runtime (the stateless lane serves its
    /// handler, `stateless_server`, at once).
    pub fn new(
        sessions: Arc<CallStreams<LocalSessionManager>>,
        verbatim: Arc<VerbatimResults>,
        any_host: bool,
        stateless_server: QuiverServer,
        shutdown: CancellationToken,
    ) -> Self {
        let stateless = StatelessLane::new(stateless_server, Arc::clone(&verbatim));
        Lanes { sessions, verbatim, any_host, taken: Default::default(), stateless, shutdown }
    }

    /// How many calls were relayed from the lane so far.
    pub fn calls_taken(&self) -> u64 {
        self.taken.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Answers the POST (`parts`, `body`) here when it is a plain relayed
    /// call or the cancellation of one; `None` leaves it to rmcp.
    pub(crate) fn take(&self, parts: &http::request::Parts, body: &Bytes) -> Option<Taking> {
        let headers = &parts.headers;
        if !plain_media(headers) || !(self.any_host || loopback_host(headers)) {
            return None;
        }
        let Some(id) = headers.get(SESSION_ID_HEADER) else {
            let pending = self.stateless.take(headers, body, &self.shutdown)?;
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
        let shutdown = self.shutdown.clone();
        Some(Taking::Call(Pending { side, answer: rx, registration, cancel, finish: Box::new(|line| line), shutdown }))
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

impl ArmLane for Lanes {
    /// From now on session `session_id`'s plain relayed calls are answered
    /// here, by `server` (the session's handler) with `peer` as the client.
    fn arm(&self, session_id: &str, server: QuiverServer, peer: Peer<RoleServer>) {
        if let Some(routes) = self.sessions.session(session_id) {
            routes.calls().arm(server, peer);
        }
    }
}

/// A `Host` among rmcp's default allowed hosts (any port).
fn loopback_host(headers: &http::HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let Ok(authority) = http::uri::Authority::try_from(host) else { return false };
    let name = authority.host().trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "::1"
}

/// The call a `notifications/cancelled` body names, if it is one.
pub(crate) fn cancelled_call(body: &[u8]) -> Option<RequestId> {
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

#[cfg(test)]
#[path = "http_calls_tests.rs"]
mod tests;
