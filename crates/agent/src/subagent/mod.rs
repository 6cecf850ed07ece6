//! Sub-agents: child runs of the same agent loop, each with its own session,
//! transcript, role and enforced limits.
//!
//! - [`hub`]: the registry of child runs (open, wait, input, cancel, release).
//! - [`role`]: roles, their aliases, prompts and what each may call.
//! - [`guard`]: the dispatcher a child runs behind; it enforces the role chain.
//! - [`contract`]: the five-section answer every child gives, parsed.
//! - [`limits`]: `[subagents]` settings (concurrency cap, depth).
//! - [`record`]: one child's state as the parent sees it.
//! - [`store`]: the records on disk, stamped with a boot id (`quiver agents`).
//! - `tools/`: `agent_open`, `agent_eval`, `agent_close`, `tool_agent`.

pub mod contract;
pub mod guard;
pub mod hub;
pub mod limits;
pub mod record;
pub mod role;
pub mod store;
pub mod tools;

pub use hub::{AgentHub, AgentRuntime, EventTap, OpenRequest};
pub use limits::{LimitsError, SubagentLimits};
pub use role::Role;
pub use tools::register_tools;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "role_tests.rs"]
mod role_tests;
