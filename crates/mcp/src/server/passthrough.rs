//! Resources, prompts and completion of the servers behind the gateway,
//! forwarded as they are; quiver only renames so that one client can address
//! several servers and every name round-trips:
//!
//! | server exposed | prompt `NAME` | resource URI / template `U` |
//! |---|---|---|
//! | through search (default) | `mcp__<server>__NAME` | `quiver-mcp://<server>/U` |
//! | directly (`expose = "direct"`) | `NAME` | `U` |
//!
//! `<server>` is the server's sanitized tool prefix (as in
//! `mcp__<server>__<tool>`). The URI prefix is literal text, so a prefixed
//! template is still an RFC 6570 template of the same variables. Contents a
//! read returns carry the URI the client asked for. A name or URI without
//! the prefix belongs to a direct server: the one that listed it, else the
//! first direct server.
//!
//! Lists gather every enabled server that is connected or that the user's
//! own config defines (a project's server is never started to fill a list);
//! a server that fails is left out of the list, not the whole list. A read,
//! a prompt or a subscription of one server passes the command gate first,
//! as a tool call does.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use quiver_engine::ToolContext;
use quiver_engine::permissions::trust::Source;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult,
    ServerCapabilities, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleClient};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::ServerHandle;

/// The scheme and authority part of a prefixed URI: `quiver-mcp://<server>/<uri>`.
pub const URI_PREFIX: &str = "quiver-mcp://";

/// Shared by every session of one `quiver mcp serve`.
pub struct Passthrough {
    servers: Vec<Arc<ServerHandle>>,
    /// Names and URIs direct servers listed, to route them back.
    routes: Mutex<Routes>,
    /// Downstream subscriptions: (server, its URI) → how many sessions hold one.
    subscriptions: Mutex<HashMap<(String, String), usize>>,
}

#[derive(Default)]
struct Routes {
    uris: HashMap<String, String>,
    /// (literal text before the template's first `{`, server), longest first.
    templates: Vec<(String, String)>,
    prompts: HashMap<String, String>,
}

/// What a request names, resolved: the server and the name it knows.
struct Target {
    server: Arc<ServerHandle>,
    own: String,
}

fn direct(server: &ServerHandle) -> bool {
    server.config().expose.is_direct()
}

fn reshape<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("reshaping a forwarded result: {e}"), None))
}

fn forwarded(server: &ServerHandle, what: &str) -> impl Fn(rmcp::ServiceError) -> McpError {
    let name = server.name().to_string();
    let what = what.to_string();
    move |e| match e {
        rmcp::ServiceError::McpError(e) => e,
        other => {
            McpError::internal_error(format!("MCP server `{name}` gave no usable answer to {what}: {other}"), None)
        }
    }
}

impl Passthrough {
    pub fn new(servers: Vec<Arc<ServerHandle>>) -> Self {
        Passthrough { servers, routes: Mutex::default(), subscriptions: Mutex::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The URI a client sees for `server`'s `uri`.
    pub fn upstream_uri(server: &ServerHandle, uri: &str) -> String {
        if direct(server) { uri.to_string() } else { format!("{URI_PREFIX}{}/{uri}", server.prefix()) }
    }

    /// The prompt name a client sees for `server`'s `name`.
    pub fn upstream_prompt(server: &ServerHandle, name: &str) -> String {
        if direct(server) { name.to_string() } else { format!("mcp__{}__{name}", server.prefix()) }
    }

    pub fn server(&self, name: &str) -> Option<&Arc<ServerHandle>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Servers a list may include without asking anyone.
    fn listable(&self) -> impl Iterator<Item = &Arc<ServerHandle>> {
        self.servers.iter().filter(|s| s.config().enabled && (s.is_connected() || s.config().trust == Source::User))
    }

    /// Sessions of the listable servers that declared `has`, in name order.
    async fn sessions(&self, has: impl Fn(&ServerCapabilities) -> bool) -> Vec<(Arc<ServerHandle>, Peer<RoleClient>)> {
        let mut out = Vec::new();
        for server in self.listable() {
            match server.session().await {
                Ok((peer, capabilities)) if has(&capabilities) => out.push((Arc::clone(server), peer)),
                Ok(_) => {}
                Err(e) => tracing::info!(server = %server.name(), "left out of a list: {e}"),
            }
        }
        out
    }

    pub async fn list_resources(&self) -> Result<ListResourcesResult, McpError> {
        let mut all = Vec::new();
        for (server, peer) in self.sessions(|c| c.resources.is_some()).await {
            let listed = match peer.list_all_resources().await {
                Ok(listed) => listed,
                Err(e) => {
                    tracing::info!(server = %server.name(), "resources/list failed: {e}");
                    continue;
                }
            };
            for resource in listed {
                let mut value = serde_json::to_value(&resource).unwrap_or_default();
                if let Some(Value::String(uri)) = value.get_mut("uri") {
                    if direct(&server) {
                        self.routes.lock().uris.insert(uri.clone(), server.name().to_string());
                    }
                    *uri = Self::upstream_uri(&server, uri);
                }
                all.push(value);
            }
        }
        reshape(serde_json::json!({ "resources": all }))
    }

    pub async fn list_resource_templates(&self) -> Result<ListResourceTemplatesResult, McpError> {
        let mut all = Vec::new();
        for (server, peer) in self.sessions(|c| c.resources.is_some()).await {
            let listed = match peer.list_all_resource_templates().await {
                Ok(listed) => listed,
                Err(e) => {
                    tracing::info!(server = %server.name(), "resources/templates/list failed: {e}");
                    continue;
                }
            };
            for template in listed {
                let mut value = serde_json::to_value(&template).unwrap_or_default();
                if let Some(Value::String(uri)) = value.get_mut("uriTemplate") {
                    if direct(&server) {
                        let literal = uri.split('{').next().unwrap_or_default().to_string();
                        let mut routes = self.routes.lock();
                        routes.templates.retain(|(l, _)| l != &literal);
                        routes.templates.push((literal, server.name().to_string()));
                        routes.templates.sort_by_key(|t| std::cmp::Reverse(t.0.len()));
                    }
                    *uri = Self::upstream_uri(&server, uri);
                }
                all.push(value);
            }
        }
        reshape(serde_json::json!({ "resourceTemplates": all }))
    }

    pub async fn list_prompts(&self) -> Result<ListPromptsResult, McpError> {
        let mut all = Vec::new();
        for (server, peer) in self.sessions(|c| c.prompts.is_some()).await {
            let listed = match peer.list_all_prompts().await {
                Ok(listed) => listed,
                Err(e) => {
                    tracing::info!(server = %server.name(), "prompts/list failed: {e}");
                    continue;
                }
            };
            for prompt in listed {
                let mut value = serde_json::to_value(&prompt).unwrap_or_default();
                if let Some(Value::String(name)) = value.get_mut("name") {
                    if direct(&server) {
                        self.routes.lock().prompts.insert(name.clone(), server.name().to_string());
                    }
                    *name = Self::upstream_prompt(&server, name);
                }
                all.push(value);
            }
        }
        reshape(serde_json::json!({ "prompts": all }))
    }

    /// The server behind a URI the client sent, and that server's own URI.
    fn route_uri(&self, uri: &str) -> Result<Target, McpError> {
        if let Some(rest) = uri.strip_prefix(URI_PREFIX) {
            let (prefix, own) = rest.split_once('/').unwrap_or((rest, ""));
            let server = self.servers.iter().find(|s| !direct(s) && s.prefix() == prefix).ok_or_else(|| {
                McpError::resource_not_found(
                    format!("no MCP server behind quiver has the prefix `{prefix}` ({uri})"),
                    None,
                )
            })?;
            return Ok(Target { server: Arc::clone(server), own: own.to_string() });
        }
        let routes = self.routes.lock();
        let named = routes
            .uris
            .get(uri)
            .or_else(|| routes.templates.iter().find(|(literal, _)| uri.starts_with(literal.as_str())).map(|(_, s)| s))
            .cloned();
        drop(routes);
        self.direct_target(named, uri, "resource")
    }

    fn route_prompt(&self, name: &str) -> Result<Target, McpError> {
        let prefixed = self
            .servers
            .iter()
            .filter(|s| !direct(s))
            .filter_map(|s| name.strip_prefix(&format!("mcp__{}__", s.prefix())).map(|own| (s, own)))
            .max_by_key(|(s, _)| s.prefix().len());
        if let Some((server, own)) = prefixed {
            return Ok(Target { server: Arc::clone(server), own: own.to_string() });
        }
        let named = self.routes.lock().prompts.get(name).cloned();
        self.direct_target(named, name, "prompt")
    }

    /// A direct server by the name a listing recorded, else the first one.
    fn direct_target(&self, named: Option<String>, own: &str, what: &str) -> Result<Target, McpError> {
        let server = match named {
            Some(name) => self.server(&name),
            None => self.servers.iter().find(|s| direct(s) && s.config().enabled),
        };
        let server = server.ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "no MCP server behind quiver has the {what} `{own}`: names of servers exposed through search \
                     look like mcp__<server>__<name>, URIs like {URI_PREFIX}<server>/<uri>"
                ),
                None,
            )
        })?;
        Ok(Target { server: Arc::clone(server), own: own.to_string() })
    }

    /// Whether the command gate lets the routed server start.
    async fn authorize(&self, target: &Target, ctx: &ToolContext) -> Result<(), McpError> {
        target.server.authorize(ctx).await.map_err(|e| McpError::invalid_request(e.to_string(), None))
    }

    /// The routed server's session, once the command gate let it start.
    async fn open(&self, target: &Target, ctx: &ToolContext) -> Result<Peer<RoleClient>, McpError> {
        self.authorize(target, ctx).await?;
        let (peer, _) = target.server.session().await.map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(peer)
    }

    pub async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: &ToolContext,
    ) -> Result<ReadResourceResult, McpError> {
        let asked = request.uri.clone();
        let target = self.route_uri(&asked)?;
        self.authorize(&target, ctx).await?;
        let mut params = request;
        params.uri = target.own.clone();
        let result = target.server.request(params).await.map_err(forwarded(&target.server, "resources/read"))?;
        if direct(&target.server) {
            return Ok(result);
        }
        let mut value = serde_json::to_value(&result).unwrap_or_default();
        if let Some(Value::Array(contents)) = value.get_mut("contents") {
            for content in contents {
                if let Some(Value::String(uri)) = content.get_mut("uri") {
                    *uri = Self::upstream_uri(&target.server, uri);
                }
            }
        }
        reshape(value)
    }

    pub async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: &ToolContext,
    ) -> Result<GetPromptResult, McpError> {
        let target = self.route_prompt(&request.name)?;
        self.authorize(&target, ctx).await?;
        let mut params = request;
        params.name = target.own.clone();
        target.server.request(params).await.map_err(forwarded(&target.server, "prompts/get"))
    }

    pub async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: &ToolContext,
    ) -> Result<CompleteResult, McpError> {
        let mut value = serde_json::to_value(&request).unwrap_or_default();
        let reference = value.get("ref").cloned().unwrap_or_default();
        let (target, field) = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => (self.route_prompt(reference["name"].as_str().unwrap_or_default())?, "name"),
            Some("ref/resource") => (self.route_uri(reference["uri"].as_str().unwrap_or_default())?, "uri"),
            other => return Err(McpError::invalid_params(format!("unknown completion reference {other:?}"), None)),
        };
        let peer = self.open(&target, ctx).await?;
        let declared = peer.peer_info().is_some_and(|info| info.capabilities.completions.is_some());
        if !declared {
            // Nothing to suggest is a valid answer; the server has no completion.
            return Ok(CompleteResult::default());
        }
        value["ref"][field] = Value::String(target.own.clone());
        let params: CompleteRequestParams = reshape(value)?;
        peer.complete(params).await.map_err(forwarded(&target.server, "completion/complete"))
    }

    /// Subscribes downstream (once per server and URI, however many sessions ask).
    #[allow(deprecated)] // resources/subscribe: legacy-only, still in every session revision
    pub async fn subscribe(&self, uri: &str, ctx: &ToolContext) -> Result<(), McpError> {
        let target = self.route_uri(uri)?;
        let peer = self.open(&target, ctx).await?;
        let key = (target.server.name().to_string(), target.own.clone());
        let first = {
            let mut subscriptions = self.subscriptions.lock();
            let count = subscriptions.entry(key.clone()).or_insert(0);
            *count += 1;
            *count == 1
        };
        if first && let Err(e) = peer.subscribe(SubscribeRequestParams::new(target.own.clone())).await {
            self.subscriptions.lock().remove(&key);
            return Err(forwarded(&target.server, "resources/subscribe")(e));
        }
        Ok(())
    }

    /// Drops one session's subscription; the last one unsubscribes downstream.
    #[allow(deprecated)] // resources/unsubscribe: legacy-only, still in every session revision
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), McpError> {
        let target = self.route_uri(uri)?;
        let key = (target.server.name().to_string(), target.own.clone());
        let last = {
            let mut subscriptions = self.subscriptions.lock();
            match subscriptions.get_mut(&key) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => {
                    subscriptions.remove(&key);
                    true
                }
                None => false,
            }
        };
        if last && target.server.is_connected() {
            let (peer, _) = target.server.session().await.map_err(|e| McpError::internal_error(e.to_string(), None))?;
            peer.unsubscribe(UnsubscribeRequestParams::new(target.own.clone()))
                .await
                .map_err(forwarded(&target.server, "resources/unsubscribe"))?;
        }
        Ok(())
    }

    /// Downstream subscriptions held (see [`super::Surface::downstream_subscriptions`]).
    pub fn subscriptions_held(&self) -> usize {
        self.subscriptions.lock().len()
    }

    /// Unsubscribes what a session that ended still held.
    pub async fn release(&self, uris: HashSet<String>) {
        for uri in uris {
            if let Err(e) = self.unsubscribe(&uri).await {
                tracing::debug!(uri = %uri, "unsubscribing at session end: {}", e.message);
            }
        }
    }
}
