//! One downstream server: its config, what tools it is known to have (from the
//! cache or a live `tools/list`), and its connection, opened on first need and
//! reopened after it dies.
//!
//! Failure isolation lives here. Each call is bounded by the server's tool
//! timeout; a call that times out is followed by a ping, and a server that does
//! not answer that either is stopped (so the next call starts a fresh one). A
//! server that exits mid-call fails that call with the tail of its stderr, and
//! the next call restarts it. Nothing here is shared between servers except the
//! tool-list generation counter.

use parking_lot::{Mutex, RwLock};
use quiver_engine::permissions::trust::Source;
use quiver_engine::{ToolContext, ToolError};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientRequest, JsonObject};
use serde::Serialize;
use serde_json::{Value, json};

use super::backoff::{Backoff, Failures};
use super::cache::{RemoteTool, ToolCache};
use super::calls::{self, Failure};
use super::child_lane::RawLane;
use super::connect::{self, Connection};
use super::error::ServerError;
use super::stderr::{self, StderrTail};
use crate::config::ServerConfig;
use quiver_engine::names::sanitize_server;

/// After a timed-out call, how long a ping may take before the server is
/// declared hung and stopped.
const PING_TIMEOUT: Duration = Duration::from_secs(3);
/// How long to wait for a dead process's stderr to drain before quoting it.
const STDERR_GRACE: Duration = Duration::from_millis(500);
/// Bounds on what a server may put into quiver's registry.
const MAX_TOOLS: usize = 2000;
const MAX_DESCRIPTION: usize = 4096;

/// Where the known tool list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOrigin {
    /// Never listed: not in the cache, never connected.
    None,
    /// The cache file from an earlier connection.
    Cache,
    /// A `tools/list` from the current process.
    Live,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnState {
    NotConnected,
    Connected,
    Failed,
    Disabled,
}

/// What `mcp_servers` shows for a server.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub state: ConnState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// How many times a process / session was started.
    pub starts: u32,
    /// Failures in a row (exits, hangs, failed starts) since it last ran healthy.
    #[serde(skip_serializing_if = "is_zero")]
    pub consecutive_failures: u32,
    /// The restart backoff still pending: no start before this many ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_in_ms: Option<u64>,
    /// The revision the live connection speaks (`protocol = "auto"` may make
    /// it 2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How long [`ServerHandle::disconnect`] waits for a connection to close.
const DISCONNECT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

pub struct ServerHandle {
    config: ServerConfig,
    prefix: String,
    cache: ToolCache,
    conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// The connection in `conn`, published for calls relayed without a task
    /// (`live_raw`): reading it never waits for a start and never fails
    /// because another call holds `conn` for an instant.
    live: Mutex<Option<Arc<Connection>>>,
    tools: RwLock<(Vec<RemoteTool>, ToolOrigin)>,
    last_error: Mutex<Option<String>>,
    connected_pid: Mutex<Option<Option<u32>>>,
    /// The revision the live connection speaks (set and cleared with `connected_pid`).
    connected_protocol: Mutex<Option<String>>,
    starts: AtomicU32,
    stderr: Arc<StderrTail>,
    list_changed: Arc<AtomicBool>,
    /// Shared with the manager: bumped whenever this server's tool list changes.
    generation: Arc<AtomicU64>,
    /// The command gate let this server start (set by [`Self::authorize`]);
    /// a project-defined server never starts without it.
    launch_allowed: AtomicBool,
    /// Configuration errors found once its tools were known (a direct
    /// server's tool clashing with another name).
    config_errors: Mutex<Vec<String>>,
    /// The manager's announcement channel (see [`super::events`]).
    events: tokio::sync::broadcast::Sender<super::events::DownstreamEvent>,
    /// One re-listing at a time: whoever sees `list_changed` second waits
    /// for the first one's list instead of returning before it is in.
    relisting: tokio::sync::Mutex<()>,
    /// Restart pacing (see [`super::backoff`]).
    failures: Mutex<Failures>,
    /// Where `quiver mcp login` tokens are read (HTTP servers).
    token_dir: Option<std::path::PathBuf>,
    /// Each registered tool's name in quiver → its name on the server, as of
    /// the last engine build (the two differ when the server is prefixed).
    remote_names: RwLock<Arc<std::collections::HashMap<String, Arc<str>>>>,
    /// Every client's log level (the manager's): a server that starts is set
    /// to the one in force, and its log messages reach each client at the
    /// level that client chose.
    log_levels: Arc<super::log_levels::LogLevels>,
}

impl ServerHandle {
    pub(crate) fn new(
        config: ServerConfig,
        cache: ToolCache,
        generation: Arc<AtomicU64>,
        events: tokio::sync::broadcast::Sender<super::events::DownstreamEvent>,
        token_dir: Option<std::path::PathBuf>,
        log_levels: Arc<super::log_levels::LogLevels>,
    ) -> Self {
        let mut cached = if config.enabled { cache.load(&config) } else { None };
        if !config.expose.is_direct() {
            // an entry as the server wrote it carries the server's own name:
            // only a direct server's list may go out as it
            for tool in cached.iter_mut().flatten() {
                tool.verbatim = None;
            }
        }
        let tools = match cached {
            Some(tools) => (tools, ToolOrigin::Cache),
            None => (Vec::new(), ToolOrigin::None),
        };
        ServerHandle {
            prefix: sanitize_server(&config.name),
            config,
            cache,
            conn: tokio::sync::Mutex::new(None),
            live: Mutex::new(None),
            tools: RwLock::new(tools),
            last_error: Mutex::new(None),
            connected_pid: Mutex::new(None),
            connected_protocol: Mutex::new(None),
            starts: AtomicU32::new(0),
            stderr: StderrTail::new(),
            list_changed: Arc::new(AtomicBool::new(false)),
            generation,
            launch_allowed: AtomicBool::new(false),
            config_errors: Mutex::new(Vec::new()),
            events,
            relisting: tokio::sync::Mutex::new(()),
            failures: Mutex::new(Failures::default()),
            token_dir,
            remote_names: RwLock::default(),
            log_levels,
        }
    }

    /// Records the names the last engine build registered this server's tools
    /// under (quiver name → the server's name).
    pub(crate) fn set_remote_names(&self, names: std::collections::HashMap<String, Arc<str>>) {
        *self.remote_names.write() = Arc::new(names);
    }

    /// The server's own name of the tool registered as `name`.
    pub(crate) fn remote_name(&self, name: &str) -> Option<Arc<str>> {
        self.remote_names.read().get(name).cloned()
    }

    /// Passes the command gate before anything may start this server: deny
    /// rules in every mode, then trust by who defined it — the user's config
    /// starts unasked, a project's config needs the user's approval (asked
    /// through the host, remembered per workspace and exact configuration).
    /// Checked while no live connection exists, so every (re)start is judged.
    pub async fn authorize(&self, ctx: &ToolContext) -> Result<(), ToolError> {
        if self.connected_pid.lock().is_some() {
            return Ok(());
        }
        ctx.authorize_command(&self.config.launch_request()).await?;
        self.launch_allowed.store(true, Ordering::SeqCst);
        Ok(())
    }

    pub(crate) fn events(&self) -> &tokio::sync::broadcast::Sender<super::events::DownstreamEvent> {
        &self.events
    }

    pub(crate) fn set_config_errors(&self, errors: Vec<String>) {
        *self.config_errors.lock() = errors;
    }

    /// See [`crate::McpManager::direct_clashes`].
    pub fn config_errors(&self) -> Vec<String> {
        self.config_errors.lock().clone()
    }

    /// Replaces the restart pacing (tests use short waits).
    pub fn set_backoff(&self, backoff: Backoff) {
        self.failures.lock().backoff = backoff;
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The sanitized server part of `mcp__<server>__<tool>`.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Every tool the server is known to have (before enabled/disabled filtering).
    pub fn known_tools(&self) -> (Vec<RemoteTool>, ToolOrigin) {
        self.tools.read().clone()
    }

    /// Where the known tool list came from, without copying it: asked on
    /// every relayed call (a copy of a server's schemas was a third of the
    /// gateway's CPU per call).
    pub fn tool_origin(&self) -> ToolOrigin {
        self.tools.read().1
    }

    pub fn status(&self) -> ServerStatus {
        // A process that died between calls is only noticed at the next call;
        // a listing should not claim it is connected meanwhile. (If a start is
        // in progress the slot is locked and the last known state stands.)
        if let Ok(slot) = self.conn.try_lock()
            && slot.as_ref().is_some_and(|c| c.is_closed())
            && self.connected_pid.lock().is_some()
        {
            self.fail(
                ServerError::Exited {
                    server: self.name().to_string(),
                    during: "since its last call".to_string(),
                    stderr: stderr::describe(&self.stderr),
                }
                .to_string(),
            );
        }
        let last_error = self.last_error.lock().clone();
        let clashes = self.config_errors();
        let last_error = if clashes.is_empty() { last_error } else { Some(clashes.join("\n")) };
        let pid = *self.connected_pid.lock();
        let state = if !self.config.enabled {
            ConnState::Disabled
        } else if pid.is_some() {
            ConnState::Connected
        } else if last_error.is_some() {
            ConnState::Failed
        } else {
            ConnState::NotConnected
        };
        let now = Instant::now();
        let failures = self.failures.lock();
        ServerStatus {
            state,
            last_error,
            pid: pid.flatten(),
            starts: self.starts.load(Ordering::SeqCst),
            consecutive_failures: failures.count(now),
            restart_in_ms: failures.wait(now).map(|d| d.as_millis().max(1) as u64),
            protocol: pid.and(self.connected_protocol.lock().clone()),
        }
    }

    /// The tail of the current (or last) process's stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.tail(20, 2000)
    }

    /// Connects if needed and returns the live tool list (re-listed when the
    /// server said it changed).
    pub async fn refresh(&self) -> Result<Vec<RemoteTool>, ServerError> {
        let conn = self.connection().await?;
        self.relist_if_changed(&conn).await?;
        Ok(self.known_tools().0)
    }

    /// [`Self::call_json`]'s answer as rmcp's type.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<rmcp::model::CallToolResult, ServerError> {
        let text = self.call_json(tool, arguments).await?;
        serde_json::from_str(&text).map_err(|e| ServerError::Unusable {
            server: self.name().to_string(),
            tool: tool.to_string(),
            detail: e.to_string(),
        })
    }

    /// One `tools/call`, bounded by the tool timeout: the `CallToolResult`'s
    /// JSON as the server wrote it (a stdio server's raw lane) or as rmcp
    /// read it (HTTP). Errors are model-facing text.
    pub async fn call_json(&self, tool: &str, arguments: Option<JsonObject>) -> Result<Arc<String>, ServerError> {
        let conn = self.connection().await?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let call = async {
            match &conn.raw {
                Some(lane) => calls::raw(&conn, lane, params).await,
                None => calls::typed(&conn, params).await,
            }
        };
        self.bounded(&conn, tool, call).await
    }

    /// The live stdio session and its raw lane, if the server is running
    /// now (nothing is started, nothing waited for: a start under way or a
    /// closed session answer `None`, and the caller takes the general path,
    /// which starts or restarts the server).
    pub(crate) fn live_raw(&self) -> Option<(Arc<Connection>, Arc<RawLane>)> {
        let live = self.live.lock();
        let conn = live.as_ref().filter(|c| !c.is_closed())?;
        let lane = conn.raw.as_ref()?;
        Some((Arc::clone(conn), Arc::clone(lane)))
    }

    /// A call's outcome, bounded by the tool timeout, as the model reads it;
    /// after a result, the tool list is refreshed if the server said it changed.
    async fn bounded(
        &self,
        conn: &Arc<Connection>,
        tool: &str,
        call: impl Future<Output = Result<Arc<String>, Failure>>,
    ) -> Result<Arc<String>, ServerError> {
        let outcome = tokio::time::timeout(self.config.tool_timeout, call).await.ok();
        self.settle(conn, tool, outcome).await
    }

    /// What the caller of `tool` reads for a call's outcome (`None`: it
    /// timed out); after a result, the tool list is refreshed if the server
    /// said it changed. Shared by calls awaited in a task ([`Self::bounded`])
    /// and calls relayed without one (`server::stdio_calls`).
    pub(crate) async fn settle(
        &self,
        conn: &Arc<Connection>,
        tool: &str,
        outcome: Option<Result<Arc<String>, Failure>>,
    ) -> Result<Arc<String>, ServerError> {
        // Named only on the error arms: a call that succeeds allocates nothing here.
        let names = || (self.name().to_string(), tool.to_string());
        let result = match outcome {
            Some(Ok(json)) => Ok(json),
            // The rare ends are boxed: awaited inline, their futures would
            // size every call's future (copied whole as its task starts and ends).
            None => Err(Box::pin(self.after_timeout(conn, tool, self.config.tool_timeout)).await),
            Some(Err(Failure::Closed)) => {
                Err(Box::pin(self.after_crash(conn, &format!("while running `{tool}`"))).await)
            }
            Some(Err(_)) if conn.is_closed() => {
                Err(Box::pin(self.after_crash(conn, &format!("while running `{tool}`"))).await)
            }
            Some(Err(Failure::NotComplete)) => {
                let (server, tool) = names();
                Err(ServerError::NotComplete { server, tool })
            }
            Some(Err(Failure::Rejected(message))) => {
                let (server, tool) = names();
                Err(ServerError::Rejected { server, tool, message })
            }
            Some(Err(Failure::Unusable(detail))) => {
                let (server, tool) = names();
                Err(ServerError::Unusable { server, tool, detail })
            }
        };
        // Refresh now so the next engine build sees the new list; a failure
        // here must not cost the caller the result it already has.
        if result.is_ok()
            && self.relist_due()
            && let Err(e) = Box::pin(self.relist_if_changed(conn)).await
        {
            tracing::warn!(server = %self.name(), error = %e, "could not refresh the tool list");
        }
        result
    }

    /// The live session's peer (starting the server if needed; callers pass
    /// the command gate first) and what the server declared at `initialize`.
    /// For resources, prompts and completion, which the gateway forwards.
    pub async fn session(
        &self,
    ) -> Result<(rmcp::service::Peer<rmcp::RoleClient>, rmcp::model::ServerCapabilities), ServerError> {
        let conn = self.connection().await?;
        let peer = conn.service.peer().clone();
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        Ok((peer, capabilities))
    }

    /// `prompts/get` or `resources/read`, every round of it, with the relay
    /// wired for the upstream request this task serves: the server may ask
    /// its client something before it answers, as in a tool call (see
    /// [`calls::rounds`]). Dropped early, the request is cancelled downstream.
    pub(crate) async fn request<R: calls::Rounded>(&self, params: R) -> Result<R::Complete, rmcp::ServiceError> {
        let conn = self.connection().await;
        let conn =
            conn.map_err(|e| rmcp::ServiceError::McpError(rmcp::ErrorData::internal_error(e.to_string(), None)))?;
        match calls::rounds(&conn, params).await? {
            calls::Answer::Complete(result) => Ok(result),
            // Only a tool call may become a task.
            calls::Answer::Task => Err(rmcp::ServiceError::UnexpectedResponse),
        }
    }

    /// Whether a session is open now (nothing is started to find out).
    pub fn is_connected(&self) -> bool {
        self.connected_pid.lock().is_some()
    }

    /// Passes `logging/setLevel` on to the server if it is connected and
    /// logs (a server not running has nothing to log; one that starts later
    /// is set to the level in force when it connects).
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    pub async fn set_level(&self, level: rmcp::model::LoggingLevel) -> Result<(), ServerError> {
        let conn = self.conn.lock().await.clone();
        match conn {
            Some(conn) if !conn.is_closed() => set_level_on(&conn, self.name(), level).await,
            _ => Ok(()),
        }
    }

    /// Stops the current process / session, if any.
    pub async fn disconnect(&self) {
        let conn = self.conn.lock().await.take();
        *self.live.lock() = None;
        if let Some(conn) = conn {
            match Arc::try_unwrap(conn) {
                // Nobody else holds it: wait (bounded) for its loop to end, so
                // what closing does (an HTTP server's session DELETE, which
                // may refresh and store a token) is done when this returns. A
                // `quiver mcp logout` right after must not see a token written
                // back behind it.
                Ok(mut conn) => {
                    let _ = conn.service.close_with_timeout(DISCONNECT_WAIT).await;
                }
                Err(shared) => shared.service.cancellation_token().cancel(),
            }
        }
        *self.connected_pid.lock() = None;
        *self.connected_protocol.lock() = None;
    }

    /// The live connection, starting the server when there is none (or the last
    /// one died). Concurrent callers wait for one start instead of racing.
    async fn connection(&self) -> Result<Arc<Connection>, ServerError> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            if !conn.is_closed() {
                return Ok(Arc::clone(conn));
            }
            tracing::info!(server = %self.name(), "MCP server went away; restarting it");
            *slot = None;
            *self.live.lock() = None;
        }
        if !self.config.enabled {
            return Err(ServerError::Disabled {
                server: self.name().to_string(),
                config: self.config.source.display().to_string(),
            });
        }
        // Defence in depth: whatever path reached here, nothing starts a
        // project-defined server the command gate has not passed in this
        // process. (Every path with a context calls `authorize` first.)
        if self.config.trust == Source::Project && !self.launch_allowed.load(Ordering::SeqCst) {
            return Err(ServerError::NotAllowed {
                server: self.name().to_string(),
                config: self.config.source.display().to_string(),
            });
        }
        let pending = self.failures.lock().wait(Instant::now());
        if let Some(wait) = pending {
            let failures = self.failures.lock().count(Instant::now());
            let last = self.last_error.lock().clone().unwrap_or_default();
            return Err(ServerError::Backoff {
                server: self.name().to_string(),
                failures,
                wait_ms: wait.as_millis().max(1),
                last,
            });
        }
        self.stderr.clear();
        self.starts.fetch_add(1, Ordering::SeqCst);
        let startup = self.config.startup_timeout;
        let started = tokio::time::timeout(startup, async {
            let tokens = match (&self.token_dir, &self.config.transport) {
                (Some(dir), crate::config::Transport::Http { url, .. }) => {
                    Some(super::oauth::FileTokenStore::new(dir, &self.config.name, url))
                }
                _ => None,
            };
            let conn = connect::open(
                &self.config,
                &self.stderr,
                Arc::clone(&self.list_changed),
                self.events.clone(),
                tokens,
                None,
                Arc::clone(&self.log_levels),
            )
            .await?;
            let tools = list_tools(&conn, self.config.expose.is_direct()).await?;
            Ok::<_, String>((conn, tools))
        })
        .await;
        let failure = match started {
            Ok(Ok((conn, tools))) => {
                let conn = Arc::new(conn);
                self.list_changed.store(false, Ordering::SeqCst);
                self.set_tools(tools, ToolOrigin::Live);
                *self.last_error.lock() = None;
                *self.connected_pid.lock() = Some(conn.pid);
                *self.connected_protocol.lock() =
                    conn.service.peer().peer_info().map(|info| info.protocol_version.to_string());
                self.failures.lock().connected(Instant::now());
                *slot = Some(Arc::clone(&conn));
                *self.live.lock() = Some(Arc::clone(&conn));
                // The level in force, before any call reaches the server
                // (bounded: a server slow to answer it must not hold up the
                // call that started it).
                if let Some(level) = self.log_levels.effective()
                    && let Err(e) = set_level_on(&conn, self.name(), level).await
                {
                    tracing::info!(error = %e, "logging/setLevel not passed on");
                }
                return Ok(conn);
            }
            Ok(Err(detail)) => Some(detail),
            Err(_) => None,
        };
        self.stderr.wait_closed(STDERR_GRACE).await;
        let (server, stderr) = (self.name().to_string(), stderr::describe(&self.stderr));
        let error = match failure {
            Some(detail) => ServerError::StartFailed { server, detail, stderr },
            None => ServerError::StartTimedOut {
                server,
                ms: startup.as_millis(),
                config: self.config.source.display().to_string(),
                stderr,
            },
        };
        self.fail(error.to_string());
        Err(error)
    }

    /// Whether [`Self::relist_if_changed`] has anything to do or wait for.
    pub(crate) fn relist_due(&self) -> bool {
        self.list_changed.load(Ordering::SeqCst) || self.relisting.try_lock().is_err()
    }

    /// Re-lists the tools if the server said they changed since the last list.
    async fn relist_if_changed(&self, conn: &Connection) -> Result<(), ServerError> {
        // Asked after every call: with no change seen and no relist under
        // way, nothing to wait for (`try_lock` costs no wake-up). A relist
        // under way is waited for, so the caller sees its list.
        if !self.list_changed.load(Ordering::SeqCst) && self.relisting.try_lock().is_ok() {
            return Ok(());
        }
        let _one_at_a_time = self.relisting.lock().await;
        if self.list_changed.swap(false, Ordering::SeqCst) {
            self.relist(conn).await?;
        }
        Ok(())
    }

    async fn relist(&self, conn: &Connection) -> Result<(), ServerError> {
        let tools = tokio::time::timeout(self.config.startup_timeout, list_tools(conn, self.config.expose.is_direct()))
            .await
            .map_err(|_| ServerError::ListTimedOut { server: self.name().to_string() })?
            .map_err(ServerError::ListFailed)?;
        self.set_tools(tools, ToolOrigin::Live);
        Ok(())
    }

    fn set_tools(&self, tools: Vec<RemoteTool>, origin: ToolOrigin) {
        let mut known = self.tools.write();
        let changed = known.0 != tools;
        *known = (tools, origin);
        drop(known);
        if origin == ToolOrigin::Live {
            self.cache.store(&self.config, &self.known_tools().0);
        }
        if changed {
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn fail(&self, message: String) {
        self.failures.lock().record(self.starts.load(Ordering::SeqCst), Instant::now());
        *self.last_error.lock() = Some(message);
        *self.connected_pid.lock() = None;
        *self.connected_protocol.lock() = None;
    }

    /// Drops `conn` from the slot if it is still the current one, killing it.
    async fn discard(&self, conn: &Arc<Connection>) {
        let mut slot = self.conn.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            *slot = None;
            *self.live.lock() = None;
        }
        conn.service.cancellation_token().cancel();
    }

    async fn after_crash(&self, conn: &Arc<Connection>, during: &str) -> ServerError {
        self.discard(conn).await;
        self.stderr.wait_closed(STDERR_GRACE).await;
        let error = ServerError::Exited {
            server: self.name().to_string(),
            during: during.to_string(),
            stderr: stderr::describe(&self.stderr),
        };
        self.fail(error.to_string());
        error
    }

    /// A slow tool and a hung server look the same from one call; a ping tells
    /// them apart. Only a server that cannot answer a ping is stopped.
    async fn after_timeout(&self, conn: &Arc<Connection>, tool: &str, timeout: Duration) -> ServerError {
        if conn.is_closed() {
            return self.after_crash(conn, &format!("while running `{tool}`")).await;
        }
        let ping = ClientRequest::PingRequest(Default::default());
        let alive =
            matches!(tokio::time::timeout(PING_TIMEOUT, conn.service.peer().send_request(ping)).await, Ok(Ok(_)));
        let (server, tool, ms, config) =
            (self.name().to_string(), tool.to_string(), timeout.as_millis(), self.config.source.display().to_string());
        if alive {
            return ServerError::CallTimedOut { server, tool, ms, config };
        }
        self.discard(conn).await;
        let error = ServerError::Hung { server, tool, ms, config, stderr: stderr::describe(&self.stderr) };
        self.fail(error.to_string());
        error
    }
}

/// A directly exposed server's live stdio session, for calls relayed as
/// the client wrote them (see `QuiverServer::relay_route`).
#[derive(Clone)]
pub(crate) struct RelayRoute {
    pub server: Arc<ServerHandle>,
    pub conn: Arc<Connection>,
    pub lane: Arc<RawLane>,
    /// The tool's name on the server (what goes down in `tools/call`),
    /// shared with the call relayed on the route.
    pub remote: Arc<str>,
}

/// `tools/list` (all pages), cleaned up: a server may send anything, and what
/// it sends ends up in quiver's registry and search index. A direct server's
/// schemas keep their `$schema` dialect: its client sees them as sent.
async fn list_tools(conn: &Connection, direct: bool) -> Result<Vec<RemoteTool>, String> {
    // A direct server's entries are kept as it wrote them, to be listed unchanged.
    let tools: Vec<(rmcp::model::Tool, Option<Arc<str>>)> = match (&conn.raw, direct) {
        (Some(lane), true) => calls::list_tools_raw(lane, MAX_TOOLS).await?,
        _ => {
            let tools = conn.service.peer().list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
            tools.into_iter().map(|tool| (tool, None)).collect()
        }
    };
    let mut out: Vec<RemoteTool> = Vec::new();
    for (tool, verbatim) in tools.into_iter().take(MAX_TOOLS) {
        let name = tool.name.to_string();
        if name.is_empty() || out.iter().any(|t| t.name == name) {
            continue;
        }
        let mut description = tool.description.map(|d| d.to_string()).unwrap_or_default();
        if description.len() > MAX_DESCRIPTION {
            let mut cut = MAX_DESCRIPTION;
            while !description.is_char_boundary(cut) {
                cut -= 1;
            }
            description.truncate(cut);
            description.push('…');
        }
        let mut schema = Value::Object((*tool.input_schema).clone());
        if let Value::Object(map) = &mut schema {
            // The model needs an object schema; `$schema` is bytes it never uses.
            if !direct {
                map.remove("$schema");
            }
            map.entry("type").or_insert_with(|| json!("object"));
        }
        let annotations = tool.annotations.as_ref();
        out.push(RemoteTool {
            name,
            title: tool.title.clone().or_else(|| annotations.and_then(|a| a.title.clone())),
            description,
            input_schema: schema,
            read_only_hint: annotations.and_then(|a| a.read_only_hint),
            destructive_hint: annotations.and_then(|a| a.destructive_hint),
            output_schema: tool.output_schema.as_ref().map(|s| Value::Object((**s).clone())),
            annotations: annotations.and_then(|a| serde_json::to_value(a).ok()),
            verbatim,
        });
    }
    Ok(out)
}

/// How long a server's answer to `logging/setLevel` is waited for: one that
/// does not answer must hold up neither the call that started it nor the
/// client's own `setLevel`.
const SET_LEVEL_WAIT: Duration = Duration::from_secs(2);

/// Sends `logging/setLevel` on `conn` when its server declared logging (MCP:
/// a client sends it only to a server that did) in a session (2026-07-28
/// removed it: a request asks for log messages in its own `_meta`).
#[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
async fn set_level_on(conn: &Connection, server: &str, level: rmcp::model::LoggingLevel) -> Result<(), ServerError> {
    let peer = conn.service.peer();
    if conn.stateless || peer.peer_info().is_none_or(|info| info.capabilities.logging.is_none()) {
        return Ok(());
    }
    match tokio::time::timeout(SET_LEVEL_WAIT, peer.set_level(rmcp::model::SetLevelRequestParams::new(level))).await {
        Ok(sent) => {
            sent.map_err(|e| ServerError::SetLevelRefused { server: server.to_string(), detail: e.to_string() })
        }
        Err(_) => Err(ServerError::SetLevelTimedOut { server: server.to_string(), secs: SET_LEVEL_WAIT.as_secs() }),
    }
}
