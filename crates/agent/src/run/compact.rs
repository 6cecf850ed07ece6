//! Compaction: when the next request would pass a share of the model's
//! context window, the conversation so far is summarized by the model into a
//! relay (goal, changed files, decisions, verification state, one next action)
//! and the history restarts from the original goal plus that relay.
//!
//! The summary request reuses the ongoing request's tools and system prompt
//! unchanged, so it is itself served from the prefix cache; only the history
//! after it is new. The head is untouched by compaction; the loop resets the
//! session's loads (the tail) through its port.

use crate::message::{Message, ModelRequest, ModelResponse};
use crate::provider::{Provider, ProviderError};

/// When to compact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionPolicy {
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// Compact when the next request's estimated tokens pass this share of the window.
    pub threshold: f64,
}

impl CompactionPolicy {
    pub fn new(context_window: u64) -> Self {
        CompactionPolicy { context_window, threshold: 0.8 }
    }

    pub fn limit(&self) -> u64 {
        (self.context_window as f64 * self.threshold) as u64
    }
}

/// Context windows (tokens) of models quiver knows; `[model] context_window`
/// overrides. Unknown models get a conservative default.
pub fn context_window_of(model: &str) -> u64 {
    const KNOWN: &[(&str, u64)] = &[
        ("deepseek-chat", 128_000),
        ("deepseek-reasoner", 128_000),
        ("deepseek-v4", 128_000),
        ("gpt-4.1", 1_000_000),
        ("gpt-4o", 128_000),
        ("gpt-5", 400_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("claude-", 200_000),
    ];
    KNOWN.iter().find(|(prefix, _)| model.starts_with(prefix)).map_or(64_000, |(_, w)| *w)
}

/// The request that asks for the relay: the pending request plus the relay
/// instruction (the relay's shape, see [`crate::relay`]), so it extends the
/// previous request and its prefix is cached.
pub fn summary_request(request: &ModelRequest) -> ModelRequest {
    let mut ask = request.clone();
    ask.messages
        .push(Message::user(format!("The conversation is about to be compacted. {}", crate::relay::instruction(None))));
    ask
}

/// Asks the model for the relay (`ask` from [`summary_request`]). Tool calls
/// in the answer are ignored; an empty answer is an error (the loop then
/// carries on uncompacted).
pub async fn summarize(provider: &dyn Provider, ask: &ModelRequest) -> Result<ModelResponse, ProviderError> {
    let mut ignore = |_: crate::message::StreamEvent| {};
    let response = provider.complete(ask, &mut ignore).await?;
    if response.text.trim().is_empty() {
        return Err(ProviderError::Decode {
            provider: provider.name().to_string(),
            detail: "the compaction summary came back empty".into(),
        });
    }
    Ok(response)
}

/// The history after compaction: the first user message (the goal, verbatim)
/// and the relay, as one user message the model continues from.
pub fn compacted_history(messages: &[Message], relay: &str) -> Vec<Message> {
    let goal = messages.iter().find_map(|m| match m {
        Message::User { text } => Some(text.as_str()),
        _ => None,
    });
    let text = match goal {
        Some(goal) => format!("{goal}\n\n(Earlier turns were compacted into this relay; continue from it.)\n\n{relay}"),
        None => relay.to_string(),
    };
    vec![Message::user(text)]
}
