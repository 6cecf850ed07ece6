//! `mcp_discover {server}`: start (or reuse) one server, list its tools, and
//! load them all into the session, so they join the catalog tail on the next
//! request like a `tool_search` hit.

use std::sync::Arc;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::client::McpManager;
use crate::client::tool::risk_of;

pub struct McpDiscover {
    pub manager: Arc<McpManager>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpDiscoverInput {
    /// The server's name, as listed by mcp_servers.
    pub server: String,
}

/// Descriptions in the listing are cut to this; the full text is in the tool
/// itself once it is loaded.
const DESCRIPTION_PREVIEW: usize = 200;

impl Tool for McpDiscover {
    type Input = McpDiscoverInput;
    const NAME: &'static str = "mcp_discover";
    const DOMAIN: Domain = Domain::Mcp;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities = Capabilities::GATES_ITSELF;

    fn description(&self) -> String {
        "Connect one configured MCP server and load all its tools into this session; \
         they become callable as mcp__<server>__<tool> from your next request."
            .into()
    }

    async fn run(&self, input: McpDiscoverInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let tools = self.manager.discover(&input.server, ctx).await?;
        let names: Vec<String> = tools.iter().map(|(name, _)| name.clone()).collect();
        let newly = ctx.session.load(&names);
        let listing: Vec<Value> = tools
            .iter()
            .map(|(name, remote)| {
                json!({
                    "name": name,
                    "description": preview(&remote.description),
                    "risk": risk_of(remote),
                })
            })
            .collect();
        let next = if names.is_empty() {
            format!("Server `{}` is connected but exposes no tools.", input.server)
        } else {
            "These tools are callable by name from your next request. If your tool list does not refresh, \
             use mcp_call {\"server\", \"tool\", \"arguments\"}."
                .to_string()
        };
        Ok(ToolOutput::json(json!({
            "server": input.server,
            "tools": listing,
            "nextInstruction": next,
        }))
        .with_meta("loaded", json!(newly)))
    }
}

fn preview(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    if first.len() <= DESCRIPTION_PREVIEW {
        return first.to_string();
    }
    let mut cut = DESCRIPTION_PREVIEW;
    while !first.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &first[..cut])
}
