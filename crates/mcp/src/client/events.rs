//! What downstream servers announce between calls: their tool, resource or
//! prompt lists changed, or a subscribed resource was updated. Every
//! downstream session sends these into one manager-wide broadcast; the
//! manager re-lists a server's tools at once when they changed (so the tool
//! cache, the search index and the catalog follow), and the gateway's
//! sessions forward what their client cares about upstream
//! (`server::passthrough`).

use std::sync::{Arc, Weak};

use tokio::sync::broadcast;

use super::McpManager;

/// One announcement, naming the configured server it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownstreamEvent {
    /// `notifications/tools/list_changed` arrived (not re-listed yet).
    ToolsChanged {
        server: String,
    },
    /// The server's tools were re-listed after a change; the engine the next
    /// request gets indexes the new list.
    ToolsRelisted {
        server: String,
    },
    ResourcesListChanged {
        server: String,
    },
    PromptsListChanged {
        server: String,
    },
    /// `notifications/resources/updated` for `uri` (the server's own URI).
    ResourceUpdated {
        server: String,
        uri: String,
    },
}

/// How many announcements may wait for a slow receiver before it skips some
/// (a lagging gateway session then misses a few; the tool list is re-listed
/// regardless, by the manager's own receiver).
const CAPACITY: usize = 256;

pub(crate) fn channel() -> broadcast::Sender<DownstreamEvent> {
    broadcast::Sender::new(CAPACITY)
}

/// Re-lists a server's tools as soon as it says they changed, instead of at
/// its next call: a client in front of the gateway (and `tool_search`) should
/// see the new list without first calling an old tool. Ends with the manager.
pub(crate) fn spawn_relister(manager: &Arc<McpManager>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    let weak: Weak<McpManager> = Arc::downgrade(manager);
    let mut events = manager.events.subscribe();
    runtime.spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let DownstreamEvent::ToolsChanged { server } = event else { continue };
            let Some(manager) = weak.upgrade() else { return };
            let Some(handle) = manager.server(&server).cloned() else { continue };
            drop(manager);
            match handle.refresh().await {
                Ok(_) => {
                    let _ = handle.events().send(DownstreamEvent::ToolsRelisted { server });
                }
                Err(e) => {
                    tracing::warn!(server = %server, error = %e, "could not re-list the tools after list_changed")
                }
            }
        }
    });
}
