//! Shared setup for the client tests: the misbehaving test server, managers
//! over temporary caches, and engines with `tool_search` registered.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quiver_engine::permissions::trust::{Source, TrustStore};
use quiver_engine::{Audience, Engine, EngineHost, Manifest, Mode, Registry, ToolContext, ToolResult, Workspace};
use quiver_mcp::client::{ServerError, ServerHandle, ToolCache};
use quiver_mcp::config::{McpConfig, ServerConfig, Transport};
use quiver_mcp::{McpManager, McpProvider};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

pub const TEST_SERVER: &str = env!("CARGO_BIN_EXE_quiver-test-mcp");

/// A stdio server entry for the test server with extra environment.
pub fn test_server(name: &str, env: &[(&str, &str)]) -> ServerConfig {
    stdio_server(name, TEST_SERVER, &[], env)
}

pub fn stdio_server(name: &str, command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
            cwd: None,
        },
        enabled: true,
        enabled_tools: None,
        disabled_tools: vec![],
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        source: PathBuf::from("test-config.toml"),
        trust: Source::User,
        workspace: None,
        expose: Default::default(),
        protocol: Default::default(),
    }
}

pub fn config(servers: Vec<ServerConfig>) -> McpConfig {
    McpConfig { servers: servers.into_iter().map(|s| (s.name.clone(), s)).collect() }
}

pub fn manager(servers: Vec<ServerConfig>, cache: &Path) -> Arc<McpManager> {
    McpManager::with_cache(config(servers), ToolCache::at(cache))
}

/// `tool_search` is the only native tool the client tests need.
pub fn native_registry() -> Registry {
    let mut registry = Registry::new();
    if let Err(e) = registry.register(quiver_engine::tool_search::ToolSearch) {
        panic!("registering tool_search: {e}");
    }
    registry
}

pub fn host(manager: &Arc<McpManager>) -> Arc<EngineHost> {
    let manifest = Manifest::builtin().unwrap_or_else(|e| panic!("builtin manifest: {e}"));
    EngineHost::with_trust(native_registry(), manifest, vec![McpProvider::shared(manager)], TrustStore::ephemeral())
        .unwrap_or_else(|e| panic!("host: {e}"))
}

/// A context on one frozen engine.
pub fn context(engine: Arc<Engine>, workspace: &Path, mode: Mode) -> ToolContext {
    let workspace = Workspace::new(workspace).unwrap_or_else(|e| panic!("workspace: {e}"));
    engine.context(workspace, Audience { mode, ..Audience::default() })
}

/// A context whose calls reach the host's newest engine.
pub fn host_context(host: &Arc<EngineHost>, workspace: &Path, mode: Mode) -> ToolContext {
    let workspace = Workspace::new(workspace).unwrap_or_else(|e| panic!("workspace: {e}"));
    host.context(workspace, Audience { mode, ..Audience::default() })
}

/// Dispatches through the context's dispatcher (the host's current engine
/// for a host context), keeping the session.
pub async fn call(_host: &EngineHost, ctx: &mut ToolContext, name: &str, args: Value) -> ToolResult {
    ctx.call(name, args).await.unwrap_or_else(|e| panic!("dispatch {name}: {e:#}"))
}

pub fn text(result: &ToolResult) -> String {
    result.content_text()
}

/// Whether a process is still alive (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// The host's pid of a process of `server`'s that the server reported from
/// inside (its `pid` tool, a script's `$$`): a stdio server runs in a PID
/// namespace of its own where user namespaces work, and its own pids are not
/// the host's there. Found among the descendants of the process quiver
/// started, by the innermost pid of their `NSpid` (the same pid without a
/// namespace). `/proc/PID/status` is readable by anyone, unlike a
/// non-dumpable process's `ns/` links.
pub fn host_pid(server: &ServerHandle, inner: u32) -> u32 {
    let Some(leader) = server.status().pid else { return inner };
    let mut procs: Vec<(u32, u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else { continue };
        let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).map(str::to_string);
        let ppid = field("PPid:").and_then(|v| v.trim().parse().ok()).unwrap_or(0);
        let innermost = field("NSpid:").and_then(|v| v.split_whitespace().last().and_then(|p| p.parse().ok()));
        procs.push((pid, ppid, innermost.unwrap_or(pid)));
    }
    let mut tree = vec![leader];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(procs.iter().filter(|(_, ppid, _)| *ppid == parent).map(|(pid, _, _)| *pid));
        i += 1;
    }
    procs.iter().find(|(pid, _, innermost)| tree.contains(pid) && *innermost == inner).map_or(inner, |(pid, _, _)| *pid)
}

/// A host over quiver's full native surface (what `quiver mcp serve` runs),
/// so searches compete with every native tool.
pub fn full_host(manager: &Arc<McpManager>) -> Arc<EngineHost> {
    let manifest = Manifest::builtin().unwrap_or_else(|e| panic!("builtin manifest: {e}"));
    let native = quiver_tools::native_registry().unwrap_or_else(|e| panic!("native registry: {e}"));
    EngineHost::with_trust(native, manifest, vec![McpProvider::shared(manager)], TrustStore::ephemeral())
        .unwrap_or_else(|e| panic!("host: {e}"))
}

/// A yolo-mode gateway surface over `servers`, each exposed directly, with
/// every native tool (what `quiver mcp serve` builds for such a config).
pub fn direct_surface(servers: Vec<ServerConfig>, cache: &Path, workspace: &Path) -> Arc<quiver_mcp::server::Surface> {
    let servers =
        servers.into_iter().map(|config| ServerConfig { expose: quiver_mcp::config::Expose::Direct, ..config });
    surface_exposing(servers.collect(), cache, workspace)
}

/// A yolo-mode gateway surface over `servers`, each exposed as its config says.
pub fn surface_exposing(
    servers: Vec<ServerConfig>,
    cache: &Path,
    workspace: &Path,
) -> Arc<quiver_mcp::server::Surface> {
    let m = manager(servers, cache);
    let host = full_host(&m);
    let workspace = Workspace::new(workspace).unwrap_or_else(|e| panic!("workspace: {e}"));
    let audience = Audience { mode: Mode::Yolo, ..Audience::default() };
    Arc::new(quiver_mcp::server::Surface::hosted(host, m, workspace, audience))
}

/// `McpManager::discover` with a throwaway agent-mode context (the servers
/// these tests configure are the user's own, so the command gate lets them start).
pub async fn discover(
    manager: &Arc<McpManager>,
    server: &str,
) -> Result<Vec<(String, quiver_mcp::client::RemoteTool)>, String> {
    let engine = Arc::new(Engine::with_trust(
        native_registry(),
        Manifest::builtin().map_err(|e| e.to_string())?,
        TrustStore::ephemeral(),
    ));
    let dir = std::env::temp_dir();
    let ctx = context(engine, &dir, Mode::Agent);
    manager.discover(server, &ctx).await.map_err(|e| e.to_string())
}

/// The ceiling of every wait in these tests: it only turns a hang into a
/// failure, and is far above any delay a loaded machine causes.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `cond` until it holds (true) or [`PATIENCE`] runs out (false).
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !cond() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// An ordinary call on a server whose `tool_timeout` is kept short for the one
/// call of the test that is meant to hang. The timeout is per server, so an
/// ordinary call gets its generous budget here instead: when it times out only
/// because the machine is loaded (the server still answered the ping, so its
/// process was kept), it is asked again, up to [`PATIENCE`]. Only for calls
/// that may run twice.
pub async fn call_patiently(
    server: &ServerHandle,
    tool: &str,
    args: Option<Map<String, Value>>,
) -> Result<CallToolResult, ServerError> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let result = server.call(tool, args.clone()).await;
        let slow = matches!(&result, Err(ServerError::CallTimedOut { tool: t, .. }) if t == tool);
        if !slow || tokio::time::Instant::now() >= deadline {
            return result;
        }
    }
}
