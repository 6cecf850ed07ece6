//! What a call returns: a tool's own answer ([`ToolOutput`] or [`ToolError`]),
//! and the `{content, is_error, metadata}` shape every caller sees ([`ToolResult`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool's successful answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub content: Value,
    pub metadata: Map<String, Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput { content: Value::String(text.into()), metadata: Map::new() }
    }

    pub fn json(content: Value) -> Self {
        ToolOutput { content, metadata: Map::new() }
    }

    pub fn with_meta(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_string(), value.into());
        self
    }
}

/// Why a tool did not succeed. `Model` errors go back to the model as an error
/// result it can act on; `Fatal` errors stop the caller (the session is broken).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Model(String),
    /// An error result with structured facts the caller can act on (a timed-out
    /// command's exit code, duration, log file): content plus metadata.
    #[error("{}", .0.content)]
    Report(ToolOutput),
    #[error(transparent)]
    Fatal(#[from] anyhow::Error),
}

impl ToolError {
    pub fn model(message: impl Into<String>) -> Self {
        ToolError::Model(message.into())
    }
}

/// The result shape every caller sees: `{content, is_error, metadata}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub content: Value,
    pub is_error: bool,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

impl ToolResult {
    pub fn ok(output: ToolOutput) -> Self {
        ToolResult { content: output.content, is_error: false, metadata: output.metadata }
    }

    pub fn error(message: impl Into<String>) -> Self {
        ToolResult { content: Value::String(message.into()), is_error: true, metadata: Map::new() }
    }

    /// The content as text: strings verbatim, anything else as JSON.
    pub fn content_text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}
