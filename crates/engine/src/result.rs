//! What a call returns: a tool's own answer ([`ToolOutput`] or [`ToolError`]),
//! and the `{content, is_error, metadata}` shape every caller sees ([`ToolResult`]).
//!
//! A result may also carry MCP content blocks (`text`, `image`, `audio`,
//! `resource`, `resource_link`) and a `structuredContent` value. Most native
//! tools answer with `content` alone, which stands for one text block; a
//! proxied MCP tool keeps the downstream blocks exactly as the server sent
//! them, and `content` is then their text rendering (what a reader that only
//! takes text is shown). See [`crate::blocks`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool's successful answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub content: Value,
    pub metadata: Map<String, Value>,
    /// MCP content blocks, verbatim; empty means "one text block: `content`".
    pub blocks: Vec<Value>,
    /// MCP `structuredContent`, when the tool gave one explicitly.
    pub structured: Option<Value>,
    /// The whole MCP `CallToolResult` exactly as a downstream server wrote it
    /// (its bytes, key order and number forms), for a gateway to pass on
    /// unchanged. Only a proxied MCP tool sets it; dispatch drops it whenever
    /// it changes the result (a deprecation notice, a spill).
    // An `Arc<String>`, not `Arc<str>`: one word, so `ToolError::Report`
    // (which holds a `ToolOutput`) stays small.
    pub verbatim: Option<std::sync::Arc<String>>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput { content: Value::String(text.into()), ..Default::default() }
    }

    pub fn json(content: Value) -> Self {
        ToolOutput { content, ..Default::default() }
    }

    /// An answer made of MCP content blocks; `content` becomes their text rendering.
    pub fn from_blocks(blocks: Vec<Value>) -> Self {
        ToolOutput { content: Value::String(crate::blocks::render_text(&blocks)), blocks, ..Default::default() }
    }

    pub fn with_meta(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_string(), value.into());
        self
    }

    pub fn with_structured(mut self, structured: Value) -> Self {
        self.structured = Some(structured);
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

/// The result shape every caller sees: `{content, is_error, metadata}`, plus
/// `blocks` and `structured_content` when the tool gave them (absent otherwise,
/// so a text result's bytes are what they always were).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub content: Value,
    pub is_error: bool,
    #[serde(default)]
    pub metadata: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// See [`ToolOutput::verbatim`]. Never recorded: a transcript holds the
    /// result as quiver read it.
    #[serde(skip)]
    pub verbatim: Option<std::sync::Arc<String>>,
}

impl ToolResult {
    pub fn ok(output: ToolOutput) -> Self {
        ToolResult {
            content: output.content,
            is_error: false,
            metadata: output.metadata,
            blocks: output.blocks,
            structured_content: output.structured,
            verbatim: output.verbatim,
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        ToolResult {
            content: Value::String(message.into()),
            is_error: true,
            metadata: Map::new(),
            blocks: Vec::new(),
            structured_content: None,
            verbatim: None,
        }
    }

    /// The content as text: strings verbatim, anything else as JSON.
    pub fn content_text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// The result as MCP content blocks: the tool's own blocks, else one text
    /// block holding the content (canonical JSON when it is not a string).
    pub fn mcp_blocks(&self) -> Vec<Value> {
        if !self.blocks.is_empty() {
            return self.blocks.clone();
        }
        let text = match &self.content {
            Value::String(s) => s.clone(),
            other => crate::canonical::to_string(other),
        };
        vec![serde_json::json!({"type": "text", "text": text})]
    }

    /// Image blocks a vision-capable model can be shown: (mime type, base64 data).
    pub fn images(&self) -> Vec<(String, String)> {
        crate::blocks::images(&self.blocks)
    }
}
