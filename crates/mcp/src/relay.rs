//! The gateway's two-way relay between the client in front of `quiver mcp
//! serve` (upstream) and the servers behind it (downstream).
//!
//! The upstream call a downstream call serves is known only to the task that
//! runs it, so it travels as a task-local ([`with_upstream`]): the server
//! handler sets it around dispatch, and the MCP tool reads it when it calls
//! downstream. Dispatch awaits the tool in the same task, so nothing in the
//! engine has to know about MCP peers.
//!
//! - progress: the downstream call gets its own token (rmcp assigns one per
//!   request); its progress notifications are forwarded up under the token
//!   the upstream client gave, when it gave one;
//! - logging: `notifications/message` from a server goes to the upstream
//!   client of the call in flight (else to quiver's log) when it is at or
//!   above the level that client chose; the servers are set to the most
//!   verbose level any client chose (`client::log_levels`);
//! - server-to-client requests (`sampling/createMessage`, `elicitation/create`,
//!   `roots/list`) go to the upstream client of the call in flight when it
//!   declared the capability, and are refused with a reason otherwise; a
//!   2026-07-28 (stateless) client is asked them as input requests of its
//!   call's `InputRequiredResult` (`server::input_required`);
//! - one downstream connection serves every client of an HTTP gateway, and
//!   MCP does not say which call a server's request or log message belongs
//!   to: while calls from more than one client are in flight on it, requests
//!   are refused and log messages stay in quiver's log, so nothing one
//!   client's call caused reaches another client;
//! - cancellation: dropping the downstream call (the upstream client
//!   cancelled, or the tool timeout fired) sends `notifications/cancelled`.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use rmcp::model::{
    ClientResult, ErrorCode, GetExtensions, Notification, ProgressNotificationParam, ProgressToken, RequestId,
    ServerNotification, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use rmcp::{ErrorData, RoleClient, ServiceError};

tokio::task_local! {
    static UPSTREAM: Upstream;
}

/// The upstream side of the call being served.
#[derive(Clone)]
pub struct Upstream {
    /// Which client (session) in front this is: calls of one client are
    /// told apart from another's by it (peers cannot be compared).
    pub client: u64,
    pub peer: Peer<RoleServer>,
    /// The upstream call's JSON-RPC id: over streamable HTTP, what is relayed
    /// for it rides that call's own SSE stream (see [`CallStream`]).
    pub request_id: RequestId,
    /// The upstream client's progress token for this call, if it asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// Set for a 2026-07-28 (stateless) call: its client cannot be sent a
    /// request, so a server's request becomes an input request of the call's
    /// `InputRequiredResult` (`server::input_required`).
    pub input: Option<std::sync::Arc<crate::server::input_required::Asker>>,
}

/// Marks a message relayed to the upstream client with the upstream call it
/// belongs to, so the HTTP session layer (`server::call_streams`) sends it on
/// that call's SSE stream. Never on the wire; other transports ignore it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallStream(pub RequestId);

impl Upstream {
    /// Sends a server-to-client request for this call and waits for the answer.
    pub(crate) async fn request(&self, mut request: ServerRequest) -> Result<ClientResult, ServiceError> {
        if let Some(asker) = &self.input {
            return asker.ask(request).await;
        }
        request.extensions_mut().insert(CallStream(self.request_id.clone()));
        self.peer.send_request(request).await
    }

    /// What the client declared it can answer: a session's at `initialize`,
    /// a stateless call's in its request's `_meta`.
    fn capabilities(&self) -> Option<rmcp::model::ClientCapabilities> {
        match &self.input {
            Some(asker) => Some(asker.capabilities.clone()),
            None => self.peer.peer_info().map(|info| info.capabilities.clone()),
        }
    }

    /// Sends a notification for this call: a stateless call's goes on the
    /// request it is answering now (its first, or the latest retry).
    pub(crate) async fn notify(&self, mut notification: ServerNotification) -> Result<(), ServiceError> {
        if let Some(asker) = &self.input {
            let route = asker.route();
            notification.extensions_mut().insert(CallStream(route.request_id));
            return route.peer.send_notification(notification).await;
        }
        notification.extensions_mut().insert(CallStream(self.request_id.clone()));
        self.peer.send_notification(notification).await
    }

    /// The client's progress token for this call (a stateless call's, of the
    /// request it is answering now).
    fn progress_token(&self) -> Option<ProgressToken> {
        match &self.input {
            Some(asker) => asker.route().progress_token,
            None => self.progress_token.clone(),
        }
    }

    /// Whether a log message at `level` is for this client: the level a
    /// session chose (`levels`), or the one a stateless request asked in its
    /// `_meta` (none unless it asked).
    #[allow(deprecated)] // logging: deprecated by SEP-2577, kept for clients that ask for it
    pub(crate) fn wants_log(
        &self,
        level: rmcp::model::LoggingLevel,
        levels: &crate::client::log_levels::LogLevels,
    ) -> bool {
        use crate::client::log_levels::severity;
        match &self.input {
            Some(asker) => asker.route().log_level.is_some_and(|least| severity(level) >= severity(least)),
            None => levels.passes(self.client, level),
        }
    }
}

/// Runs `fut` with `upstream` as the call's upstream side.
pub async fn with_upstream<F: std::future::Future>(upstream: Upstream, fut: F) -> F::Output {
    UPSTREAM.scope(upstream, fut).await
}

/// The upstream side of the call this task serves, if any.
pub fn current() -> Option<Upstream> {
    UPSTREAM.try_with(Upstream::clone).ok()
}

/// Per downstream connection: which upstream calls are in flight on it.
#[derive(Default)]
pub(crate) struct Relay {
    next: AtomicU64,
    /// Calls in flight: (call number, upstream), oldest first.
    active: Mutex<Vec<(u64, Upstream)>>,
    /// Downstream progress token → the upstream call that asked for progress.
    progress: Mutex<HashMap<ProgressToken, Upstream>>,
    /// The call that finished last: a log message
    /// the server sent just before its answer can be handled after it.
    finished: Mutex<Option<Finished>>,
    /// Notifications read from the server and not yet forwarded upstream
    /// (see `client::ordered`), and the signal that the count dropped.
    forwarding: AtomicUsize,
    forwarded: tokio::sync::Notify,
    /// Signalled when a call's downstream progress token becomes known (it
    /// is only after the request went out, and the server may be faster).
    tokens: tokio::sync::Notify,
    /// Forwarding tickets: the next to hand out (in read order) and the one
    /// whose turn it is; signalled when the turn moves.
    tickets: AtomicU64,
    turn: AtomicU64,
    turned: tokio::sync::Notify,
}

/// A forwarded notification's place in the order the server sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ForwardTicket(u64);

impl Relay {
    /// Records a downstream call serving `upstream`; forgotten when the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, upstream: Upstream, downstream_token: Option<ProgressToken>) -> CallGuard {
        let number = self.next.fetch_add(1, Ordering::SeqCst);
        // A stateless call's retry may ask for progress where its first request did not.
        let asks_progress = upstream.progress_token.is_some() || upstream.input.is_some();
        self.active.lock().push((number, upstream));
        let mut guard = CallGuard { relay: Arc::clone(self), number, asks_progress, downstream_token: None };
        if let Some(token) = downstream_token {
            guard.track_progress(token);
        }
        guard
    }

    /// Whether any call is in flight.
    pub(crate) fn any_in_flight(&self) -> bool {
        !self.active.lock().is_empty()
    }

    /// Whose calls are in flight: the newest call's upstream when every call
    /// in flight is one client's.
    fn callers(&self) -> Callers {
        let active = self.active.lock();
        match active.last() {
            None => Callers::Nobody,
            Some((_, newest)) if active.iter().all(|(_, u)| u.client == newest.client) => Callers::One(newest.clone()),
            Some(_) => Callers::Several,
        }
    }

    /// Where a log message goes: the client whose calls are in flight, else
    /// the call that finished within [`PROGRESS_LINGER`] (rmcp handles each
    /// notification as its own task, so one sent before the answer may be
    /// handled after it). `None` (quiver's own log) while several clients'
    /// calls are in flight: the message may be any of theirs.
    pub(crate) fn log_target(&self) -> Option<Upstream> {
        match self.callers() {
            Callers::One(upstream) => Some(upstream),
            Callers::Several => None,
            Callers::Nobody => {
                let now = Instant::now();
                let finished = self.finished.lock();
                let last = finished.as_ref().filter(|f| now - f.at < PROGRESS_LINGER);
                // Not when another client's call also ended within the window.
                last.filter(|f| f.shared_until.is_none_or(|until| until <= now)).map(|f| f.upstream.clone())
            }
        }
    }

    /// A notification to forward was read from the server: its ticket.
    pub(crate) fn forward_started(&self) -> ForwardTicket {
        self.forwarding.fetch_add(1, Ordering::SeqCst);
        ForwardTicket(self.tickets.fetch_add(1, Ordering::SeqCst))
    }

    /// A place after every notification read so far, for a server request
    /// that must reach the client after them ([`Self::forward_turn`] on it
    /// waits for them; it is nobody's turn to give back).
    pub(crate) fn after_forwards(&self) -> ForwardTicket {
        ForwardTicket(self.tickets.load(Ordering::SeqCst))
    }

    /// Waits until every notification read before the one holding `ticket`
    /// was forwarded. Bounded like [`Self::forwards_settled`]: a notification
    /// rmcp never handed to a handler must not stall the ones after it.
    pub(crate) async fn forward_turn(&self, ticket: Option<ForwardTicket>) {
        let Some(ForwardTicket(mine)) = ticket else { return };
        let turn = async {
            loop {
                let signal = self.turned.notified();
                tokio::pin!(signal);
                signal.as_mut().enable();
                if self.turn.load(Ordering::SeqCst) >= mine {
                    return;
                }
                signal.await;
            }
        };
        if tokio::time::timeout(FORWARD_BOUND, turn).await.is_err() {
            tracing::debug!("an earlier notification was not forwarded in time; forwarding this one anyway");
        }
    }

    /// The notification holding `ticket` was forwarded: the next one's turn.
    pub(crate) fn forward_turn_done(&self, ticket: Option<ForwardTicket>) {
        if let Some(ForwardTicket(mine)) = ticket {
            self.turn.fetch_max(mine + 1, Ordering::SeqCst);
            self.turned.notify_waiters();
        }
    }

    /// That notification was forwarded (or had nowhere to go).
    pub(crate) fn forward_done(&self) {
        let before = self.forwarding.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| Some(n.saturating_sub(1)));
        if before.is_ok_and(|n| n <= 1) {
            self.forwarded.notify_waiters();
        }
    }

    /// Whether a notification read from the server is still being forwarded
    /// (an answer read now must wait for it: [`Self::forwards_settled`]).
    pub(crate) fn forwarding_now(&self) -> bool {
        self.forwarding.load(Ordering::SeqCst) != 0
    }

    /// Waits until every notification read so far has been forwarded, so an
    /// answer read after them reaches the client after them. Bounded: a
    /// notification rmcp never handed to the handler must not hold up every
    /// later answer, so past the bound the count is cleared.
    pub(crate) async fn forwards_settled(&self) {
        // Nearly always nothing is being forwarded: no timer, no waiter.
        if self.forwarding.load(Ordering::SeqCst) == 0 {
            return;
        }
        let settled = async {
            loop {
                let signal = self.forwarded.notified();
                tokio::pin!(signal);
                signal.as_mut().enable();
                if self.forwarding.load(Ordering::SeqCst) == 0 {
                    return;
                }
                signal.await;
            }
        };
        if tokio::time::timeout(FORWARD_BOUND, settled).await.is_err() {
            tracing::debug!("notifications from a server were not forwarded in time; answering anyway");
            self.forwarding.store(0, Ordering::SeqCst);
        }
    }

    /// The upstream call that asked for progress under downstream `token`.
    /// A server may report progress before the task that sent the request
    /// recorded the token rmcp gave it, so an unknown token is waited for
    /// (bounded): it was given to a call in flight, or is no call's at all.
    async fn progress_target(&self, token: &ProgressToken) -> Option<Upstream> {
        let known = async {
            loop {
                let signal = self.tokens.notified();
                tokio::pin!(signal);
                signal.as_mut().enable();
                if let Some(upstream) = self.progress.lock().get(token).cloned() {
                    return upstream;
                }
                signal.await;
            }
        };
        tokio::time::timeout(FORWARD_BOUND, known).await.ok()
    }

    pub(crate) async fn forward_progress(&self, mut params: ProgressNotificationParam) {
        let target = self.progress_target(&params.progress_token).await;
        let Some((upstream, token)) = target.and_then(|up| up.progress_token().map(|token| (up, token))) else {
            return;
        };
        params.progress_token = token;
        let notification = ServerNotification::ProgressNotification(Notification::new(params));
        if let Err(e) = upstream.notify(notification).await {
            tracing::debug!(error = %e, "could not forward progress upstream");
        }
    }

    /// The upstream call to relay a server-to-client request to, or the reason
    /// it cannot be relayed (a JSON-RPC error the downstream server gets).
    pub(crate) fn upstream_for(
        &self,
        server: &str,
        method: &str,
        declared: impl Fn(&rmcp::model::ClientCapabilities) -> bool,
    ) -> Result<Upstream, ErrorData> {
        let upstream = match self.callers() {
            Callers::One(upstream) => upstream,
            Callers::Nobody => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "quiver cannot answer {method} from server `{server}`: no MCP client is connected through \
                         quiver for this call"
                    ),
                    None,
                ));
            }
            Callers::Several => {
                return Err(ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "quiver cannot relay {method} from server `{server}`: calls from more than one client are in \
                         flight on this server, and MCP does not say which call a request belongs to (retry when \
                         only one client's calls are running)"
                    ),
                    None,
                ));
            }
        };
        let capable = upstream.capabilities().is_some_and(|c| declared(&c));
        if !capable {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "quiver cannot relay {method} from server `{server}`: the client connected through quiver did not \
                     declare that capability"
                ),
                None,
            ));
        }
        Ok(upstream)
    }
}

/// The call that finished last on a connection.
struct Finished {
    at: Instant,
    upstream: Upstream,
    /// Until when another client's call also counts as just finished: a
    /// late log message may be either's, so it goes to neither.
    shared_until: Option<Instant>,
}

/// Whose calls are in flight on a connection.
enum Callers {
    Nobody,
    /// Every call in flight is this client's (the newest call's upstream).
    One(Upstream),
    Several,
}

pub(crate) struct CallGuard {
    relay: Arc<Relay>,
    number: u64,
    /// The upstream client asked for progress (its side is in `active`).
    asks_progress: bool,
    downstream_token: Option<ProgressToken>,
}

impl CallGuard {
    /// The downstream request went out under progress `token`: its progress
    /// goes to this call's upstream client (when that client asked for progress).
    ///
    /// Only then is the token remembered: forgetting it takes a timer task
    /// (see `Drop`), which a call nobody follows the progress of must not pay.
    pub(crate) fn track_progress(&mut self, token: ProgressToken) {
        if !self.asks_progress {
            return;
        }
        let upstream = self.relay.active.lock().iter().find(|(n, _)| *n == self.number).map(|(_, u)| u.clone());
        if let Some(upstream) = upstream {
            let mut progress = self.relay.progress.lock();
            progress.insert(token.clone(), upstream);
            // A multi-round call's earlier round is answered: its token goes.
            if let Some(earlier) = self.downstream_token.replace(token) {
                progress.remove(&earlier);
            }
            drop(progress);
            self.relay.tokens.notify_waiters();
        }
    }
}

/// How long a finished call's progress token stays mapped. rmcp hands each
/// notification to its handler as its own task, so the server's last progress
/// notification (sent before its answer) can be handled after the answer was.
const PROGRESS_LINGER: std::time::Duration = std::time::Duration::from_millis(2000);

/// How long an answer waits for the notifications read before it to be forwarded.
const FORWARD_BOUND: std::time::Duration = std::time::Duration::from_millis(500);

impl Drop for CallGuard {
    fn drop(&mut self) {
        let finished = {
            let mut active = self.relay.active.lock();
            let at = active.iter().position(|(n, _)| *n == self.number);
            at.map(|i| active.remove(i).1)
        };
        if let Some(upstream) = finished {
            let now = Instant::now();
            let mut last = self.relay.finished.lock();
            let shared_until = match last.as_ref() {
                Some(before) if before.upstream.client != upstream.client && now - before.at < PROGRESS_LINGER => {
                    Some(now + PROGRESS_LINGER)
                }
                Some(before) => before.shared_until.filter(|until| *until > now),
                None => None,
            };
            *last = Some(Finished { at: now, upstream, shared_until });
        }
        let Some(token) = self.downstream_token.take() else { return };
        let relay = Arc::clone(&self.relay);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(async move {
                tokio::time::sleep(PROGRESS_LINGER).await;
                relay.progress.lock().remove(&token);
            })),
            Err(_) => drop(relay.progress.lock().remove(&token)),
        }
    }
}

/// A downstream request that must be cancelled unless it completed: sends
/// `notifications/cancelled` when dropped early.
pub(crate) struct CancelOnDrop {
    pub peer: Peer<RoleClient>,
    pub id: rmcp::model::RequestId,
    pub done: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let (peer, id) = (self.peer.clone(), self.id.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let params = rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled by the client in front of quiver, or timed out".into()),
                );
                let _ = peer.notify_cancelled(params).await;
            });
        }
    }
}

#[cfg(test)]
#[path = "relay_tests.rs"]
mod tests;
