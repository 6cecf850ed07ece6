//! What a tool is: its spec (what the model sees) apart from its handler (what runs).
//!
//! Tools are written against the typed [`Tool`] trait: an input struct deriving
//! `Deserialize + JsonSchema`, whose doc comments become the argument schema. The
//! registry stores them behind the object-safe twin [`DynTool`], which is also what
//! MCP-backed tools implement, so native and MCP tools share one dispatch path.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::ToolContext;

/// What a tool can do to the world; the permission layer decides by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Read,
    Write,
    Destructive,
    External,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::Destructive => "destructive",
            Risk::External => "external",
        }
    }
}

/// Where a tool came from. Native tools head the catalog; MCP tools follow them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ToolSource {
    Native,
    Mcp { server: String },
}

/// Everything a model (or a search) may learn about a tool. Lifecycle state is
/// deliberately absent: it is catalog policy, never part of what is serialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub domain: String,
    pub risk: Risk,
    pub source: ToolSource,
    /// Extra text searched by `tool_search` but never sent in the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
}

impl ToolSpec {
    pub fn is_native(&self) -> bool {
        self.source == ToolSource::Native
    }
}

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

pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// The typed way to write a tool.
pub trait Tool: Send + Sync + 'static {
    /// Arguments; doc comments on its fields become the schema's descriptions.
    type Input: DeserializeOwned + JsonSchema + Send;

    const NAME: &'static str;
    const DOMAIN: &'static str;
    const RISK: Risk;

    fn description(&self) -> String;

    fn run(&self, input: Self::Input, ctx: &ToolContext) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// The object-safe twin of [`Tool`], stored in the registry.
pub trait DynTool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Run with arguments already validated against `spec().input_schema`.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

impl<T: Tool> DynTool for T {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_string(),
            description: self.description(),
            input_schema: crate::schema::schema_for::<T::Input>(),
            domain: T::DOMAIN.to_string(),
            risk: T::RISK,
            source: ToolSource::Native,
            prompt_snippet: None,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: T::Input = serde_json::from_value(args)
                .map_err(|e| ToolError::model(format!("invalid arguments for {}: {e}", T::NAME)))?;
            self.run(input, ctx).await
        })
    }
}

pub type SharedTool = Arc<dyn DynTool>;
