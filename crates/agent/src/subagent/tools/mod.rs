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

use quiver_engine::ToolOutput;

use crate::subagent::record::AgentHandle;

/// The projection as a tool result.
fn output_of(handle: &AgentHandle) -> ToolOutput {
    let (content, metadata) = handle.projection();
    ToolOutput { content, metadata }
}
