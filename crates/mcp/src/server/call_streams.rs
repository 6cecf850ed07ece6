//! A thin layer over rmcp's session manager that puts what the gateway relays
//! during a call on that call's own SSE stream.
//!
//! Over streamable HTTP every `tools/call` POST gets an SSE stream of its own
//! that ends with the answer; anything else the server sends goes out on the
//! standalone GET stream, which a client may never open (the spec allows it).
//! rmcp's `LocalSessionManager` routes a server message to a call's stream
//! only when it can tell which call it belongs to: a request marked with
//! [`OriginatingRequestId`], a progress notification by its token. The
//! gateway's relayed messages defeat both:
//!
//! - a relayed request (`elicitation/create`, `sampling/createMessage`,
//!   `roots/list`) is sent from the task that handles the *downstream*
//!   server's request, and rmcp marks every request sent from a request
//!   handler with that handler's request id: the downstream server's own id,
//!   which names no upstream call (or, worse, another one with the same
//!   number). So it fell back to the GET stream.
//! - a log message (`notifications/message`) is never routed to a call's
//!   stream by rmcp, whatever it carries.
//!
//! The relay marks what it sends with [`CallStream`] (the upstream call's id).
//! Here, per session, each request's POST stream gets a side channel merged
//! into it, and the session's transport looks at every outgoing message:
//!
//! - a marked request gets rmcp's [`OriginatingRequestId`] set to the call's
//!   id (replacing the wrong one) and goes on through rmcp, which routes it
//!   to the call's stream (and keeps it for a client resuming that stream);
//! - a marked notification goes into the call's side channel, in the order
//!   the relay sent it, ahead of the call's answer: the answer goes through
//!   rmcp's session worker after it, and the merged stream always drains the
//!   side channel before it looks at what rmcp sends.
//!
//! A marked message whose call has already answered (its stream is gone)
//! goes through rmcp unchanged, to the GET stream, as before.
//!
//! Two more things per session live here, because this layer sees every
//! request of a session, rmcp's and not:
//!
//! - **The call lane** ([`DirectCalls`], see `http_calls`): a relayed call
//!   answered beside rmcp opens a *lane* stream here; rmcp never hears of
//!   that call, so a relayed request for it goes into its side channel too.
//! - **Idle expiry.** rmcp would end a session after five minutes without a
//!   message passing through its worker, and calls on the lane never do; so
//!   rmcp's own timer is off and [`sweep_idle`](CallStreams::sweep_idle)
//!   ends a session that nothing, either way, has used for that long.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use tokio::sync::mpsc;

use super::stdio_calls::DirectCalls;
use crate::relay::CallStream;

/// How many relayed notifications wait for a slow reader of one call's
/// stream before the relay waits too (and with it the downstream server).
const SIDE_CHANNEL_CAPACITY: usize = 64;

/// [`SessionManager`] `M` with relayed messages on their call's stream.
pub struct CallStreams<M> {
    inner: M,
    /// Each live session's open call streams. Weak: a session that ends
    /// (closed, expired, its client gone) drops its transport and with it
    /// the entry's target; dead entries are swept when sessions are created.
    sessions: Mutex<HashMap<SessionId, Weak<Routes>>>,
}

impl<M> CallStreams<M> {
    pub fn new(inner: M) -> Self {
        CallStreams { inner, sessions: Mutex::default() }
    }

    fn routes(&self, id: &SessionId) -> Option<Arc<Routes>> {
        self.sessions.lock().get(id).and_then(Weak::upgrade)
    }

    /// Live session `id`'s routes, used now (see [`Routes::touch`]).
    pub(crate) fn session(&self, id: &str) -> Option<Arc<Routes>> {
        let routes = self.sessions.lock().get(id).and_then(Weak::upgrade)?;
        routes.touch();
        Some(routes)
    }

    /// Sessions alive now: created, and neither closed nor ended by rmcp
    /// (expired, its worker gone). The HTTP listener's session cap reads it.
    pub fn live_sessions(&self) -> usize {
        self.sessions.lock().values().filter(|r| r.strong_count() > 0).count()
    }

    fn track(&self, id: &SessionId, routes: &Arc<Routes>) {
        let mut sessions = self.sessions.lock();
        sessions.retain(|_, r| r.strong_count() > 0);
        sessions.insert(id.clone(), Arc::downgrade(routes));
    }
}

/// One session's call streams that are open: upstream request id → the side
/// channel merged into that request's SSE stream.
pub(crate) struct Routes {
    next: AtomicU64,
    open: Mutex<HashMap<RequestId, OpenStream>>,
    /// The session's calls answered beside rmcp, armed once the client has
    /// sent `notifications/initialized` (`http_calls`).
    calls: Arc<DirectCalls>,
    /// When a message of this session last passed, either way.
    last_seen: Mutex<Instant>,
}

/// A request's stream, open.
struct OpenStream {
    serial: u64,
    side: mpsc::Sender<ServerJsonRpcMessage>,
    /// A call on the lane: rmcp does not know it, so relayed requests go
    /// into the side channel as well.
    lane: bool,
}

impl Default for Routes {
    fn default() -> Self {
        Routes {
            next: AtomicU64::new(0),
            open: Mutex::default(),
            calls: Arc::default(),
            last_seen: Mutex::new(Instant::now()),
        }
    }
}

impl Routes {
    fn open(self: &Arc<Self>, request: RequestId) -> (mpsc::Receiver<ServerJsonRpcMessage>, Registration) {
        self.open_stream(request, false)
    }

    /// Opens the stream of a call answered on the lane: everything relayed
    /// for it comes out of the receiver, until the registration drops.
    pub(crate) fn open_lane(
        self: &Arc<Self>,
        request: RequestId,
    ) -> (mpsc::Receiver<ServerJsonRpcMessage>, Registration) {
        self.open_stream(request, true)
    }

    fn open_stream(
        self: &Arc<Self>,
        request: RequestId,
        lane: bool,
    ) -> (mpsc::Receiver<ServerJsonRpcMessage>, Registration) {
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(SIDE_CHANNEL_CAPACITY);
        self.open.lock().insert(request.clone(), OpenStream { serial, side: tx, lane });
        (rx, Registration { routes: Arc::downgrade(self), request, serial })
    }

    /// The side channel of `request`'s open stream, and whether it is a lane's.
    fn side_channel(&self, request: &RequestId) -> Option<(mpsc::Sender<ServerJsonRpcMessage>, bool)> {
        self.open.lock().get(request).map(|open| (open.side.clone(), open.lane))
    }

    /// The session's calls answered beside rmcp.
    pub(crate) fn calls(&self) -> &Arc<DirectCalls> {
        &self.calls
    }

    /// Notes that the session is in use now.
    pub(crate) fn touch(&self) {
        *self.last_seen.lock() = Instant::now();
    }

    /// Whether the session has had no message for `idle` and no stream open.
    fn idle_for(&self, idle: Duration) -> bool {
        self.last_seen.lock().elapsed() >= idle && self.open.lock().is_empty()
    }
}

/// Forgets a call's side channel when its stream ends (answered, or the
/// client went away); a newer stream for the same request id stays.
pub(crate) struct Registration {
    routes: Weak<Routes>,
    request: RequestId,
    serial: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(routes) = self.routes.upgrade() else { return };
        let mut open = routes.open.lock();
        if open.get(&self.request).is_some_and(|open| open.serial == self.serial) {
            open.remove(&self.request);
        }
    }
}

/// A call's SSE stream: its side channel first, then what rmcp sends.
struct MergedStream<S> {
    side: mpsc::Receiver<ServerJsonRpcMessage>,
    /// `None` once rmcp's stream ended (it must not be polled again).
    inner: Option<Pin<Box<S>>>,
    /// Dropped as soon as rmcp's stream ends, so what is relayed for the call
    /// after its answer goes through rmcp rather than into a closed stream.
    registration: Option<Registration>,
}

impl<S: Stream<Item = ServerSseMessage>> Stream for MergedStream<S> {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // Side first: a relayed notification was queued before the answer
        // that follows it was even handed to rmcp's worker.
        if let Poll::Ready(Some(message)) = self.side.poll_recv(cx) {
            return Poll::Ready(Some(ServerSseMessage::from_message(message)));
        }
        if let Some(inner) = self.inner.as_mut() {
            match inner.as_mut().poll_next(cx) {
                Poll::Ready(None) => {
                    self.inner = None;
                    self.registration = None;
                }
                other => return other,
            }
        }
        // rmcp's stream ended: what was queued before that still goes out.
        Poll::Ready(self.side.try_recv().ok().map(ServerSseMessage::from_message))
    }
}

/// The session's transport, seeing every message the server sends.
pub struct CallStreamTransport<T> {
    inner: T,
    routes: Arc<Routes>,
}

/// Where one outgoing message goes.
enum Route {
    /// Through rmcp (possibly re-marked).
    Rmcp(TxJsonRpcMessage<RoleServer>),
    /// Queued on the call's side channel already.
    Queued,
    /// For the call's side channel, once it has room.
    Wait(mpsc::Sender<ServerJsonRpcMessage>, ServerJsonRpcMessage),
}

impl Routes {
    fn route(&self, mut message: TxJsonRpcMessage<RoleServer>) -> Route {
        match &mut message {
            JsonRpcMessage::Request(request) => {
                let call = request.request.extensions().get::<CallStream>().map(|c| c.0.clone());
                let Some(call) = call else { return Route::Rmcp(message) };
                match self.side_channel(&call) {
                    // rmcp does not know a lane's call: it would send this to the GET stream.
                    Some((tx, true)) => Self::queue(tx, message),
                    _ => {
                        request.request.extensions_mut().insert(OriginatingRequestId(call));
                        Route::Rmcp(message)
                    }
                }
            }
            JsonRpcMessage::Notification(notification) => {
                let call = notification.notification.extensions().get::<CallStream>().map(|c| c.0.clone());
                let Some((tx, _)) = call.and_then(|call| self.side_channel(&call)) else {
                    return Route::Rmcp(message);
                };
                Self::queue(tx, message)
            }
            _ => Route::Rmcp(message),
        }
    }

    fn queue(tx: mpsc::Sender<ServerJsonRpcMessage>, message: ServerJsonRpcMessage) -> Route {
        match tx.try_send(message) {
            Ok(()) => Route::Queued,
            Err(mpsc::error::TrySendError::Full(message)) => Route::Wait(tx, message),
            // The stream ended between the lookup and now.
            Err(mpsc::error::TrySendError::Closed(message)) => Route::Rmcp(message),
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for CallStreamTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.routes.touch();
        // Routed now, not when the future runs: rmcp runs each send as a task
        // of its own, and the side channel must keep the order of the calls.
        let (through_rmcp, waiting) = match self.routes.route(item) {
            Route::Rmcp(message) => (Some(self.inner.send(message)), None),
            Route::Queued => (None, None),
            Route::Wait(tx, message) => (None, Some((tx, message))),
        };
        async move {
            if let Some(send) = through_rmcp {
                return send.await;
            }
            if let Some((tx, message)) = waiting {
                // A closed stream means the client stopped reading that call:
                // the notification has nobody left to reach.
                let _ = tx.send(message).await;
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

impl<M: SessionManager> CallStreams<M> {
    /// Ends, every `idle / 10`, each session that has had no message for
    /// `idle` and has no request stream open; returns when `self` is dropped.
    /// (A GET stream alone does not keep a session, as with rmcp's timer.)
    pub async fn sweep_idle(this: Weak<Self>, idle: Duration) {
        let mut tick = tokio::time::interval((idle / 10).max(Duration::from_millis(50)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(this) = this.upgrade() else { return };
            let idle: Vec<SessionId> = this
                .sessions
                .lock()
                .iter()
                .filter(|(_, routes)| routes.upgrade().is_some_and(|r| r.idle_for(idle)))
                .map(|(id, _)| id.clone())
                .collect();
            for id in idle {
                tracing::debug!(session = %id, "ending an MCP session unused for the idle timeout");
                if let Err(e) = this.close_session(&id).await {
                    tracing::debug!(session = %id, error = %e, "could not end an idle session");
                }
            }
        }
    }
}

impl<M: SessionManager> SessionManager for CallStreams<M> {
    type Error = M::Error;
    type Transport = CallStreamTransport<M::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, inner) = self.inner.create_session().await?;
        let routes = Arc::new(Routes::default());
        self.track(&id, &routes);
        Ok((id, CallStreamTransport { inner, routes }))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.sessions.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // Opened before rmcp sees the request, so nothing its handler relays is missed.
        let routes = self.routes(id);
        if let Some(routes) = &routes {
            routes.touch();
        }
        let side = match (&message, routes) {
            (JsonRpcMessage::Request(request), Some(routes)) => Some(routes.open(request.id.clone())),
            _ => None,
        };
        let inner = Box::pin(self.inner.create_stream(id, message).await?);
        Ok(match side {
            Some((side, registration)) => futures::future::Either::Left(MergedStream {
                side,
                inner: Some(inner),
                registration: Some(registration),
            }),
            None => futures::future::Either::Right(inner),
        })
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        if let Some(routes) = self.routes(id) {
            routes.touch();
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if let Some(routes) = self.routes(id) {
            routes.touch();
        }
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(match self.inner.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(inner) => {
                let routes = Arc::new(Routes::default());
                self.track(&id, &routes);
                RestoreOutcome::Restored(CallStreamTransport { inner, routes })
            }
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            // Whatever else a newer rmcp adds: not restored here.
            _ => RestoreOutcome::NotSupported,
        })
    }

    fn event_store(&self) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.inner.event_store()
    }
}
