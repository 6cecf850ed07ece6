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

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientNotification, ClientRequest, GetExtensions, GetMeta, JsonRpcMessage,
    JsonRpcVersion2_0, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{Peer, RoleServer, Service};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::QuiverServer;
use crate::client::server::RelayRoute;

/// What goes to the client for a call.
pub(crate) enum Reply {
    Message(Box<TxJsonRpcMessage<RoleServer>>),
    /// A result as a downstream server wrote it (the `result` member's text).
    Result {
        id: RequestId,
        text: Arc<String>,
    },
}

/// Writes one reply to the client (the transport's own writer).
pub(crate) type Respond = Arc<dyn Fn(Reply) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The session's calls answered beside rmcp (shared by the transport, which
/// reads them, and `serve_io`, which arms it once the handshake is done).
#[derive(Default)]
pub struct DirectCalls {
    armed: OnceLock<Armed>,
    /// Each call's cancellation, until it is answered.
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
}

struct Armed {
    server: QuiverServer,
    peer: Peer<RoleServer>,
    /// The client opened with `initialize` (a session on the inline
    /// lifecycle stores no peer info, and every request of it must carry
    /// its own `_meta`, which rmcp checks): its calls may be relayed.
    initialized: bool,
}

impl DirectCalls {
    /// From now on `tools/call` is answered here, by `server` (a handle on
    /// the same session rmcp serves), with `peer` as the client.
    pub fn arm(&self, server: QuiverServer, peer: Peer<RoleServer>) {
        let initialized = peer.peer_info().is_some();
        let _ = self.armed.set(Armed { server, peer, initialized });
    }

    /// Starts `line` when it is a `tools/call` answered here, read straight
    /// into its parameters; `false` leaves the line to the general parse.
    ///
    /// rmcp reads a message as an untagged enum of every request, answer and
    /// notification it knows, buffering the line and trying each in turn:
    /// that was a tenth of the gateway's CPU per relayed call. A line that is
    /// not plainly a call (another method, other params, an id-less or
    /// malformed message) gets rmcp's reading and its answers, unchanged.
    pub(crate) fn take_line(self: &Arc<Self>, line: &[u8], respond: &Respond) -> bool {
        let Some(armed) = self.armed.get() else { return false };
        if armed.initialized
            && let Some(call) = relayable_call_of(line)
            && let Some(route) = armed.server.relay_route(&call.name, call.arguments.map(RawValue::get))
        {
            let arguments = call.arguments.map_or_else(|| "{}".to_string(), |a| a.get().to_string());
            let call = Relayed { id: call.id, name: call.name.into_owned(), arguments, progress: call.progress };
            self.relay(armed, call, route, Arc::clone(respond));
            return true;
        }
        let Some((id, request)) = call_of(line) else { return false };
        if request.get_meta().protocol_version().is_some() {
            return false;
        }
        self.start(armed, id, request, Arc::clone(respond));
        true
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
                if let ClientNotification::CancelledNotification(cancelled) = &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                    && let Some(call) = lock(&self.in_flight).remove(id)
                {
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
    fn relay(self: &Arc<Self>, armed: &Armed, call: Relayed, route: RelayRoute, respond: Respond) {
        let Relayed { id, name, arguments, progress } = call;
        let context = RequestContext::new(id.clone(), armed.peer.clone());
        lock(&self.in_flight).insert(id.clone(), context.ct.clone());
        let server = armed.server.clone();
        let calls = Arc::clone(self);
        // Boxed, as in `start`: tokio copies a task's future whole as it
        // spawns it and as it finishes; behind a box each copy is a pointer.
        tokio::spawn(Box::pin(async move {
            server.session().advance_turn();
            // Downstream requests and notifications during the call reach
            // this client, as for any call (the relay).
            let wants_progress = progress.is_some();
            let upstream =
                crate::relay::Upstream { peer: context.peer.clone(), request_id: id.clone(), progress_token: progress };
            let call = route.server.call_raw_arguments(&route.conn, &route.lane, &name, &arguments, wants_progress);
            let outcome = tokio::select! {
                outcome = crate::relay::with_upstream(upstream, call) => outcome,
                // Dropping the call cancels it downstream; the client gets no answer.
                () = context.ct.cancelled() => return,
            };
            let reply = match server.relayed_result(&name, outcome, &context, &route).await {
                Ok(text) => Reply::Result { id: id.clone(), text },
                Err(result) => {
                    Reply::Message(Box::new(JsonRpcMessage::response(as_rmcp_answers(result, &context), id.clone())))
                }
            };
            // A call cancelled meanwhile gets no answer (the client stopped waiting for it).
            if lock(&calls.in_flight).remove(&id).is_some() {
                respond(reply).await;
            }
        }));
    }

    fn start(self: &Arc<Self>, armed: &Armed, id: RequestId, mut request: ClientRequest, respond: Respond) {
        // As rmcp's loop does: the request's _meta and extensions move to the context.
        let mut context = RequestContext::new(id.clone(), armed.peer.clone());
        std::mem::swap(&mut context.meta, request.get_meta_mut());
        std::mem::swap(&mut context.extensions, request.extensions_mut());
        lock(&self.in_flight).insert(id.clone(), context.ct.clone());
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
            let cancelled = lock(&calls.in_flight).remove(&id).is_none();
            // A cancelled call gets no answer (the client stopped waiting for it).
            if !cancelled {
                respond(Reply::Message(Box::new(answer))).await;
            }
        }));
    }

    /// The client closed its side: nothing in flight will be read.
    pub(crate) fn cancel_all(&self) {
        for (_, call) in lock(&self.in_flight).drain() {
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

/// A call taken for the relay, owned.
struct Relayed {
    id: RequestId,
    name: String,
    /// The arguments' text (`{}` when the client sent none).
    arguments: String,
    progress: Option<ProgressToken>,
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
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(rename = "jsonrpc")]
        _jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
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
    let Line { id, method, params, .. } = serde_json::from_slice(crate::lines::without_bom(line)).ok()?;
    if method != "tools/call" || params.task.is_some() {
        return None;
    }
    let progress = params.meta.map(|meta| meta.progress_token);
    Some(RelayableCall { id, name: params.name, arguments: params.arguments, progress })
}

#[cfg(test)]
#[path = "stdio_calls_tests.rs"]
mod tests;
