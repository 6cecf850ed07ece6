//! quiver's model side: provider clients and the agent turn loop.
//!
//! - [`message`]: the provider-neutral conversation and request/response types.
//! - [`provider`]: the `Provider` trait every backend implements, and its errors.
//! - [`openai`] / [`anthropic`]: the two wires (OpenAI-compatible Chat
//!   Completions, DeepSeek by default; Anthropic Messages); [`responses`]:
//!   OpenAI's Responses API (the default for api.openai.com).
//! - [`config`]: `[model]` / `[providers.NAME]`, layered with trust rules.
//! - [`run`]: the turn loop; engine types only in `run/engine_port.rs`.
//! - [`exec`]: `quiver exec` / `audit` behind the CLI: config files, transcripts,
//!   resume, event output, exit status, the terminal approver.
//! - [`relay`]: the `# Session relay` hand-off (`quiver relay`, compaction, `--from-relay`).
//! - [`subagent`]: child runs (`agent_open`/`agent_eval`/`agent_close`, `tool_agent`).
//! - [`probe`]: `quiver providers check`: what a provider's server does, cached per base URL and model.
//! - `scripted` (feature `scripted`): a faithful fake model server for tests.

pub mod anthropic;
mod calls;
pub mod config;
pub mod deferred;
pub mod dispatch;
pub mod exec;
mod http;
pub mod learned;
pub mod message;
pub mod openai;
pub mod probe;
pub mod provider;
mod rejection;
pub mod relay;
pub mod responses;
pub mod run;
#[cfg(feature = "scripted")]
pub mod scripted;
mod state;
pub mod subagent;
pub mod vision;

pub use config::{AgentConfig, CliOverrides, ConfigError, ConfigLayer, ProviderConfig, Trust};
pub use http::{HttpOptions, RetryPolicy};
pub use message::{
    Effort, FinishReason, Message, ModelRequest, ModelResponse, StreamEvent, ToolCall, ToolImage, Usage,
    prompt_cache_key,
};
pub use provider::{ApiKey, BoxFuture, Provider, ProviderError, Sink, Wire};
