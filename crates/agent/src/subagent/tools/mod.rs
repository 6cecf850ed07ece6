//! The sub-agent tools, one file each. They hold the process's [`AgentHub`];
//! all of them are read-risk at the gate because a child can never do more
//! than its parent's mode allows (its context carries that mode) and its
//! role allows (its dispatcher checks that).

mod agent_close;
mod agent_eval;
mod agent_open;
mod tool_agent;

pub use agent_close::AgentClose;
pub use agent_eval::AgentEval;
pub use agent_open::AgentOpen;
pub use tool_agent::ToolAgent;

use std::sync::Arc;

use quiver_engine::{Registry, ToolOutput};

use crate::subagent::hub::AgentHub;
use crate::subagent::record::AgentHandle;

/// Registers `agent_open`, `agent_eval`, `agent_close` and `tool_agent` on `hub`.
pub fn register_tools(hub: &Arc<AgentHub>, registry: &mut Registry) -> anyhow::Result<()> {
    registry.register(AgentOpen(Arc::clone(hub)))?;
    registry.register(AgentEval(Arc::clone(hub)))?;
    registry.register(AgentClose(Arc::clone(hub)))?;
    registry.register(ToolAgent(Arc::clone(hub)))?;
    Ok(())
}

/// The projection as a tool result.
fn output_of(handle: &AgentHandle) -> ToolOutput {
    let (content, metadata) = handle.projection();
    ToolOutput { content, metadata, ..ToolOutput::default() }
}
