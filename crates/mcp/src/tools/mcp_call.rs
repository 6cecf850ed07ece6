//! `mcp_call {server, tool, arguments}`: the fallback path to a downstream
//! tool for clients that never refresh their tool list. It does not call the
//! server itself: it dispatches `mcp__<server>__<tool>` through the engine, so
//! validation, permissions (a destructive tool still asks) and spilling are the
//! same as calling that name directly.

use std::sync::Arc;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use quiver_engine::names;

use crate::client::{McpManager, ServerHandle};

pub struct McpCall {
    pub manager: Arc<McpManager>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpCallInput {
    /// The server's name, as listed by mcp_servers.
    pub server: String,
    /// The tool's name on that server (or its full mcp__server__tool name).
    pub tool: String,
    /// The tool's arguments.
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
}

impl Tool for McpCall {
    type Input = McpCallInput;
    const NAME: &'static str = "mcp_call";
    const DOMAIN: Domain = Domain::Mcp;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Call a tool of a configured MCP server by server and tool name, \
         for when mcp__<server>__<tool> is not in your tool list yet."
            .into()
    }

    async fn run(&self, input: McpCallInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let server = self
            .manager
            .server(&input.server)
            .ok_or_else(|| ToolError::model(self.manager.unknown_server(&input.server)))?;
        let qualified = match self.resolve(server, &input.tool) {
            Some(name) => name,
            None => {
                // Not known yet (never connected, or the list moved): ask the server.
                self.manager.discover(&input.server, ctx).await?;
                self.resolve(server, &input.tool).ok_or_else(|| self.no_such_tool(server, &input.tool))?
            }
        };
        // Through the one dispatch path; a host's dispatcher reaches the newest
        // engine, where a tool that appeared after this call began lives.
        let args = input.arguments.map(Value::Object).unwrap_or(Value::Null);
        let result = ctx.call(&qualified, args).await.map_err(ToolError::Fatal)?;
        let output = ToolOutput {
            content: result.content,
            metadata: result.metadata,
            blocks: result.blocks,
            structured: result.structured_content,
            verbatim: None,
        };
        if result.is_error {
            return Err(ToolError::Report(output));
        }
        Ok(output)
    }
}

impl McpCall {
    /// The quiver name for `tool` (a server-side name or a full quiver name),
    /// if the server is known to expose it.
    fn resolve(&self, server: &ServerHandle, tool: &str) -> Option<String> {
        let exposed = self.manager.exposed_tools(server);
        if names::split(tool).is_some() {
            return exposed.into_iter().find(|(q, _)| q == tool).map(|(q, _)| q);
        }
        exposed.into_iter().find(|(_, remote)| remote.name == tool).map(|(q, _)| q)
    }

    fn no_such_tool(&self, server: &ServerHandle, tool: &str) -> ToolError {
        let (all, _) = server.known_tools();
        if all.iter().any(|t| t.name == tool) {
            return ToolError::model(format!(
                "tool `{tool}` of MCP server `{}` is turned off by enabled_tools/disabled_tools in {}",
                server.name(),
                server.config().source.display()
            ));
        }
        let offered: Vec<String> =
            self.manager.exposed_tools(server).into_iter().map(|(_, r)| format!("`{}`", r.name)).collect();
        let list = if offered.is_empty() { "none".to_string() } else { offered.join(", ") };
        ToolError::model(format!("MCP server `{}` has no tool `{tool}`; it offers: {list}", server.name()))
    }
}
