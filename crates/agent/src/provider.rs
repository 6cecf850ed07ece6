//! The one trait every model backend implements, and the errors it reports.
//!
//! Object-safe (boxed futures) so the turn loop holds a `Box<dyn Provider>`
//! chosen at runtime from config, and tests swap in the scripted server by URL.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::message::{ModelRequest, ModelResponse, StreamEvent};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where streamed events go. `Send` so a provider's future stays `Send`.
pub type Sink<'a> = &'a mut (dyn FnMut(StreamEvent) + Send);

/// Which HTTP dialect a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI-compatible Chat Completions (DeepSeek, OpenAI, most others).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI's Responses API (client-executed tool search, encrypted reasoning).
    Responses,
}

impl Wire {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai" => Some(Wire::OpenAi),
            "anthropic" => Some(Wire::Anthropic),
            "responses" => Some(Wire::Responses),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
            Wire::Responses => "responses",
        }
    }
}

pub trait Provider: Send + Sync {
    /// The configured name (`deepseek`, `openai`, a user-defined one); every
    /// error names it.
    fn name(&self) -> &str;

    fn wire(&self) -> Wire;

    /// Whether requests should carry every loadable tool up front, deferred
    /// (`ModelRequest::deferred_tools`); see [`crate::deferred`].
    fn defers_tools(&self) -> bool {
        false
    }

    /// Whether loaded tools are called through a `call_tool` head tool
    /// (Chat Completions' `deferred_tools = "dispatch"`): the request goes
    /// out as [`crate::dispatch::dispatched`] makes it, and the loop records
    /// its prefix that way.
    fn dispatches_tools(&self) -> bool {
        false
    }

    /// One model call. Streams through `sink` when `req.stream`; either way the
    /// result has the same shape.
    fn complete<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: Sink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>>;

    /// Fill-in-the-middle: the text that goes between `prefix` and `suffix`.
    fn fim<'a>(
        &'a self,
        prefix: &'a str,
        suffix: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, ProviderError>>;
}

/// An API key. Only ever read from the environment; its `Debug` never shows it
/// and it has no `Serialize`, so it cannot leak into logs or transcripts.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Everything that can go wrong talking to a model; each names the provider.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// A 4xx (other than 429) or an error status after which retrying is pointless.
    #[error("{provider}: HTTP {status}: {message}")]
    Status { provider: String, status: u16, message: String },
    /// The server refused this request's body as invalid (a validation error,
    /// whatever the status: llama-cpp-python says so with a 500). Sending the
    /// same bytes again cannot succeed, so they were not.
    #[error("{provider}: HTTP {status}: the server rejected the request{}: {message}", field_note(.field))]
    Rejected { provider: String, status: u16, field: Option<String>, message: String },
    /// Retryable failures (429, 5xx, connection resets) until the budget ran out.
    #[error("{provider}: gave up after {attempts} attempts in {elapsed:.1?}: {last}")]
    RetriesExhausted { provider: String, attempts: u32, elapsed: Duration, last: String },
    #[error("{provider}: {what} timed out after {after:.1?}")]
    Timeout { provider: String, what: String, after: Duration },
    /// The stream broke: cut early, a line that is not JSON, an `error` event.
    #[error("{provider}: stream broken: {detail}")]
    Stream { provider: String, detail: String },
    /// A non-streamed body that does not have the documented shape.
    #[error("{provider}: unexpected response: {detail}")]
    Decode { provider: String, detail: String },
    #[error("{provider}: {what} is not supported by this provider")]
    Unsupported { provider: String, what: String },
    #[error("{provider}: cannot send the request: {detail}")]
    Transport { provider: String, detail: String },
}

fn field_note(field: &Option<String>) -> String {
    field.as_ref().map(|f| format!(" (field `{f}`)")).unwrap_or_default()
}
