//! `mcp_servers`: the configured downstream servers, their transport, state
//! (not connected / connected / failed, with the last error) and tool counts,
//! live when connected, else from the cache. Starts nothing.

use std::sync::Arc;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::client::{McpManager, ToolOrigin};

pub struct McpServers {
    pub manager: Arc<McpManager>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServersInput {}

impl Tool for McpServers {
    type Input = McpServersInput;
    const NAME: &'static str = "mcp_servers";
    const DOMAIN: Domain = Domain::Mcp;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "List the configured MCP servers: transport, connection state, last error and tool count. \
         Starts nothing; use mcp_discover to connect one."
            .into()
    }

    async fn run(&self, _input: McpServersInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if self.manager.is_empty() {
            return Ok(ToolOutput::json(json!({
                "servers": [],
                "note": "No MCP servers are configured. Add [mcp_servers.NAME] (command/args or url) to \
                         quiver.toml or ~/.config/quiver/config.toml, or an .mcp.json with mcpServers.",
            })));
        }
        let servers: Vec<Value> = self
            .manager
            .servers()
            .map(|server| {
                let status = server.status();
                let origin = server.tool_origin();
                let exposed = self.manager.exposed_tools(server).len();
                let mut entry = json!({
                    "name": server.name(),
                    "transport": server.config().transport.to_string(),
                    "state": status.state,
                    "tools": if origin == ToolOrigin::None { Value::Null } else { json!(exposed) },
                    "toolsFrom": origin,
                    "source": server.config().source.display().to_string(),
                });
                if let Some(error) = status.last_error {
                    entry["lastError"] = json!(error);
                }
                if let Some(pid) = status.pid {
                    entry["pid"] = json!(pid);
                }
                if status.consecutive_failures > 0 {
                    entry["consecutiveFailures"] = json!(status.consecutive_failures);
                }
                if let Some(ms) = status.restart_in_ms {
                    entry["restartInMs"] = json!(ms);
                }
                if status.starts > 1 {
                    entry["restarts"] = json!(status.starts - 1);
                }
                entry
            })
            .collect();
        Ok(ToolOutput::json(json!({
            "servers": servers,
            "nextInstruction": "Call mcp_discover {\"server\": NAME} to connect a server and load its tools; \
                                tool_search also finds tools of servers listed here with a tool count.",
        })))
    }
}
