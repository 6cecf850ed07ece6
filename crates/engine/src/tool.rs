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
use serde_json::Value;

use crate::context::ToolContext;
use crate::domain::Domain;
use crate::input_alias::InputAlias;
use crate::result::{ToolError, ToolOutput};
use crate::spec::{Capabilities, Risk, ToolSource, ToolSpec};

pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// The typed way to write a tool.
pub trait Tool: Send + Sync + 'static {
    /// Arguments; doc comments on its fields become the schema's descriptions.
    type Input: DeserializeOwned + JsonSchema + Send;

    const NAME: &'static str;
    const DOMAIN: Domain;
    const RISK: Risk;
    /// What the tool can do; the permission gate decides by this, so a tool
    /// that runs commands, writes files, reaches the network or persists state
    /// must say so here.
    const CAPABILITIES: Capabilities;
    /// Argument names this tool answered to before the current ones, applied
    /// by dispatch before the schema check so recorded calls still run; never
    /// in the schema (see `input_alias.rs`).
    const INPUT_ALIASES: &'static [InputAlias] = &[];

    fn description(&self) -> String;

    fn run(&self, input: Self::Input, ctx: &ToolContext) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// The object-safe twin of [`Tool`], stored in the registry.
pub trait DynTool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Run with arguments already validated against `spec().input_schema`.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
    /// Old argument names, rewritten before `call` (MCP tools have none: a
    /// server's arguments are its own).
    fn input_aliases(&self) -> &'static [InputAlias] {
        &[]
    }
}

impl<T: Tool> DynTool for T {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_string(),
            description: self.description(),
            input_schema: crate::schema::schema_for::<T::Input>(),
            domain: T::DOMAIN,
            risk: T::RISK,
            capabilities: T::CAPABILITIES,
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

    fn input_aliases(&self) -> &'static [InputAlias] {
        T::INPUT_ALIASES
    }
}

pub type SharedTool = Arc<dyn DynTool>;
