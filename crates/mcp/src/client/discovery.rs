//! First use: discovering configured servers in the background, so the tools
//! of a server never started are findable by `tool_search` on a machine with
//! no tool-list cache yet.
//!
//! Discovery starts once per manager, on the first search of a session (or
//! when a host calls [`McpManager::start_discovery`] at startup). Only servers
//! that may start unasked are started: enabled, defined in the user's own
//! config (a project's servers need the user's approval, which a background
//! task cannot ask for), and passing the command gate's deny rules. At most
//! [`CONCURRENCY`] start at once, each bounded by its own startup timeout.
//! A server with a cached list is not started: its cached tools are already
//! searchable, and a search should not cost a process per configured server.
//! A search waits a bounded time for what is still in flight and says which
//! servers are still starting or failed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use quiver_engine::ToolContext;
use quiver_engine::permissions::trust::Source;

use super::McpManager;
use super::server::ToolOrigin;
use crate::config::Transport;

/// How many servers start at once during discovery.
pub const CONCURRENCY: usize = 4;

/// Where one server's discovery stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    Running,
    Done,
    Failed(String),
    /// Not started in the background (project-defined, disabled, unsupported).
    Skipped,
}

#[derive(Default)]
pub(crate) struct DiscoveryState {
    pub(crate) servers: BTreeMap<String, Discovery>,
}

impl McpManager {
    /// Starts background discovery of every server that may start unasked and
    /// has no tool list at all yet (neither cached nor live). Idempotent: only the first call starts anything.
    pub fn start_discovery(self: &Arc<Self>, ctx: &ToolContext) {
        if self.discovery_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.discovery_started.store(false, Ordering::SeqCst);
            return;
        };
        let mut todo = Vec::new();
        {
            let mut state = self.discovery_state();
            for server in self.servers() {
                let config = server.config();
                let eligible = config.enabled
                    && config.trust == Source::User
                    && !matches!(config.transport, Transport::Unsupported { .. })
                    && server.tool_origin() == ToolOrigin::None;
                let entry = if eligible { Discovery::Running } else { Discovery::Skipped };
                if eligible {
                    todo.push(Arc::clone(server));
                }
                state.servers.insert(server.name().to_string(), entry);
            }
        }
        self.discovery_running.send_replace(todo.len());
        let limit = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
        for server in todo {
            let (manager, ctx, limit) = (Arc::clone(self), ctx.clone(), Arc::clone(&limit));
            runtime.spawn(async move {
                let outcome = match limit.acquire().await {
                    Ok(_permit) => match server.authorize(&ctx).await {
                        Ok(()) => server.refresh().await.map(|_| ()).map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    },
                    Err(e) => Err(e.to_string()),
                };
                let entry = match outcome {
                    Ok(()) => Discovery::Done,
                    Err(e) => {
                        tracing::info!(server = %server.name(), error = %e, "background discovery failed");
                        Discovery::Failed(e)
                    }
                };
                manager.discovery_state().servers.insert(server.name().to_string(), entry);
                manager.discovery_running.send_modify(|n| *n = n.saturating_sub(1));
            });
        }
    }

    /// Where each server's background discovery stands (empty before it started).
    pub fn discovery(&self) -> BTreeMap<String, Discovery> {
        self.discovery_state().servers.clone()
    }

    /// Starts discovery if needed, waits up to `within` for it, and returns
    /// notes for the model on servers still starting or failed.
    pub async fn settle(self: &Arc<Self>, ctx: &ToolContext, within: Duration) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        self.start_discovery(ctx);
        let mut running = self.discovery_running.subscribe();
        let _ = tokio::time::timeout(within, running.wait_for(|n| *n == 0)).await;
        let state = self.discovery();
        let starting: Vec<String> =
            state.iter().filter(|(_, d)| **d == Discovery::Running).map(|(n, _)| format!("`{n}`")).collect();
        let failed: Vec<String> = state
            .iter()
            .filter_map(|(n, d)| match d {
                Discovery::Failed(_) => Some(format!("`{n}`")),
                _ => None,
            })
            .collect();
        let mut notes = Vec::new();
        if !starting.is_empty() {
            notes.push(format!(
                "MCP servers still starting, their tools not searchable yet: {}; search again shortly.",
                starting.join(", ")
            ));
        }
        if !failed.is_empty() {
            notes.push(format!("MCP servers that failed to start: {} (mcp_servers shows why).", failed.join(", ")));
        }
        notes
    }

    fn discovery_state(&self) -> parking_lot::MutexGuard<'_, DiscoveryState> {
        self.discovery.lock()
    }
}
