//! A server's list changes at MCP 2026-07-28.
//!
//! A server of that revision has no session to send
//! `notifications/tools/list_changed` (or the resource and prompt ones) on: a
//! client that wants them opens `subscriptions/listen`. For a connection that
//! speaks the revision (`protocol = "auto"`), quiver keeps one subscription
//! open for the list changes the server declared, and takes what comes on it
//! as a session's notifications: the tool list is marked for a refresh and
//! the gateway's clients are told, as `connect::ClientState`'s handler
//! does. The subscription ends with the connection (its task is aborted
//! when the connection is dropped).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::RoleClient;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::Peer;

use super::events::DownstreamEvent;

/// Where what the subscription carries goes: the connection's own flags
/// and announcements (`connect::ClientState`'s).
pub(crate) struct Heard {
    pub server: String,
    pub tools_changed: Arc<AtomicBool>,
    pub events: tokio::sync::broadcast::Sender<DownstreamEvent>,
}

/// The listening task, aborted when dropped.
pub(crate) struct Listening(tokio::task::JoinHandle<()>);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts following the list changes of the server behind `peer`, when it
/// declared any.
pub(crate) fn follow(peer: Peer<RoleClient>, heard: Heard) -> Option<Listening> {
    let capabilities = peer.peer_info()?.capabilities.clone();
    let declared = |flag: Option<bool>| flag.unwrap_or(false).then_some(true);
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = declared(capabilities.tools.as_ref().and_then(|t| t.list_changed));
    filter.resources_list_changed = declared(capabilities.resources.as_ref().and_then(|r| r.list_changed));
    filter.prompts_list_changed = declared(capabilities.prompts.as_ref().and_then(|p| p.list_changed));
    if filter == SubscriptionFilter::default() {
        return None;
    }
    Some(Listening(tokio::spawn(async move {
        let mut subscription = match peer.listen(filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::warn!(server = %heard.server, error = %e, "subscriptions/listen refused; list changes of this server are not followed");
                return;
            }
        };
        loop {
            match subscription.next().await {
                Ok(Some(notification)) => heard.take(notification),
                Ok(None) => return,
                Err(e) => {
                    tracing::debug!(server = %heard.server, error = %e, "subscriptions/listen ended");
                    return;
                }
            }
        }
    })))
}

impl Heard {
    /// One notification of the subscription, taken as the session's would be.
    fn take(&self, notification: ServerNotification) {
        let server = self.server.clone();
        let event = match notification {
            ServerNotification::ToolListChangedNotification(_) => {
                self.tools_changed.store(true, Ordering::SeqCst);
                DownstreamEvent::ToolsChanged { server }
            }
            ServerNotification::ResourceListChangedNotification(_) => DownstreamEvent::ResourcesListChanged { server },
            ServerNotification::PromptListChangedNotification(_) => DownstreamEvent::PromptsListChanged { server },
            _ => return,
        };
        // No receiver is fine: nobody is listening for this right now.
        let _ = self.events.send(event);
    }
}
