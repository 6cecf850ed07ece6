//! A server's list changes at MCP 2026-07-28.
//!
//! A server of that revision has no session to send
//! `notifications/tools/list_changed` (or the resource and prompt ones) on: a
//! client that wants them opens `subscriptions/listen`. For a connection that
//! speaks the revision (`protocol = "auto"`), quiver keeps one subscription
//! open for the list changes the server declared, and takes what comes on it
//! as a session's notifications: the tool list is marked for a refresh and
//! the gateway's clients are told, as in [`super::connect::ClientState`]'s
//! handler. The subscription ends with the connection (its task is aborted
//! when the connection is dropped).

use rmcp::RoleClient;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::RunningService;

use super::connect::ClientState;
use super::events::DownstreamEvent;

/// The listening task, aborted when dropped.
pub(crate) struct Listening(tokio::task::JoinHandle<()>);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts following `service`'s list changes, when its server declared any.
pub(crate) fn follow(service: &RunningService<RoleClient, ClientState>) -> Option<Listening> {
    let peer = service.peer().clone();
    let capabilities = peer.peer_info()?.capabilities.clone();
    let declared = |flag: Option<bool>| flag.unwrap_or(false).then_some(true);
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = declared(capabilities.tools.as_ref().and_then(|t| t.list_changed));
    filter.resources_list_changed = declared(capabilities.resources.as_ref().and_then(|r| r.list_changed));
    filter.prompts_list_changed = declared(capabilities.prompts.as_ref().and_then(|p| p.list_changed));
    if filter == SubscriptionFilter::default() {
        return None;
    }
    let state = service.service().clone();
    Some(Listening(tokio::spawn(async move {
        let mut subscription = match peer.listen(filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::warn!(server = %state.server, error = %e, "subscriptions/listen refused; list changes of this server are not followed");
                return;
            }
        };
        loop {
            match subscription.next().await {
                Ok(Some(notification)) => heard(&state, notification),
                Ok(None) => return,
                Err(e) => {
                    tracing::debug!(server = %state.server, error = %e, "subscriptions/listen ended");
                    return;
                }
            }
        }
    })))
}

/// One notification of the subscription, taken as the session's would be.
fn heard(state: &ClientState, notification: ServerNotification) {
    let server = state.server.clone();
    let event = match notification {
        ServerNotification::ToolListChangedNotification(_) => {
            state.tools_changed.store(true, std::sync::atomic::Ordering::SeqCst);
            DownstreamEvent::ToolsChanged { server }
        }
        ServerNotification::ResourceListChangedNotification(_) => DownstreamEvent::ResourcesListChanged { server },
        ServerNotification::PromptListChangedNotification(_) => DownstreamEvent::PromptsListChanged { server },
        _ => return,
    };
    // No receiver is fine: nobody is listening for this right now.
    let _ = state.events.send(event);
}
