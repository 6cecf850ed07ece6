//! Fill-in-the-middle: the one model capability a tool may reach (`fim_edit`).
//!
//! The trait lives in the engine so the tools crate never depends on the agent
//! crate: the agent runtime implements it over its model provider and puts it
//! in the [`ToolContext`](crate::ToolContext); hosts without a model (the MCP
//! server, `quiver call`) leave it `None`, and the tool says so.

use std::future::Future;
use std::pin::Pin;

pub type FimFuture<'a> = Pin<Box<dyn Future<Output = Result<String, FimError>> + Send + 'a>>;

/// Why a completion failed: the provider's own error, kept whole (the engine
/// cannot name the agent crate's error type) and shown as it words itself.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct FimError(Box<dyn std::error::Error + Send + Sync>);

impl FimError {
    /// Wraps an error, or a message (`&str`, `String`) where there is none.
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        FimError(error.into())
    }

    /// The provider's error, to downcast to its own type.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

pub trait FillInMiddle: Send + Sync {
    /// The provider's configured name, for messages.
    fn provider(&self) -> &str;

    /// The text that belongs between `prefix` and `suffix`, at most
    /// `max_tokens` long. `Err` is the provider's explanation (it names the
    /// provider), worded so a model can act on it.
    fn fill<'a>(&'a self, prefix: &'a str, suffix: &'a str, max_tokens: u32) -> FimFuture<'a>;
}
