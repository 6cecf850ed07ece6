//! Managing MCP servers: what `quiver mcp add|list|get|remove|enable|disable|
//! validate|tools|import` do, kept apart from clap so the terminal front
//! end's `/mcp` drives the same code.
//!
//! - [`user_file`]: the user's own `config.toml`, edited with `toml_edit`
//!   (comments and layout kept), checked with the same reader quiver runs
//!   on, written atomically. Nothing here ever writes a project's file: a
//!   cloned repository's config may only restrict what the user's allows,
//!   and quiver never edits it.
//! - [`new_server`]: a server to add, and the `K=V` / `K: V` argument forms.
//! - [`name`]: which server names are accepted (those that are their own
//!   tool prefix, `mcp__<name>__<tool>`).
//! - [`import`]: Claude-style `{"mcpServers": {...}}` entries as servers to add.
//! - [`inspect`]: one server's settings for a listing, secrets masked.
//! - [`check`]: start servers through the command gate and list their tools
//!   under the names quiver exposes them by.

pub mod check;
mod error;
pub mod import;
pub mod inspect;
pub mod name;
pub mod new_server;
pub mod user_file;

pub use check::{CheckOutcome, ServerCheck, ToolInfo};
pub use error::ManageError;
pub use import::{ImportOptions, ImportPlan};
pub use inspect::ServerInfo;
pub use new_server::{NewServer, NewTransport};
pub use user_file::{Added, UserConfig};
