//! The handler behind every `mcp__<server>__<tool>`: a [`DynTool`] that starts
//! its server on demand and forwards the call. It goes through the engine's one
//! dispatch path like any native tool, so validation, permissions, deprecation
//! and spilling apply unchanged.

use std::sync::Arc;

use quiver_engine::ToolFuture;
use quiver_engine::{Capabilities, Domain, DynTool, Risk, ToolContext, ToolError, ToolSource, ToolSpec};
use serde_json::Value;

use super::cache::RemoteTool;
use super::content;
use super::error::ServerError;
use super::server::{ServerHandle, ToolOrigin};

pub struct McpTool {
    server: Arc<ServerHandle>,
    /// The server-side name (what `tools/call` gets).
    remote_name: String,
    spec: ToolSpec,
}

impl McpTool {
    pub(crate) fn new(server: Arc<ServerHandle>, qualified: String, remote: &RemoteTool) -> Self {
        let mut spec = spec_for(server.name(), qualified, remote);
        if server.config().expose.is_direct() {
            spec.source = ToolSource::Mcp { server: server.name().to_string(), direct: true };
        }
        McpTool { server, remote_name: remote.name.clone(), spec }
    }
}

/// Annotations are hints from a server we do not control, so only the two
/// that *narrow* what we assume are believed in full: read-only lowers the
/// risk, destructive raises it (and so asks in agent mode).
pub fn risk_of(remote: &RemoteTool) -> Risk {
    if remote.destructive_hint == Some(true) && remote.read_only_hint != Some(true) {
        Risk::Destructive
    } else if remote.read_only_hint == Some(true) {
        Risk::Read
    } else {
        Risk::External
    }
}

pub fn spec_for(server: &str, qualified: String, remote: &RemoteTool) -> ToolSpec {
    let description = if remote.description.trim().is_empty() {
        remote.title.clone().unwrap_or_else(|| format!("`{}` from MCP server `{server}`.", remote.name))
    } else {
        remote.description.clone()
    };
    // The title and the server-side name are worth searching on but not worth
    // paying for in every catalog.
    let mut snippet = vec![remote.name.clone()];
    if let Some(title) = &remote.title {
        snippet.push(title.clone());
    }
    ToolSpec {
        name: qualified,
        description,
        input_schema: remote.input_schema.clone(),
        domain: Domain::Mcp,
        capabilities: Capabilities::NONE,
        risk: risk_of(remote),
        source: ToolSource::Mcp { server: server.to_string(), direct: false },
        prompt_snippet: Some(snippet.join(" — ")),
    }
}

impl DynTool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            self.server.authorize(ctx).await?;
            let arguments = match args {
                Value::Object(map) => Some(map),
                Value::Null => None,
                other => {
                    return Err(ToolError::model(format!(
                        "arguments for `{}` must be a JSON object, got {other}",
                        self.spec.name
                    )));
                }
            };
            let result = self
                .server
                .call_json(&self.remote_name, arguments)
                .await
                .map_err(|error| ToolError::model(explain_failure(&self.server, &self.remote_name, &error)))?;
            content::to_output(self.server.name(), &self.remote_name, &result)
        })
    }
}

/// A failed call's message for the model. A tool registered from an old
/// cache may be gone: that is said, instead of passing on a bare "unknown tool".
pub(crate) fn explain_failure(server: &ServerHandle, remote_name: &str, error: &ServerError) -> String {
    let (tools, origin) = server.known_tools();
    if origin == ToolOrigin::Live && !tools.iter().any(|t| t.name == remote_name) {
        format!(
            "MCP server `{}` no longer offers `{remote_name}` (its tool list changed); \
             call mcp_discover {{\"server\": \"{}\"}} to see what it has now. ({error})",
            server.name(),
            server.name()
        )
    } else {
        error.to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn remote(read_only: Option<bool>, destructive: Option<bool>) -> RemoteTool {
        RemoteTool {
            name: "t".into(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            read_only_hint: read_only,
            destructive_hint: destructive,
            output_schema: None,
            annotations: None,
            verbatim: None,
        }
    }

    #[test]
    fn risk_follows_annotations() {
        assert_eq!(risk_of(&remote(None, None)), Risk::External);
        assert_eq!(risk_of(&remote(Some(true), None)), Risk::Read);
        assert_eq!(risk_of(&remote(None, Some(true))), Risk::Destructive);
        assert_eq!(risk_of(&remote(Some(false), Some(false))), Risk::External);
        // Contradictory hints: read-only wins (the spec says destructive is
        // only meaningful when read-only is false).
        assert_eq!(risk_of(&remote(Some(true), Some(true))), Risk::Read);
    }

    #[test]
    fn spec_is_an_mcp_tool_in_the_mcp_domain() {
        let spec = spec_for("srv", "mcp__srv__t".into(), &remote(None, None));
        assert_eq!(spec.source, ToolSource::Mcp { server: "srv".into(), direct: false });
        assert_eq!(spec.domain, quiver_engine::Domain::Mcp);
        assert_eq!(spec.description, "`t` from MCP server `srv`.");
    }
}
