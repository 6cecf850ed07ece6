//! quiver's MCP layer. `rmcp` stays behind this crate so the engine and the
//! native tools never depend on the MCP SDK.
//!
//! - [`config`]: `[mcp_servers.NAME]` tables (quiver.toml, user config) and
//!   Claude-style `.mcp.json` files.
//! - [`manage`]: adding, listing, enabling, checking and importing servers in
//!   the user's own config (`quiver mcp add|list|...`, the terminal's `/mcp`).
//! - [`client`]: the [`client::McpManager`] owning every downstream server,
//!   their cached tool lists and the `DynTool` handlers for `mcp__server__tool`.
//! - [`tools`]: the `mcp_servers` / `mcp_discover` / `mcp_call` native tools.
//! - [`server`]: quiver itself served as an MCP server (`quiver mcp serve`).
//! - [`relay`]: what passes between the client in front of the gateway and
//!   the servers behind it (progress, logging, sampling, elicitation, roots).

pub mod client;
pub mod config;
pub(crate) mod lines;
pub mod manage;
pub mod relay;
pub mod server;
pub mod tools;

pub use client::{McpManager, McpProvider};
pub use config::{ConfigError, McpConfig, ServerConfig};
pub use tools::register_mcp_tools;
