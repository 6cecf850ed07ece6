//! The client side: quiver talking to downstream MCP servers.
//!
//! [`McpManager`] owns every configured server ([`server::ServerHandle`]).
//! A server's tools are registered from the tool list cached at its last
//! connection, so `tool_search` finds them before the server runs; servers
//! the user's own config defines are also discovered in the background on the
//! first search ([`discovery`]), so a fresh machine finds them too. Otherwise a
//! server starts on the first call, `mcp_discover` or `mcp_call`. When a live list differs from what the engine was built with,
//! the manager's generation moves and the engine's host builds a new engine
//! (MCP is one [`provider::McpProvider`] of it).

pub mod backoff;
pub mod cache;
pub(crate) mod calls;
pub(crate) mod child_lane;
pub(crate) mod connect;
mod error;
mod listen;
pub(crate) mod log_levels;
pub use connect::LocalAnswers;
pub mod content;
pub mod discovery;
pub mod events;
pub mod oauth;
mod ordered;
pub mod probe;
pub mod provider;
mod tls;

pub mod server;
pub mod stderr;
pub mod tool;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use quiver_engine::{Registry, ToolContext, ToolError};

pub use backoff::Backoff;
pub use cache::{RemoteTool, ToolCache};
pub use error::ServerError;
pub use events::DownstreamEvent;
pub use provider::McpProvider;
pub use server::{ConnState, ServerHandle, ServerStatus, ToolOrigin};
pub use tool::McpTool;
pub(crate) use tool::explain_failure;

use crate::config::McpConfig;

pub struct McpManager {
    servers: BTreeMap<String, Arc<ServerHandle>>,
    generation: Arc<AtomicU64>,
    discovery_started: AtomicBool,
    discovery: parking_lot::Mutex<discovery::DiscoveryState>,
    /// How many background discoveries are still in flight.
    discovery_running: tokio::sync::watch::Sender<usize>,
    /// What every downstream session announces (see [`events`]).
    pub(crate) events: tokio::sync::broadcast::Sender<DownstreamEvent>,
    /// Each client's `logging/setLevel` (see [`log_levels`]).
    log_levels: Arc<log_levels::LogLevels>,
}

impl McpManager {
    /// A manager for `config`, with tool lists cached under `$QUIVER_CACHE_DIR`
    /// (else `~/.cache/quiver`).
    pub fn new(config: McpConfig) -> Arc<Self> {
        McpManager::with_cache(config, ToolCache::from_env())
    }

    pub fn with_cache(config: McpConfig, cache: ToolCache) -> Arc<Self> {
        McpManager::with_stores(config, cache, oauth::token_dir())
    }

    /// As [`McpManager::with_cache`], with OAuth tokens (from `quiver mcp
    /// login`) read from `token_dir` (`None`: none are sent).
    pub fn with_stores(config: McpConfig, cache: ToolCache, token_dir: Option<std::path::PathBuf>) -> Arc<Self> {
        let generation = Arc::new(AtomicU64::new(0));
        let events = events::channel();
        let log_levels = Arc::new(log_levels::LogLevels::default());
        let servers = config
            .servers
            .into_iter()
            .map(|(name, server)| {
                let handle = ServerHandle::new(
                    server,
                    cache.clone(),
                    Arc::clone(&generation),
                    events.clone(),
                    token_dir.clone(),
                    Arc::clone(&log_levels),
                );
                (name, Arc::new(handle))
            })
            .collect();
        let manager = Arc::new(McpManager {
            servers,
            generation,
            discovery_started: AtomicBool::new(false),
            discovery: Default::default(),
            discovery_running: tokio::sync::watch::Sender::new(0),
            events,
            log_levels,
        });
        events::spawn_relister(&manager);
        manager
    }

    /// Announcements from every downstream server, from now on.
    pub fn subscribe_events(&self) -> tokio::sync::broadcast::Receiver<DownstreamEvent> {
        self.events.subscribe()
    }

    /// A manager with no servers (the MCP tools then just say so).
    pub fn empty() -> Arc<Self> {
        McpManager::with_cache(McpConfig::default(), ToolCache::disabled())
    }

    /// Client `client` (a session in front) asked for log messages at
    /// `level` and above: the servers running behind are set to the most
    /// verbose level any client chose (see [`log_levels`]).
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    pub(crate) async fn choose_log_level(&self, client: u64, level: rmcp::model::LoggingLevel) {
        let level = self.log_levels.choose(client, level);
        self.apply_log_level(level).await;
    }

    /// Client `client` is gone: its level no longer counts.
    pub(crate) fn forget_log_level(self: &Arc<Self>, client: u64) {
        let Some(level) = self.log_levels.forget(client) else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let manager = Arc::clone(self);
        drop(runtime.spawn(async move { manager.apply_log_level(level).await }));
    }

    /// Sets every running server to `level`, all at once (each answer is
    /// waited for at most 2 s, so slow servers do not add up).
    #[allow(deprecated)]
    async fn apply_log_level(&self, level: rmcp::model::LoggingLevel) {
        let sent = futures::future::join_all(self.servers.values().map(|server| server.set_level(level))).await;
        for e in sent.into_iter().filter_map(Result::err) {
            tracing::info!(error = %e, "logging/setLevel not passed on");
        }
    }

    pub fn server(&self, name: &str) -> Option<&Arc<ServerHandle>> {
        self.servers.get(name)
    }

    /// Servers by name.
    pub fn servers(&self) -> impl Iterator<Item = &Arc<ServerHandle>> {
        self.servers.values()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Moves whenever any server's known tool list changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The tools a server exposes after `enabled_tools`/`disabled_tools`, as
    /// (quiver name, tool), sorted by quiver name.
    pub fn exposed_tools(&self, server: &ServerHandle) -> Vec<(String, RemoteTool)> {
        if !server.config().enabled {
            return Vec::new();
        }
        let (tools, _) = server.known_tools();
        let allowed: Vec<RemoteTool> = tools.into_iter().filter(|t| server.config().allows_tool(&t.name)).collect();
        if server.config().expose.is_direct() {
            // Transparent: the server's own names (clashes are refused when
            // the engine registers them, see `register_server_tools`).
            let mut out: Vec<(String, RemoteTool)> = allowed.into_iter().map(|t| (t.name.clone(), t)).collect();
            out.sort_by(|a, b| a.0.cmp(&b.0));
            return out;
        }
        let names =
            quiver_engine::names::qualify(server.name(), &allowed.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
        let mut out: Vec<(String, RemoteTool)> =
            allowed.into_iter().filter_map(|t| names.get(&t.name).map(|q| (q.clone(), t))).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Registers every known downstream tool (`mcp__<server>__<tool>`, or the
    /// tool's own name for a server exposed directly). Returns the names
    /// registered.
    ///
    /// A direct server's tool whose name is taken (a native tool, an `mcp_*`
    /// tool, another direct server's tool) is a configuration error: it is
    /// left out, and the server's status says why and what to change
    /// (see [`McpManager::direct_clashes`]).
    pub fn register_server_tools(&self, registry: &mut Registry) -> anyhow::Result<Vec<String>> {
        let mut registered = Vec::new();
        for server in self.servers.values() {
            let mut clashes = Vec::new();
            let mut remote_names = std::collections::HashMap::new();
            for (qualified, remote) in self.exposed_tools(server) {
                if server.config().expose.is_direct()
                    && let Some(owner) = registry.get(&qualified)
                {
                    clashes.push(direct_clash_message(server.config(), &qualified, &owner.spec.source));
                    continue;
                }
                // Config loading refuses servers whose prefixes collide; a
                // hand-built config might not, and one bad server must not
                // stop the engine from building.
                if registry.get(&qualified).is_some() {
                    tracing::warn!(tool = %qualified, server = %server.name(), "MCP tool name taken; skipped");
                    continue;
                }
                let tool = McpTool::new(Arc::clone(server), qualified.clone(), &remote);
                let spec = quiver_engine::DynTool::spec(&tool);
                registry.register_with_spec(spec, Arc::new(tool))?;
                remote_names.insert(qualified.clone(), Arc::from(remote.name));
                registered.push(qualified);
            }
            server.set_remote_names(remote_names);
            for message in &clashes {
                tracing::error!(server = %server.name(), "{message}");
            }
            server.set_config_errors(clashes);
        }
        Ok(registered)
    }

    /// The configuration errors of direct servers whose tool names clash,
    /// as of the last engine build (empty when there are none).
    pub fn direct_clashes(&self) -> Vec<String> {
        self.servers.values().flat_map(|s| s.config_errors()).collect()
    }

    /// Starts `server` if needed and returns its exposed tools, live.
    /// The command gate is passed first (see [`ServerHandle::authorize`]).
    pub async fn discover(&self, server: &str, ctx: &ToolContext) -> Result<Vec<(String, RemoteTool)>, ToolError> {
        let handle = self.server(server).ok_or_else(|| ToolError::model(self.unknown_server(server)))?;
        handle.authorize(ctx).await?;
        handle.refresh().await.map_err(|e| ToolError::model(e.to_string()))?;
        Ok(self.exposed_tools(handle))
    }

    /// The message for a name that is not configured.
    pub fn unknown_server(&self, name: &str) -> String {
        if self.servers.is_empty() {
            format!(
                "no MCP server named `{name}`: none are configured (add [mcp_servers.NAME] to quiver.toml \
                 or ~/.config/quiver/config.toml, or an .mcp.json)"
            )
        } else {
            let names: Vec<String> = self.servers.keys().map(|n| format!("`{n}`")).collect();
            format!("no MCP server named `{name}`; configured: {}", names.join(", "))
        }
    }

    /// Stops every running server (child processes, HTTP sessions).
    pub async fn shutdown(&self) {
        // Side by side: each waits (bounded) for its connection to close.
        futures::future::join_all(self.servers.values().map(|server| server.disconnect())).await;
    }
}

/// Names the file, the key, the clash and the ways out.
fn direct_clash_message(config: &crate::config::ServerConfig, name: &str, owner: &quiver_engine::ToolSource) -> String {
    let owner = match owner {
        quiver_engine::ToolSource::Native => "a native quiver tool".to_string(),
        quiver_engine::ToolSource::Mcp { server, .. } => {
            format!("a tool of MCP server `{server}`, also exposed directly")
        }
    };
    format!(
        "{}: mcp_servers.{}.expose: the server is exposed directly but its tool `{name}` has the name of {owner}; \
         leave it out with `disabled_tools = [\"{name}\"]`, or drop `expose = \"direct\"` to reach it as \
         `mcp__<server>__{name}`",
        config.source.display(),
        config.name
    )
}
