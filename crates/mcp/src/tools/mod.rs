//! The three native tools that expose downstream servers to the model, all
//! deferred (found through `tool_search`, domain `mcp`):
//!
//! - `mcp_servers`: what is configured, and in what state;
//! - `mcp_discover`: start one server and load its tools into the session;
//! - `mcp_call`: call a server's tool by server + name, for clients that never
//!   refresh their tool list (it dispatches the `mcp__server__tool` name, so it
//!   is the same call path as calling that name directly).

mod mcp_call;
mod mcp_discover;
mod mcp_servers;

use std::sync::Arc;

use quiver_engine::Registry;

pub use mcp_call::McpCall;
pub use mcp_discover::McpDiscover;
pub use mcp_servers::McpServers;

use crate::client::McpManager;

/// Registers `mcp_servers`, `mcp_discover` and `mcp_call` over `manager`.
pub fn register_mcp_tools(registry: &mut Registry, manager: &Arc<McpManager>) -> anyhow::Result<()> {
    registry.register(McpServers { manager: Arc::clone(manager) })?;
    registry.register(McpDiscover { manager: Arc::clone(manager) })?;
    registry.register(McpCall { manager: Arc::clone(manager) })?;
    Ok(())
}
