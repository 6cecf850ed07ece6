//! What a client is told of changes to what it sees: a session's forwarder
//! (what the servers behind announce, while the session lasts) and a
//! stateless client's `subscriptions/listen` stream (2026-07-28), both
//! deciding by what the client was last shown ([`Announced`]).

use parking_lot::Mutex;
use std::sync::Arc;

use quiver_engine::{Audience, CatalogFormat, Engine, Session};
use rmcp::service::RoleServer;
use tokio_util::sync::CancellationToken;

use super::Surface;
use crate::server::passthrough::Passthrough;

#[derive(Default)]
pub(super) struct Announced {
    /// Loaded tools (the tail) the client knows about.
    pub(super) loaded: usize,
    /// The engine the client's list came from, and that list's fingerprint:
    /// a rebuilt engine (a downstream server's tools changed) only matters
    /// when the list it renders differs.
    pub(super) engine: Option<Arc<Engine>>,
    pub(super) fingerprint: String,
}

/// Whether the list the client would get now differs from what it knows:
/// the tail grew, or a rebuilt engine renders a different list.
pub(super) fn changed_since_announced(surface: &Surface, session: &Session, announced: &Mutex<Announced>) -> bool {
    let loaded = session.loaded();
    let engine = surface.engine();
    let mut announced = announced.lock();
    if loaded.len() > announced.loaded {
        announced.loaded = loaded.len();
        return true;
    }
    let same_engine = announced.engine.as_ref().is_some_and(|e| Arc::ptr_eq(e, &engine));
    if same_engine || announced.engine.is_none() {
        return false;
    }
    let fingerprint = fingerprint(&engine, &surface.audience, &loaded);
    announced.engine = Some(engine);
    if fingerprint == announced.fingerprint {
        return false;
    }
    announced.fingerprint = fingerprint;
    true
}

/// What one session's forwarder needs of it.
pub(super) struct Forwarder {
    pub(super) surface: Arc<Surface>,
    pub(super) session: Arc<Session>,
    pub(super) announced: Arc<Mutex<Announced>>,
    pub(super) subscribed: Arc<Mutex<std::collections::HashSet<String>>>,
    pub(super) peer: rmcp::service::Peer<RoleServer>,
    /// The session's end (see [`QuiverServer`]'s `ended`).
    pub(super) ended: CancellationToken,
}

/// Forwards to one client what the servers behind announce, while it is
/// connected: its tool list changed (once re-listed, and only if what the
/// client would be shown changed), resource and prompt lists changed, and
/// updates of resources it subscribed to. Unsubscribes what it held at the end.
///
/// It learns of the end from the session's handles dropping, not from a
/// periodic check: a timer always pending would make every park of the
/// runtime arm a kernel timer, on every relayed call.
pub(super) async fn forward_downstream(
    forwarder: Forwarder,
    mut events: tokio::sync::broadcast::Receiver<crate::client::DownstreamEvent>,
) {
    use crate::client::DownstreamEvent as E;
    use tokio::sync::broadcast::error::RecvError;
    let Forwarder { surface, session, announced, subscribed, peer, ended } = forwarder;
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = ended.cancelled() => break,
        };
        if peer.is_transport_closed() {
            break;
        }
        let event = match event {
            Ok(event) => event,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => break,
        };
        let sent = match event {
            E::ToolsRelisted { .. } => {
                if changed_since_announced(&surface, &session, &announced) {
                    peer.notify_tool_list_changed().await.map_err(|e| e.to_string())
                } else {
                    Ok(())
                }
            }
            E::ResourcesListChanged { .. } => peer.notify_resource_list_changed().await.map_err(|e| e.to_string()),
            E::PromptsListChanged { .. } => peer.notify_prompt_list_changed().await.map_err(|e| e.to_string()),
            E::ResourceUpdated { server, uri } => {
                let Some(handle) = surface.passthrough.as_ref().and_then(|p| p.server(&server).cloned()) else {
                    continue;
                };
                let upstream = Passthrough::upstream_uri(&handle, &uri);
                if subscribed.lock().contains(&upstream) {
                    peer.notify_resource_updated(rmcp::model::ResourceUpdatedNotificationParam::new(upstream))
                        .await
                        .map_err(|e| e.to_string())
                } else {
                    Ok(())
                }
            }
            E::ToolsChanged { .. } => Ok(()),
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "could not forward a downstream announcement");
            if peer.is_transport_closed() {
                break;
            }
        }
    }
    let held = std::mem::take(&mut *subscribed.lock());
    if let Some(passthrough) = &surface.passthrough {
        passthrough.release(held).await;
    }
}

fn fingerprint(engine: &Engine, audience: &Audience, loaded: &[String]) -> String {
    engine.catalog(audience, loaded).fingerprint(CatalogFormat::Mcp).sha256
}

/// A stateless client's `subscriptions/listen` stream (2026-07-28), until it
/// ends: the list changes of what the servers behind announce that it
/// accepted; its tool list only when what it would be shown (its head and the
/// tail it carried on the listen request) changed.
pub(super) async fn listen(
    surface: &Surface,
    session: &Session,
    announced: &Mutex<Announced>,
    subscription: rmcp::service::SubscriptionContext,
) {
    use crate::client::DownstreamEvent as E;
    use tokio::sync::broadcast::error::RecvError;
    let Some(mut events) = surface.downstream_events() else {
        // A fixed engine: nothing ever changes the list.
        subscription.cancelled().await;
        return;
    };
    {
        let engine = surface.engine();
        let loaded = session.loaded();
        let mut announced = announced.lock();
        announced.loaded = loaded.len();
        announced.fingerprint = fingerprint(&engine, &surface.audience, &loaded);
        announced.engine = Some(engine);
    }
    let accepted = subscription.accepted().clone();
    let sink = subscription.sink();
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = subscription.cancelled() => break,
        };
        let sent = match event {
            Ok(E::ToolsRelisted { .. })
                if accepted.tools_list_changed == Some(true)
                    && changed_since_announced(surface, session, announced) =>
            {
                sink.notify_tool_list_changed().await
            }
            Ok(E::ResourcesListChanged { .. }) if accepted.resources_list_changed == Some(true) => {
                sink.notify_resource_list_changed().await
            }
            Ok(E::PromptsListChanged { .. }) if accepted.prompts_list_changed == Some(true) => {
                sink.notify_prompt_list_changed().await
            }
            Ok(_) | Err(RecvError::Lagged(_)) => Ok(()),
            Err(RecvError::Closed) => break,
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "a subscriptions/listen stream ended");
            break;
        }
    }
}
