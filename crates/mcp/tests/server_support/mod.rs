//! Shared by the in-process server tests: a small tool surface of our own (so
//! the tests do not depend on the native tools' evolving head), a recording
//! MCP test client, and helpers to connect the two over an in-memory pipe or
//! over HTTP.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use quiver_engine::ToolFuture;
use quiver_engine::tool_search::ToolSearch;
use quiver_engine::{
    Audience, DynTool, Engine, Manifest, Mode, Registry, Risk, ToolContext, ToolError, ToolOutput, ToolSource,
    ToolSpec, Workspace,
};
use quiver_mcp::server::{Surface, serve_io};
use rmcp::ServiceExt;
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};

/// A tool defined by closure, so a test surface is a few lines.
pub struct FnTool {
    spec: ToolSpec,
    run: Arc<dyn Fn(Value) -> Result<ToolOutput, ToolError> + Send + Sync>,
}

impl DynTool for FnTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let out = (self.run)(args);
        Box::pin(async move { out })
    }
}

fn tool(
    name: &str,
    description: &str,
    risk: Risk,
    schema: Value,
    run: impl Fn(Value) -> Result<ToolOutput, ToolError> + Send + Sync + 'static,
) -> FnTool {
    FnTool {
        spec: ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema: schema,
            domain: quiver_engine::Domain::File,
            capabilities: quiver_engine::Capabilities::NONE,
            risk,
            source: ToolSource::Native,
            prompt_snippet: None,
        },
        run: Arc::new(run),
    }
}

fn text_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string", "description": "What to say"}}, "required": ["text"], "additionalProperties": false})
}

const MANIFEST: &str = r#"
[profiles.default]
active = ["say", "json_info", "explode", "tool_search"]

[aliases.old_say]
replacement = "say"
state = "deprecated"
first_deprecated_version = "0.0.1"
planned_removal_version = "TBD"

[aliases.quiet_say]
replacement = "say"
state = "hidden-compatibility"
"#;

/// head: explode, json_info, say, tool_search; deferred: weather_lookup,
/// stock_quote, wipe_cache (destructive: asks in agent mode).
pub fn surface(mode: Mode) -> (Arc<Surface>, tempfile::TempDir) {
    let mut registry = Registry::new();
    registry.register(ToolSearch).unwrap();
    registry
        .register(tool("say", "Say the given text back.", Risk::Read, text_schema(), |a| {
            Ok(ToolOutput::text(a["text"].as_str().unwrap_or_default()))
        }))
        .unwrap();
    registry
        .register(tool(
            "json_info",
            "Report facts as JSON.",
            Risk::Read,
            json!({"type": "object", "properties": {}}),
            |_| Ok(ToolOutput::json(json!({"zeta": 1, "alpha": {"b": 2, "a": 1}})).with_meta("exit_code", 0)),
        ))
        .unwrap();
    registry
        .register(tool("explode", "Fail fatally.", Risk::Read, json!({"type": "object", "properties": {}}), |_| {
            Err(ToolError::Fatal(anyhow::anyhow!("the handler blew up")))
        }))
        .unwrap();
    registry
        .register(tool(
            "weather_lookup",
            "Look up the weather forecast for a city.",
            Risk::Read,
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            |a| Ok(ToolOutput::text(format!("sunny in {}", a["city"].as_str().unwrap_or("?")))),
        ))
        .unwrap();
    registry
        .register(tool(
            "stock_quote",
            "Get the latest stock price quote for a ticker symbol.",
            Risk::Read,
            json!({"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}),
            |a| Ok(ToolOutput::text(format!("{} 42.00", a["ticker"].as_str().unwrap_or("?")))),
        ))
        .unwrap();
    registry
        .register(tool(
            "wipe_cache",
            "Delete every cached build artifact.",
            Risk::Destructive,
            json!({"type": "object", "properties": {}}),
            |_| Ok(ToolOutput::text("cache wiped")),
        ))
        .unwrap();
    let engine = Arc::new(Engine::new(registry, Manifest::parse(MANIFEST).unwrap()));
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let audience = Audience { provider: "default".into(), model: None, mode };
    (Arc::new(Surface::new(engine, workspace, audience)), dir)
}

pub use quiver_testkit::mcp_client::{Client, TestClient, call, list};
#[allow(unused_imports)] // only the HTTP tests use it
pub use quiver_testkit::raw_http::raw_initialize;

/// One MCP connection to `surface` over an in-memory pipe (a fresh quiver session).
pub async fn connect(surface: Arc<Surface>, client: TestClient) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = serve_io(surface, server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client_io);
    client.serve((client_read, client_write)).await.expect("client handshake")
}

/// The tool as its canonical wire bytes, for byte-identity checks.
pub fn bytes(tool: &Tool) -> String {
    quiver_engine::canonical::to_string(&serde_json::to_value(tool).unwrap())
}

pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .filter_map(|v| v.get("text").and_then(Value::as_str).map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}
