//! MCP as one [`ToolProvider`] of the engine's host: the `mcp_*` tools plus
//! every known downstream tool (`mcp__<server>__<tool>`, from the live list
//! or the cached one). The engine composes itself from its providers; this
//! crate only says which tools MCP brings and when that set moved.

use std::sync::Arc;

use quiver_engine::{Registry, SettleFuture, ToolContext, ToolProvider};

use super::McpManager;

pub struct McpProvider {
    manager: Arc<McpManager>,
}

impl McpProvider {
    pub fn shared(manager: &Arc<McpManager>) -> Arc<dyn ToolProvider> {
        Arc::new(McpProvider { manager: Arc::clone(manager) })
    }
}

impl ToolProvider for McpProvider {
    fn register(&self, registry: &mut Registry) -> anyhow::Result<()> {
        crate::tools::register_mcp_tools(registry, &self.manager)?;
        self.manager.register_server_tools(registry)?;
        Ok(())
    }

    fn generation(&self) -> u64 {
        self.manager.generation()
    }

    fn settle<'a>(&'a self, ctx: &'a ToolContext, within: std::time::Duration) -> SettleFuture<'a> {
        Box::pin(self.manager.settle(ctx, within))
    }
}
