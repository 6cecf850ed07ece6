//! `tools/call` over stdio answered beside rmcp's service loop.
//!
//! rmcp hands every message to one loop task: a request goes from the
//! transport to that task, which spawns the handler; the handler's answer
//! goes back through a channel to the same task, which spawns a task to write
//! it. At 8 calls in flight that loop, not the tools, bounded the gateway's
//! throughput, and its two hops and two spawns were a large part of quiver's
//! CPU per relayed call. Here the line transport takes a `tools/call` as it
//! reads it and runs rmcp's own request handling for it
//! ([`Service::handle_request`], so version checks, the handler and every
//! check of dispatch stay as they are) in one task that writes the answer
//! itself. Everything else — `initialize`, lists, notifications, the client's
//! answers to quiver's requests — still goes through rmcp.
//!
//! A plain call to a directly exposed server that dispatch would pass on
//! unchanged goes further: it is relayed ([`DirectCalls::relay`]), its
//! arguments' text sent down as the client wrote it and the server's result
//! text sent back, with no handler, no dispatch and no parse of the result.
//!
//! What rmcp's loop does for a request that matters here is kept: the
//! request's `_meta` (progress token, protocol version) and extensions go to
//! the handler's context, and `notifications/cancelled` for a call cancels
//! its context. Calls still in flight when the client closes its side are
//! cancelled.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientNotification, ClientRequest, GetExtensions, GetMeta, JsonRpcMessage,
    JsonRpcVersion2_0, NumberOrString, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{Peer, RoleServer, Service};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::QuiverServer;
use crate::client::calls;
use crate::client::child_lane::{AnswerSink, Delivery, RawAnswer, RawId, RawLane};
use crate::client::server::RelayRoute;
use crate::lines::QueuedLines;
use crate::relay::CancelOnDrop;

/// What goes to the client for a call.
pub(crate) enum Reply {
    Message(Box<TxJsonRpcMessage<RoleServer>>),
    /// A result as a downstream server wrote it (the `result` member's text).
    Result {
        id: RequestId,
        text: Arc<String>,
    },
    /// A whole line, made already (a stateless lane call's, `http_answer`).
    Line(Vec<u8>),
}

/// Writes one reply to the client (the transport's own writer).
pub(crate) type Respond = Arc<dyn Fn(Reply) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The session's calls answered beside rmcp (shared by the transport, which
/// reads them, and `serve_io`, which arms it once the handshake is done).
#[derive(Default)]
pub struct DirectCalls {
    armed: OnceLock<Armed>,
    /// Each call's cancellation, until it is answered.
    in_flight: Mutex<HashMap<RequestId, InFlight>>,
}

/// How a call in flight is cancelled.
enum InFlight {
    /// Its task's context is cancelled (the task drops what it awaits).
    Task(CancellationToken),
    /// A relayed call has no task: its request is forgotten on the lane and
    /// cancelled downstream.
    Relayed { lane: Arc<RawLane>, raw_id: RawId, conn: Arc<crate::client::connect::Connection> },
}

impl InFlight {
    fn cancel(self) {
        match self {
            InFlight::Task(token) => token.cancel(),
            InFlight::Relayed { lane, raw_id, conn } => {
                if lane.forget(&raw_id) {
                    // Dropped undone: sends `notifications/cancelled` downstream.
                    let peer = conn.service.peer().clone();
                    drop(CancelOnDrop { peer, id: NumberOrString::String(raw_id), done: false });
                }
            }
        }
    }
}

/// What the transport does with a line it read.
pub(crate) enum Taken {
    /// Not answered here: rmcp reads it.
    No,
    /// Answered here.
    Yes,
    /// Relayed: its request was queued on this writer, which the transport
    /// flushes once the lines read together are handled.
    Queued(Arc<dyn QueuedLines>),
}

struct Armed {
    server: QuiverServer,
    peer: Peer<RoleServer>,
    /// The client opened with `initialize` (a session on the inline
    /// lifecycle stores no peer info, and every request of it must carry
    /// its own `_meta`, which rmcp checks): its calls may be relayed.
    initialized: bool,
    /// The protocol version negotiated at `initialize`, if any.
    version: Option<String>,
}

impl DirectCalls {
    /// From now on `tools/call` is answered here, by `server` (a handle on
    /// the same session rmcp serves), with `peer` as the client.
    pub fn arm(&self, server: QuiverServer, peer: Peer<RoleServer>) {
        let info = peer.peer_info();
        let initialized = info.is_some();
        let version = info.map(|info| info.protocol_version.to_string());
        let _ = self.armed.set(Armed { server, peer, initialized, version });
    }

    /// Starts `line` when it is a `tools/call` answered here, read straight
    /// into its parameters; `false` leaves the line to the general parse.
    ///
    /// rmcp reads a message as an untagged enum of every request, answer and
    /// notification it knows, buffering the line and trying each in turn:
    /// that was a tenth of the gateway's CPU per relayed call. A line that is
    /// not plainly a call (another method, other params, an id-less or
    /// malformed message) gets rmcp's reading and its answers, unchanged.
    pub(crate) fn take_line(self: &Arc<Self>, line: &[u8], respond: &Respond, out: &Arc<dyn QueuedLines>) -> Taken {
        let Some(armed) = self.armed.get() else { return Taken::No };
        if let Some(taken) = self.relay_line(line, respond, out) {
            return taken;
        }
        let Some((id, request)) = call_of(line) else { return Taken::No };
        if request.get_meta().protocol_version().is_some() {
            return Taken::No;
        }
        self.start(armed, id, request, Arc::clone(respond));
        Taken::Yes
    }

    /// Relays `line` when it is a plain call that dispatch would pass on
    /// unchanged to a server behind ([`Self::relay`]); `None` leaves it. The
    /// HTTP lane (`http_calls`) takes only these: a call of quiver's own
    /// tools may send the client what only rmcp's session routes.
    pub(crate) fn relay_line(
        self: &Arc<Self>,
        line: &[u8],
        respond: &Respond,
        out: &Arc<dyn QueuedLines>,
    ) -> Option<Taken> {
        self.relay_call(&relayable_call_of(line)?, respond, out)
    }

    /// [`Self::relay_line`] for a call already read.
    pub(crate) fn relay_call(
        self: &Arc<Self>,
        call: &RelayableCall<'_>,
        respond: &Respond,
        out: &Arc<dyn QueuedLines>,
    ) -> Option<Taken> {
        let armed = self.armed.get()?;
        if !armed.initialized {
            return None;
        }
        let route = armed.server.relay_route(&call.name, call.arguments.map(RawValue::get))?;
        Some(match self.relay(armed, call, route, respond, out) {
            Some(writer) => Taken::Queued(writer),
            None => Taken::Yes,
        })
    }

    /// Relays `call` on `route` (found by the caller), as [`Self::relay_call`] does.
    pub(crate) fn relay_on(
        self: &Arc<Self>,
        call: &RelayableCall<'_>,
        route: RelayRoute,
        respond: &Respond,
        out: &Arc<dyn QueuedLines>,
    ) -> Option<Taken> {
        let armed = self.armed.get()?;
        Some(match self.relay(armed, call, route, respond, out) {
            Some(writer) => Taken::Queued(writer),
            None => Taken::Yes,
        })
    }

    /// Cancels call `id` if it is still in flight here (its client went
    /// away, or cancelled it); whether it was.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let call = self.in_flight.lock().remove(id);
        call.map(InFlight::cancel).is_some()
    }

    /// The protocol version the armed session's client negotiated.
    pub(crate) fn negotiated_version(&self) -> Option<&str> {
        self.armed.get()?.version.as_deref()
    }

    /// Takes `message` when it is answered here (a `tools/call`, or the
    /// cancellation of one taken); gives any other message back for rmcp.
    pub(crate) fn take(
        self: &Arc<Self>,
        message: RxJsonRpcMessage<RoleServer>,
        respond: &Respond,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        let Some(armed) = self.armed.get() else { return Some(message) };
        match message {
            // A request that names its protocol version in `_meta` (the
            // inline lifecycle) stays with rmcp, which scopes that version
            // around the handler for the checks it makes on it.
            JsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::CallToolRequest(_))
                    && request.request.get_meta().protocol_version().is_none() =>
            {
                self.start(armed, request.id, request.request, Arc::clone(respond));
                None
            }
            JsonRpcMessage::Notification(notification) => {
                let call = match &notification.notification {
                    ClientNotification::CancelledNotification(cancelled) => {
                        cancelled.params.request_id.as_ref().and_then(|id| self.in_flight.lock().remove(id))
                    }
                    _ => None,
                };
                if let Some(call) = call {
                    call.cancel();
                    return None;
                }
                Some(JsonRpcMessage::Notification(notification))
            }
            other => Some(other),
        }
    }

    /// Relays a call on `route` as the client wrote it: the arguments'
    /// text goes down unchanged and the server's result text comes back
    /// unchanged (unless it is large enough to spill, or the call fails:
    /// then the client gets what dispatch would have made of it).
    ///
    /// No task waits for the answer: the request is queued on the server's
    /// pipe (the returned writer; the transport flushes it once the lines
    /// read together are handled) and the answer is written to the client
    /// where the server's output is read ([`RelayedCall`]). `None` when the
    /// call was answered otherwise (the server's output had closed).
    fn relay(
        self: &Arc<Self>,
        armed: &Armed,
        call: &RelayableCall<'_>,
        route: RelayRoute,
        respond: &Respond,
        out: &Arc<dyn QueuedLines>,
    ) -> Option<Arc<dyn QueuedLines>> {
        armed.server.session().advance_turn();
        let raw_id = route.lane.new_id();
        let progress = call.progress.is_some();
        let arguments = call.arguments.map_or("{}", RawValue::get);
        // Downstream requests and notifications during the call reach this
        // client, as for any call (the relay).
        let upstream = crate::relay::Upstream {
            client: armed.server.client(),
            peer: armed.peer.clone(),
            request_id: call.id.clone(),
            progress_token: call.progress.clone(),
            input: None,
        };
        let guard = route.conn.relay.enter(upstream, progress.then(|| calls::progress_token(&raw_id)));
        let lane = Arc::clone(&route.lane);
        self.in_flight.lock().insert(
            call.id.clone(),
            InFlight::Relayed { lane: Arc::clone(&lane), raw_id: Arc::clone(&raw_id), conn: Arc::clone(&route.conn) },
        );
        let deadline = tokio::time::Instant::now() + route.server.config().tool_timeout;
        let spill_at = armed.server.session().state::<quiver_engine::spill::SpillStore>().threshold_bytes();
        let relayed = RelayedCall {
            calls: Arc::clone(self),
            id: call.id.clone(),
            // A direct server's tool has the client's name: one shared copy.
            name: if *call.name == *route.remote { Arc::clone(&route.remote) } else { Arc::from(&*call.name) },
            route,
            raw_id: Arc::clone(&raw_id),
            spill_at,
            _guard: guard,
            out: Arc::clone(out),
            respond: Arc::clone(respond),
        };
        let remote = Arc::clone(&relayed.route.remote);
        let mut write = |line: &mut Vec<u8>| calls::write_call_line(line, &raw_id, &remote, arguments, progress);
        lane.queue(Arc::clone(&raw_id), &mut write, Box::new(relayed), deadline)
    }

    fn start(self: &Arc<Self>, armed: &Armed, id: RequestId, mut request: ClientRequest, respond: Respond) {
        // As rmcp's loop does: the request's _meta and extensions move to the context.
        let mut context = RequestContext::new(id.clone(), armed.peer.clone());
        std::mem::swap(&mut context.meta, request.get_meta_mut());
        std::mem::swap(&mut context.extensions, request.extensions_mut());
        self.in_flight.lock().insert(id.clone(), InFlight::Task(context.ct.clone()));
        let server = armed.server.clone();
        let calls = Arc::clone(self);
        // Boxed: rmcp's `handle_request` future is sized for its largest
        // request, and tokio copies a task's future whole as it spawns it
        // and again as it finishes; behind a box each copy is a pointer.
        tokio::spawn(Box::pin(async move {
            let answer = match server.handle_request(request, context).await {
                Ok(result) => JsonRpcMessage::response(result, id.clone()),
                Err(error) => JsonRpcMessage::error(error, Some(id.clone())),
            };
            let cancelled = calls.in_flight.lock().remove(&id).is_none();
            // A cancelled call gets no answer (the client stopped waiting for it).
            if !cancelled {
                respond(Reply::Message(Box::new(answer))).await;
            }
        }));
    }

    /// The client closed its side: nothing in flight will be read.
    pub(crate) fn cancel_all(&self) {
        for (_, call) in self.in_flight.lock().drain() {
            call.cancel();
        }
    }
}

/// The members of a `tools/call` line; any other member is ignored, as
/// rmcp's reading ignores it.
#[derive(serde::Deserialize)]
struct CallLine<'a> {
    /// Read only to require `"2.0"`.
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: CallToolRequestParams,
}

/// `line` as a `tools/call` request with its `_meta` where rmcp puts it (the
/// request's extensions), or `None` when it is not one.
pub(crate) fn call_of(line: &[u8]) -> Option<(RequestId, ClientRequest)> {
    let CallLine { id, method, mut params, .. } = serde_json::from_slice(crate::lines::without_bom(line)).ok()?;
    if method != "tools/call" {
        return None;
    }
    let meta = params.meta.take();
    let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    if let Some(meta) = meta {
        *request.get_meta_mut() = meta;
    }
    Some((id, request))
}

/// A relayed call waiting on its server's lane for the answer.
struct RelayedCall {
    /// The session's calls (armed: its server and client are there).
    calls: Arc<DirectCalls>,
    /// The client's id for the call, and the tool's name as the client called it.
    id: RequestId,
    name: Arc<str>,
    route: RelayRoute,
    raw_id: RawId,
    /// A result at least half this long may be spilled: it takes the slow way.
    spill_at: usize,
    /// The call is in flight on its connection's relay until this drops.
    _guard: crate::relay::CallGuard,
    out: Arc<dyn QueuedLines>,
    respond: Respond,
}

impl AnswerSink for RelayedCall {
    fn deliver(self: Box<Self>, delivery: Delivery<'_>) -> Option<Arc<dyn QueuedLines>> {
        let outcome = match delivery {
            // The common end, handled where the answer is read: a complete
            // result too small to spill, with nothing the server sent before
            // it still being forwarded and no relist due, goes to the client
            // as the server wrote it.
            Delivery::Result(result)
                if result.get().len() * 2 <= self.spill_at
                    && calls::check_complete(result.get()).is_ok()
                    && !self.route.conn.relay.forwarding_now()
                    && !self.route.server.relist_due() =>
            {
                // Absent: cancelled meanwhile, and the client stopped waiting.
                self.calls.in_flight.lock().remove(&self.id)?;
                // Made in the client's queue: no line of its own.
                self.out.queue_with(&mut |line| {
                    super::verbatim::write_result_line(line, &self.id, result.get().as_bytes())
                });
                return Some(Arc::clone(&self.out));
            }
            Delivery::Result(result) => Some(calls::outcome_of(Some(RawAnswer::Result(result.to_owned())))),
            Delivery::Error(error) => Some(calls::outcome_of(Some(RawAnswer::Error(error)))),
            Delivery::Closed => Some(Err(calls::Failure::Closed)),
            Delivery::TimedOut => {
                // Forgotten on the lane already; the server is told too.
                let id = NumberOrString::String(Arc::clone(&self.raw_id));
                drop(CancelOnDrop { peer: self.route.conn.service.peer().clone(), id, done: false });
                None
            }
        };
        self.finish_slowly(outcome);
        None
    }
}

impl RelayedCall {
    /// Every other end, in a task: what dispatch would have made of the
    /// outcome (`None`: timed out) — the timeout's ping, a crash's restart,
    /// a relist, a spill, an error's explanation — after the notifications
    /// the server sent before it.
    fn finish_slowly(self: Box<Self>, outcome: Option<Result<Arc<String>, calls::Failure>>) {
        // Without a runtime (a lane dropped as the process ends) nobody waits.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(Box::pin(async move {
            let this = self;
            // Armed before any call was relayed.
            let Some(armed) = this.calls.armed.get() else { return };
            let route = &this.route;
            if matches!(outcome, Some(Ok(_))) {
                route.conn.relay.forwards_settled().await;
            }
            let outcome = route.server.settle(&route.conn, &route.remote, outcome).await;
            let context = RequestContext::new(this.id.clone(), armed.peer.clone());
            let reply = match armed.server.relayed_result(&this.name, outcome, &context, route).await {
                Ok(text) => Reply::Result { id: this.id.clone(), text },
                Err(result) => Reply::Message(Box::new(JsonRpcMessage::response(
                    as_rmcp_answers(result, &context),
                    this.id.clone(),
                ))),
            };
            // A call cancelled meanwhile gets no answer (the client stopped waiting for it).
            if this.calls.in_flight.lock().remove(&this.id).is_some() {
                (this.respond)(reply).await;
            }
        }));
    }
}

/// `result` as rmcp's request handling finishes a handler's result for the
/// version the session negotiated: `resultType` and the caching hints from
/// 2026-07-28 on, the older shape (no `resultType: "complete"`) before.
fn as_rmcp_answers(result: rmcp::model::CallToolResult, context: &RequestContext<RoleServer>) -> ServerResult {
    let mut result = ServerResult::CallToolResult(result);
    let current =
        context.protocol_version().is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
    if current {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
    }
    result
}

/// A `tools/call` line as a relay needs it: the name and the arguments'
/// text, borrowed from the line.
pub(crate) struct RelayableCall<'a> {
    pub id: RequestId,
    pub name: std::borrow::Cow<'a, str>,
    pub arguments: Option<&'a RawValue>,
    /// The client's progress token, if it asked for progress.
    pub progress: Option<ProgressToken>,
}

/// `line` when it is a `tools/call` with nothing but a name, arguments and
/// perhaps a progress token (no other `_meta`, such as a protocol version;
/// no task): what a relay passes on unchanged. Other members of `params` are
/// ignored, as rmcp's reading ignores them. (rmcp's client puts a progress
/// token on every request.)
pub(crate) fn relayable_call_of(line: &[u8]) -> Option<RelayableCall<'_>> {
    // The version and the id are read borrowed (rmcp's types read each
    // through an allocation, the id through a `Value`).
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        jsonrpc: std::borrow::Cow<'a, str>,
        #[serde(borrow)]
        id: &'a RawValue,
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: std::borrow::Cow<'a, str>,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(rename = "_meta", default)]
        meta: Option<Meta>,
        #[serde(default)]
        task: Option<serde::de::IgnoredAny>,
    }
    /// `_meta` with a progress token and nothing else.
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Meta {
        #[serde(rename = "progressToken")]
        progress_token: ProgressToken,
    }
    let Line { jsonrpc, id, method, params } = serde_json::from_slice(crate::lines::without_bom(line)).ok()?;
    if jsonrpc != "2.0" || method != "tools/call" || params.task.is_some() {
        return None;
    }
    let id = request_id(id.get())?;
    let progress = params.meta.map(|meta| meta.progress_token);
    Some(RelayableCall { id, name: params.name, arguments: params.arguments, progress })
}

/// A request id as rmcp reads it (an integer, possibly written as `1.0`, or
/// a string), without rmcp's detour through a `Value` for the common forms.
fn request_id(raw: &str) -> Option<RequestId> {
    if let Ok(number) = raw.parse::<i64>() {
        return Some(NumberOrString::Number(number));
    }
    if let Some(text) = crate::lines::json_string(raw) {
        return Some(NumberOrString::String(text.as_ref().into()));
    }
    serde_json::from_str(raw).ok()
}

#[cfg(test)]
#[path = "stdio_calls_tests.rs"]
mod tests;
