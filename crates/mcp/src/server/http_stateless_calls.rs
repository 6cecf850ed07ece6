//! A stateless (2026-07-28) relayed `tools/call` over HTTP, answered beside
//! rmcp like a session's (`http_calls`).
//!
//! rmcp serves each stateless request with a service of its own: a fresh
//! handler (a fresh quiver session), its own service loop task, the request
//! parsed into rmcp's enum and the answer serialized back, for a call the
//! gateway passes on unchanged. Here such a call is relayed on the one
//! handler this lane keeps for every stateless client (whose session shows
//! the head all stateless requests are shown, and loads nothing), and
//! answered with the server's result text and what the revision and quiver's
//! carried tail add to it: `resultType` and, when the client has loaded
//! tools, the tail token `_meta["quiver/tail"]`, as the general path answers.
//!
//! The lane takes a request only when rmcp's path would do nothing more:
//!
//! - rmcp's header checks pass without a word: the protocol version header
//!   and `_meta`'s agree on 2026-07-28, `Mcp-Method` and `Mcp-Name` name this
//!   call once each, no other `Mcp-` header, the tool's schema asks for none
//!   (SEP-2243), Accept, Content-Type and Host as for a session's call;
//! - nothing can ask the client anything: it declares no elicitation,
//!   sampling or roots (a server's request is then refused, as it would be),
//!   and no log level in `_meta` (it gets no log messages, as it would not);
//! - it is no retry (`inputResponses`, `requestState`) and no task;
//! - a stateless list has pinned the head already.
//!
//! Each call gets an id of the lane's own for its relay, so the same JSON-RPC
//! id from two clients never meets: progress is routed to its call's stream
//! by it, and the client's own id is written back into the answer.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, GetExtensions, Implementation, JsonRpcMessage, ProgressToken, RequestId, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::service::{RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::QuiverServer;
use super::http_answer::{CancelOnDrop, OneAnswer, Pending, answer_with};
use super::stateless_tail::TAIL_KEY;
use super::stdio_calls::{DirectCalls, RelayableCall, Taken};
use super::verbatim::VerbatimResults;
use super::verbatim::write_result_line;
use crate::lines::QueuedLines;
use crate::relay::CallStream;

/// The revision this lane answers (the only stateless one there is).
const VERSION: &str = "2026-07-28";

/// How many progress notifications wait for a slow reader of one call.
const SIDE_CHANNEL_CAPACITY: usize = 64;

pub(crate) struct StatelessLane {
    server: QuiverServer,
    calls: Arc<DirectCalls>,
    routes: Arc<LaneRoutes>,
    verbatim: Arc<VerbatimResults>,
    next: AtomicU64,
    /// The lane's client side as rmcp sees it: served over [`LaneTransport`].
    _running: RunningService<RoleServer, QuiverServer>,
}

impl StatelessLane {
    pub(crate) fn new(server: QuiverServer, verbatim: Arc<VerbatimResults>) -> Self {
        let routes = Arc::new(LaneRoutes::default());
        let transport = LaneTransport { routes: Arc::clone(&routes), closed: CancellationToken::new() };
        // A client that can be asked nothing: the relay refuses what a server asks.
        let info = serde_json::json!({"protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "quiver stateless lane", "version": "0"}});
        let info = serde_json::from_value(info).ok();
        let running = rmcp::service::serve_directly(server.clone(), transport, info);
        let calls = Arc::new(DirectCalls::default());
        calls.arm(server.clone(), running.peer().clone());
        StatelessLane { server, calls, routes, verbatim, next: AtomicU64::new(0), _running: running }
    }

    /// Relays the stateless POST (`headers`, `body`) when it is a plain call
    /// (see the module documentation); `None` leaves it to rmcp.
    pub(super) fn take(
        &self,
        headers: &http::HeaderMap,
        body: &Bytes,
        shutdown: &CancellationToken,
    ) -> Option<Pending> {
        let call = stateless_call_of(body)?;
        if !plain_headers(headers, &call.name) {
            return None;
        }
        self.relay(call, shutdown)
    }

    /// A stateless call read from a stdio line: no headers to check (the
    /// client's answer is the line the returned call's [`Pending::deliver_lines`]
    /// writes). The client's id for it is returned too, for its cancellation.
    pub(crate) fn take_line(&self, line: &[u8], shutdown: &CancellationToken) -> Option<(RequestId, Pending)> {
        let call = stateless_call_of(line)?;
        let id = call.id.clone();
        Some((id, self.relay(call, shutdown)?))
    }

    fn relay(&self, call: StatelessCall<'_>, shutdown: &CancellationToken) -> Option<Pending> {
        if !self.server.adopt_pinned_stateless_head() {
            return None;
        }
        let keys = self.server.tail_keys();
        // A token quiver cannot verify is ignored, as the general path ignores it.
        let mut loaded = call.tail.as_ref().and_then(|token| keys.verify(token)).unwrap_or_default();
        let arguments = call.arguments.map(RawValue::get);
        let (route, loads) = self.server.relay_route_loading(&call.name, arguments, Some(&loaded))?;
        if loads {
            loaded.push(call.name.to_string());
        }
        let token = (!loaded.is_empty()).then(|| keys.token(&loaded));

        let internal = RequestId::String(format!("quiver-lane-{}", self.next.fetch_add(1, Ordering::Relaxed)).into());
        let (side, registration) = self.routes.open(internal.clone());
        let (answer, rx) = OneAnswer::new();
        let respond = answer_with(Arc::clone(&answer), Arc::clone(&self.verbatim));
        let out = Arc::clone(&answer) as Arc<dyn QueuedLines>;
        let relayed =
            RelayableCall { id: internal.clone(), name: call.name, arguments: call.arguments, progress: call.progress };
        if let Taken::Queued(writer) = self.calls.relay_on(&relayed, route, &respond, &out)? {
            writer.flush();
        }
        self.server.note_stateless_lane_call();
        let client_id = call.id;
        let finish = Box::new(move |line: Vec<u8>| as_stateless_answer(&line, &client_id, token.as_ref()));
        let cancel = CancelOnDrop { calls: Arc::clone(&self.calls), id: Some(internal) };
        let registration = Box::new(registration);
        Some(Pending { side, answer: rx, registration, cancel, finish, shutdown: shutdown.clone() })
    }
}

/// A stateless `tools/call` as the lane reads it.
struct StatelessCall<'a> {
    id: RequestId,
    name: Cow<'a, str>,
    arguments: Option<&'a RawValue>,
    progress: Option<ProgressToken>,
    tail: Option<Value>,
}

/// `body` when it is a stateless `tools/call` the lane may take: its `_meta`
/// has the revision's three members and at most a progress token and a tail
/// besides, and the client can be asked nothing.
fn stateless_call_of(body: &[u8]) -> Option<StatelessCall<'_>> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        jsonrpc: Cow<'a, str>,
        id: RequestId,
        #[serde(borrow)]
        method: Cow<'a, str>,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(rename = "_meta")]
        meta: Meta,
        #[serde(default)]
        task: Option<serde::de::IgnoredAny>,
        #[serde(rename = "inputResponses", default)]
        input_responses: Option<serde::de::IgnoredAny>,
        #[serde(rename = "requestState", default)]
        request_state: Option<serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Meta {
        #[serde(rename = "progressToken", default)]
        progress_token: Option<ProgressToken>,
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: String,
        // Read to require them as rmcp does (it answers -32602 without).
        #[serde(rename = "io.modelcontextprotocol/clientInfo")]
        _client: Implementation,
        #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
        capabilities: ClientCapabilities,
        #[serde(rename = "quiver/tail", default)]
        tail: Option<Value>,
    }
    let line: Line = serde_json::from_slice(crate::lines::without_bom(body)).ok()?;
    let Params { name, arguments, meta, task, input_responses, request_state } = line.params;
    let plain = line.jsonrpc == "2.0"
        && line.method == "tools/call"
        && task.is_none()
        && input_responses.is_none()
        && request_state.is_none()
        && meta.version == VERSION
        && arguments.is_none_or(|a| a.get().trim_start().starts_with('{'));
    let capabilities = &meta.capabilities;
    let askable = capabilities.elicitation.is_some() || capabilities.sampling.is_some() || capabilities.roots.is_some();
    (plain && !askable).then_some(StatelessCall {
        id: line.id,
        name,
        arguments,
        progress: meta.progress_token,
        tail: meta.tail,
    })
}

/// Whether rmcp would take a stateless call of `name` with these headers
/// without a word (and nothing else in them asks for its checks).
fn plain_headers(headers: &http::HeaderMap, name: &str) -> bool {
    let one = |header: &str, want: &str| {
        let mut values = headers.get_all(header).iter();
        values.next().is_some_and(|v| v.as_bytes() == want.as_bytes()) && values.next().is_none()
    };
    let only_known = headers.keys().all(|key| {
        let key = key.as_str();
        !key.starts_with("mcp-") || matches!(key, "mcp-method" | "mcp-name" | "mcp-protocol-version")
    });
    one("mcp-protocol-version", VERSION) && one("mcp-method", "tools/call") && one("mcp-name", name) && only_known
}

/// The client's answer: `line` (the relay's, under the lane's id) with the
/// client's `id`, and its result given `resultType` and the client's tail
/// `token` when it lacks them.
fn as_stateless_answer(line: &[u8], id: &RequestId, token: Option<&Value>) -> Vec<u8> {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default)]
        result: Option<&'a RawValue>,
    }
    let result = serde_json::from_slice::<Envelope>(line).ok().and_then(|e| e.result);
    let Some(result) = result else {
        // Not a result (the relay answers with results only): its id put right.
        let mut message: Value = serde_json::from_slice(line).unwrap_or_default();
        message["id"] = serde_json::to_value(id).unwrap_or_default();
        return serde_json::to_vec(&message).unwrap_or_default();
    };
    let text = with_stateless_members(result.get(), token);
    let mut out = Vec::with_capacity(text.len() + 48);
    write_result_line(&mut out, id, text.as_bytes());
    out.pop_if(|b| *b == b'\n');
    out
}

/// `result` (an object's text) with `"resultType":"complete"` and the tail
/// token in `_meta` added where they are missing; written in front, so the
/// server's own text follows unchanged.
fn with_stateless_members<'a>(result: &'a str, token: Option<&Value>) -> Cow<'a, str> {
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(rename = "resultType", default)]
        result_type: Option<serde::de::IgnoredAny>,
        #[serde(rename = "_meta", default)]
        meta: Option<serde::de::IgnoredAny>,
    }
    let Ok(top) = serde_json::from_str::<Top>(result) else { return Cow::Borrowed(result) };
    if top.meta.is_some() && token.is_some() {
        // The server's own `_meta` takes the token beside its members.
        let mut value: Value = serde_json::from_str(result).unwrap_or_default();
        if let (Some(meta), Some(token)) = (value.get_mut("_meta").and_then(Value::as_object_mut), token) {
            meta.insert(TAIL_KEY.into(), token.clone());
        }
        if let Some(object) = value.as_object_mut() {
            object.entry("resultType").or_insert_with(|| "complete".into());
        }
        return Cow::Owned(value.to_string());
    }
    let mut members = Vec::new();
    if top.result_type.is_none() {
        members.push(r#""resultType":"complete""#.to_string());
    }
    if let Some(token) = token {
        members.push(format!(r#""_meta":{{"{TAIL_KEY}":{token}}}"#));
    }
    if members.is_empty() {
        return Cow::Borrowed(result);
    }
    let rest = result.trim_start().strip_prefix('{').unwrap_or(result).trim_start();
    let comma = if rest.starts_with('}') { "" } else { "," };
    Cow::Owned(format!("{{{}{comma}{rest}", members.join(",")))
}

/// The lane's calls' streams: the lane's id for a call → its side channel.
#[derive(Default)]
struct LaneRoutes {
    open: Mutex<HashMap<RequestId, mpsc::Sender<ServerJsonRpcMessage>>>,
}

impl LaneRoutes {
    fn open(self: &Arc<Self>, id: RequestId) -> (mpsc::Receiver<ServerJsonRpcMessage>, LaneRegistration) {
        let (tx, rx) = mpsc::channel(SIDE_CHANNEL_CAPACITY);
        self.open.lock().insert(id.clone(), tx);
        (rx, LaneRegistration { routes: Arc::clone(self), id })
    }
}

/// Forgets a call's side channel when its response is done.
struct LaneRegistration {
    routes: Arc<LaneRoutes>,
    id: RequestId,
}

impl Drop for LaneRegistration {
    fn drop(&mut self) {
        self.routes.open.lock().remove(&self.id);
    }
}

/// The lane's side of rmcp: what the relay sends "the client" goes to the
/// stream of the call it is marked with. Only progress is sent on: the
/// lane's clients asked for no log messages, and a server's request is
/// refused before it is sent (the lane's client declares no capability).
struct LaneTransport {
    routes: Arc<LaneRoutes>,
    closed: CancellationToken,
}

impl Transport<RoleServer> for LaneTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let side = match &item {
            JsonRpcMessage::Notification(n)
                if matches!(n.notification, ServerNotification::ProgressNotification(_)) =>
            {
                let call = n.notification.extensions().get::<CallStream>().map(|c| c.0.clone());
                call.and_then(|call| self.routes.open.lock().get(&call).cloned())
            }
            _ => None,
        };
        async move {
            if let Some(tx) = side {
                // A closed stream: the client stopped reading that call.
                let _ = tx.send(item).await;
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        let closed = self.closed.clone();
        async move {
            closed.cancelled().await;
            None
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed.cancel();
        Ok(())
    }
}

#[cfg(test)]
#[path = "http_stateless_calls_tests.rs"]
mod tests;
