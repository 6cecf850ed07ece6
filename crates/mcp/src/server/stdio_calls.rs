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
    JsonRpcVersion2_0, RequestId,
};
use rmcp::service::{RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{Peer, RoleServer, Service};
use tokio_util::sync::CancellationToken;

use super::QuiverServer;

/// Writes one message to the client (the transport's own writer).
pub(crate) type Respond =
    Arc<dyn Fn(TxJsonRpcMessage<RoleServer>) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

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
}

impl DirectCalls {
    /// From now on `tools/call` is answered here, by `server` (a handle on
    /// the same session rmcp serves), with `peer` as the client.
    pub fn arm(&self, server: QuiverServer, peer: Peer<RoleServer>) {
        let _ = self.armed.set(Armed { server, peer });
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
                respond(answer).await;
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

#[cfg(test)]
#[path = "stdio_calls_tests.rs"]
mod tests;
