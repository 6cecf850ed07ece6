//! quiver's engine: which tools a model sees, and how every call is dispatched.
//!
//! Modules map one to one onto the product's concepts: `lifecycle` (the state
//! of each name), `manifest` (the data file that holds that policy),
//! `registry`, `catalog` (the byte-stable list a model gets), `session`,
//! `dispatch` and [`permissions`] (the one gate). The engine composes itself:
//! [`EngineHost`] rebuilds engines when a [`ToolProvider`] (MCP servers) changes
//! its tools, and hands out [`ToolContext`]s whose search and dispatch reach
//! the newest engine. `docs/architecture.md` shows the path of a call.
//!
//! The API is curated: types at the root; namespaced modules only where a
//! family of items belongs together (spill storage, transcripts, replay, lint,
//! MCP tool names, canonical JSON, the permission gate).

mod audience;
mod capabilities;
mod catalog;
mod context;
mod discovery;
mod dispatch;
mod domain;
mod engine;
mod fim;
mod host;
mod input_alias;
mod lifecycle;
mod load_guard;
mod manifest;
mod registry;
mod result;
mod schema;
mod session;
mod spec;
#[cfg(test)]
mod strum_names_tests;
mod surface;
mod tool;
mod workspace;
mod workspace_open;

pub mod blocks;
pub mod canonical;
pub mod lint;
pub mod names;
pub mod permissions;
pub mod replay;
pub mod spill;
pub mod tool_search;
pub mod transcript;

pub use audience::Audience;
pub use capabilities::Capabilities;
pub use catalog::{Catalog, CatalogFormat, Fingerprint, render_tool};
pub use context::{DispatchFuture, Dispatcher, SettleFuture, ToolContext, new_session_id};
pub use domain::{Domain, DomainFilter, NameError};
pub use engine::Engine;
pub use fim::{FillInMiddle, FimError, FimFuture};
pub use host::{EngineHost, ToolProvider};
pub use input_alias::{InputAlias, Unit, apply as apply_input_aliases};
pub use lifecycle::{Lifecycle, LifecycleState, Resolution};
pub use manifest::{AliasEntry, AliasState, BUILTIN_MANIFEST, ExecRules, Gate, Manifest, Profile, ToolOverlay};
pub use permissions::Mode;
/// The ranking a search used, and the seam a sentence-embedding model plugs into.
pub use quiver_search::{CatalogMeaning, MeaningModel, MeaningState, Ranking};
pub use registry::{RegisteredTool, Registry};
pub use result::{ToolError, ToolOutput, ToolResult};
pub use session::{LazyToolState, SearchRecord, Session};
pub use spec::{Risk, ToolSource, ToolSpec};
pub use surface::{Ranked, Resolved, Scope, SearchOptions, ToolSurface};
pub use tool::{DynTool, SharedTool, Tool, ToolFuture};
pub use workspace::Workspace;
pub use workspace_open::ReadError;

/// The version scripts and lint compare manifest versions against.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
