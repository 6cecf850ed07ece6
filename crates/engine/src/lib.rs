//! quiver's engine: which tools a model sees, and how every call is dispatched.
//!
//! Modules map one to one onto the product's concepts: [`lifecycle`] (the state of
//! each name), [`manifest`] (the data file that holds that policy), [`registry`],
//! [`catalog`] (the byte-stable list a model gets), [`session`], [`dispatch`] and
//! [`permissions`].

pub mod canonical;
pub mod catalog;
pub mod context;
pub mod discovery;
pub mod dispatch;
pub mod engine;
pub mod lifecycle;
pub mod lint;
pub mod manifest;
pub mod permissions;
pub mod registry;
pub mod replay;
pub mod schema;
pub mod session;
pub mod spill;
pub mod tool;
pub mod tool_search;
pub mod transcript;
pub mod workspace;

pub use catalog::{Catalog, CatalogFormat, Fingerprint};
pub use context::ToolContext;
pub use engine::Engine;
pub use lifecycle::{Audience, Lifecycle, LifecycleState};
pub use manifest::Manifest;
pub use permissions::Mode;
pub use registry::Registry;
pub use session::Session;
pub use tool::{DynTool, Risk, Tool, ToolError, ToolOutput, ToolResult, ToolSource, ToolSpec};
pub use workspace::Workspace;

/// The version scripts and lint compare manifest versions against.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
