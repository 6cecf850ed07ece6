//! Opening one MCP session to a downstream server: a child process over stdio,
//! or streamable HTTP. Everything rmcp-specific about starting a client lives here.
// Sampling, roots and logging are deprecated by SEP-2577 (stateless revision)
// but are part of every session-based revision quiver speaks.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, FormElicitationCapability, Implementation, InputRequest,
    InputRequests, InputResponses, ListRootsResult, LoggingMessageNotificationParam, Notification,
    ProgressNotificationParam, ProtocolVersion, Request, RequestNoParam, ServerNotification, ServerRequest,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};

use super::events::DownstreamEvent;
use super::ordered::Ordered;
use super::stderr::StderrTail;
use crate::config::{ServerConfig, Transport};
use crate::relay::{ForwardTicket, Relay};

/// quiver's side of one downstream session: `tools/list_changed` marks the
/// server's list for a refresh; progress, logging and the server's own
/// requests (sampling, elicitation, roots) go through the [`Relay`] to the
/// client in front of the gateway, when there is one.
///
/// The capabilities are declared whatever is in front: the downstream
/// session is shared by every upstream client, and a request no upstream
/// client can answer is refused with the reason (see [`Relay::upstream_for`]).
#[derive(Clone)]
pub(crate) struct ClientState {
    pub server: String,
    pub tools_changed: Arc<AtomicBool>,
    pub relay: Arc<Relay>,
    /// Announcements go to the manager (re-listing) and the gateway's sessions.
    pub events: tokio::sync::broadcast::Sender<DownstreamEvent>,
    /// What quiver answers itself when no client is in front (only the
    /// conformance probe sets it; the gateway relays or refuses).
    pub local: Option<Arc<dyn LocalAnswers>>,
    /// Each client's chosen log level: a log message reaches a client only
    /// at or above it.
    pub log_levels: Arc<super::log_levels::LogLevels>,
}

impl ClientState {
    fn announce(&self, event: DownstreamEvent) {
        // No receiver is fine: nobody is listening for this right now.
        let _ = self.events.send(event);
    }
}

/// Answers to server-to-client requests given by quiver itself.
pub trait LocalAnswers: Send + Sync {
    /// The answer to `elicitation/create`, or `None` to refuse as usual.
    fn elicit(&self, request: &ElicitRequestParams) -> Option<ElicitResult>;
}

fn relayed(e: rmcp::ServiceError) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(format!("the client in front of quiver gave no answer: {other}"), None),
    }
}

/// The client in front answered a relayed request with another kind of result.
fn unexpected(method: &str, answer: &ClientResult) -> ErrorData {
    let kind =
        serde_json::to_value(answer).ok().and_then(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()));
    ErrorData::internal_error(
        format!("the client in front of quiver answered {method} with an unexpected result (fields {kind:?})"),
        None,
    )
}

impl ClientHandler for ClientState {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities =
            ClientCapabilities::builder().enable_roots().enable_sampling().enable_elicitation().build();
        if self.local.is_some() {
            // Quiver fills a form from the schema's defaults: say it validates.
            capabilities.elicitation = Some(
                ElicitationCapability::new().with_form(FormElicitationCapability::new().with_schema_validation(true)),
            );
        }
        ClientConfig::new(capabilities, Implementation::new("quiver", quiver_engine::VERSION))
            // Session-based handshake: the widest-supported revision.
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
        self.announce(DownstreamEvent::ToolsChanged { server: self.server.clone() });
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.announce(DownstreamEvent::ResourcesListChanged { server: self.server.clone() });
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.announce(DownstreamEvent::PromptsListChanged { server: self.server.clone() });
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.announce(DownstreamEvent::ResourceUpdated { server: self.server.clone(), uri: params.uri });
    }

    async fn on_progress(&self, params: ProgressNotificationParam, context: NotificationContext<RoleClient>) {
        let ticket = context.extensions.get::<ForwardTicket>().copied();
        self.relay.forward_turn(ticket).await;
        self.relay.forward_progress(params).await;
        self.relay.forward_turn_done(ticket);
        self.relay.forward_done();
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let ticket = context.extensions.get::<ForwardTicket>().copied();
        self.relay.forward_turn(ticket).await;
        match self.relay.log_target() {
            // Below the level that client chose (or it chose none): not for
            // it, but kept in quiver's own log for whoever debugs the server.
            Some(upstream) if !upstream.wants_log(params.level, &self.log_levels) => {
                tracing::debug!(server = %self.server, level = ?params.level, data = %params.data, "MCP server log");
            }
            Some(upstream) => {
                let notification = ServerNotification::LoggingMessageNotification(Notification::new(params));
                if let Err(e) = upstream.notify(notification).await {
                    tracing::debug!(server = %self.server, error = %e, "could not forward a log message upstream");
                }
            }
            None => tracing::info!(server = %self.server, level = ?params.level, data = %params.data, "MCP server log"),
        }
        self.relay.forward_turn_done(ticket);
        self.relay.forward_done();
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.sampled(params, context.extensions.get::<ForwardTicket>().copied()).await
    }

    async fn list_roots(&self, context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        self.roots(context.extensions.get::<ForwardTicket>().copied()).await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicited(request, context.extensions.get::<ForwardTicket>().copied()).await
    }
}

/// What the server asks its client, answered through the relay: in a
/// session as a request of its own, at 2026-07-28 as an input request of a
/// call's `InputRequiredResult` ([`ClientState::answer_inputs`]).
impl ClientState {
    async fn sampled(
        &self,
        params: CreateMessageRequestParams,
        ticket: Option<ForwardTicket>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.relay.forward_turn(ticket).await;
        let upstream = self.relay.upstream_for(&self.server, "sampling/createMessage", |c| c.sampling.is_some())?;
        match upstream.request(ServerRequest::CreateMessageRequest(Request::new(params))).await.map_err(relayed)? {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            other => Err(unexpected("sampling/createMessage", &other)),
        }
    }

    async fn roots(&self, ticket: Option<ForwardTicket>) -> Result<ListRootsResult, ErrorData> {
        self.relay.forward_turn(ticket).await;
        let upstream = self.relay.upstream_for(&self.server, "roots/list", |c| c.roots.is_some())?;
        let request = ServerRequest::ListRootsRequest(RequestNoParam {
            method: Default::default(),
            extensions: Default::default(),
        });
        match upstream.request(request).await.map_err(relayed)? {
            ClientResult::ListRootsResult(result) => Ok(result),
            other => Err(unexpected("roots/list", &other)),
        }
    }

    async fn elicited(
        &self,
        request: ElicitRequestParams,
        ticket: Option<ForwardTicket>,
    ) -> Result<ElicitResult, ErrorData> {
        self.relay.forward_turn(ticket).await;
        if !self.relay.any_in_flight()
            && let Some(answer) = self.local.as_ref().and_then(|local| local.elicit(&request))
        {
            return Ok(answer);
        }
        let upstream = self.relay.upstream_for(&self.server, "elicitation/create", |c| c.elicitation.is_some())?;
        match upstream.request(ServerRequest::ElicitRequest(Request::new(request))).await.map_err(relayed)? {
            ClientResult::ElicitResult(result) => Ok(result),
            other => Err(unexpected("elicitation/create", &other)),
        }
    }

    /// A 2026-07-28 server's input requests (one round of a call), each
    /// answered as the same request in a session would be, in key order.
    pub(crate) async fn answer_inputs(&self, requests: InputRequests) -> Result<InputResponses, ErrorData> {
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            let answer = match request {
                InputRequest::Elicitation(r) => serde_json::to_value(self.elicited(r.params, None).await?),
                InputRequest::CreateMessage(r) => serde_json::to_value(self.sampled(r.params, None).await?),
                InputRequest::ListRoots(_) => serde_json::to_value(self.roots(None).await?),
                other => {
                    let method =
                        serde_json::to_value(&other).ok().and_then(|v| v["method"].as_str().map(str::to_string));
                    return Err(ErrorData::invalid_params(
                        format!("server `{}` asked for input quiver does not know: {method:?}", self.server),
                        None,
                    ));
                }
            };
            answers.insert(key, answer.map_err(|e| ErrorData::internal_error(e.to_string(), None))?);
        }
        Ok(answers)
    }
}

/// How `config` opens its connection (see [`crate::config::Protocol`]).
fn lifecycle(config: &ServerConfig) -> ClientLifecycleMode {
    match config.protocol {
        crate::config::Protocol::Initialize => ClientLifecycleMode::Initialize,
        crate::config::Protocol::Auto => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
    }
}

/// Whether a connection speaks a revision without sessions (2026-07-28 and
/// later): requests carry their own `_meta`, a server asks mid-call by
/// `InputRequiredResult`, and `logging/setLevel` is gone.
fn is_stateless(service: &RunningService<RoleClient, ClientState>) -> bool {
    service.peer().peer_info().is_some_and(|info| !info.protocol_version.has_initialize())
}

/// At 2026-07-28: follows the server's list changes (`listen`).
fn listen(service: &RunningService<RoleClient, ClientState>) -> Option<super::listen::Listening> {
    let state = service.service();
    let heard = super::listen::Heard {
        server: state.server.clone(),
        tools_changed: Arc::clone(&state.tools_changed),
        events: state.events.clone(),
    };
    super::listen::follow(service.peer().clone(), heard)
}

/// A live session. Dropping it ends the session, which kills a stdio server's
/// whole process group, and then its containment job (what left the group:
/// `setsid`, a double fork).
pub(crate) struct Connection {
    pub service: RunningService<RoleClient, ClientState>,
    pub pid: Option<u32>,
    pub relay: Arc<Relay>,
    /// At 2026-07-28 (see [`is_stateless`]).
    pub stateless: bool,
    /// At 2026-07-28: the subscription that hears of the server's list changes.
    pub _listening: Option<super::listen::Listening>,
    /// A stdio server's raw lane: calls whose answers are passed on as the
    /// server wrote them (see [`super::child_lane`]).
    pub raw: Option<Arc<super::child_lane::RawLane>>,
    _job: Option<ServerJob>,
}

/// A stdio server's containment job, killed when its connection is dropped.
struct ServerJob(#[cfg(target_os = "linux")] quiver_sandbox::Job);

impl Drop for ServerJob {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Err(e) = self.0.kill() {
            tracing::warn!(%e, "killing an MCP server's remaining processes failed");
        }
    }
}

/// Registers `cmd` as a job of the stdio servers' containment (a cgroup per
/// server where delegated, else the subreaper walk) and arms the parent-death
/// signal, so nothing a server starts outlives it or quiver.
fn contain(cmd: &mut tokio::process::Command) -> Result<Option<ServerJob>, String> {
    #[cfg(target_os = "linux")]
    {
        static SERVERS: std::sync::OnceLock<quiver_sandbox::Containment> = std::sync::OnceLock::new();
        let containment = SERVERS.get_or_init(quiver_sandbox::Containment::new);
        containment.reap_finished();
        let job = containment.spawn_hook(cmd).map_err(|e| format!("cannot contain the server's processes: {e}"))?;
        quiver_sandbox::die_with_parent(cmd);
        Ok(Some(ServerJob(job)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cmd;
        Ok(None)
    }
}

impl Connection {
    /// The service loop ended: the process exited, the pipe broke, or the
    /// HTTP session was lost.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }
}

/// Where a stdio server starts: its configured `cwd`; else, for a server of
/// the user's own config, the user's home, never quiver's working directory.
/// That is usually the workspace, whose files a sandboxed command writes
/// unasked, and launchers resolve code from their working directory: `npx`
/// runs a package the workspace's `node_modules` holds and reads its
/// `.npmrc`, `uvx` its `uv.toml`, `python -m` its modules. Started there, the
/// user's unconfined server would run what a model planted, with the secrets
/// its config hands it. A project's server (approved as the project's) starts
/// in its workspace.
pub(crate) fn start_dir(config: &ServerConfig, cwd: Option<&std::path::Path>) -> std::path::PathBuf {
    if let Some(dir) = cwd {
        return dir.to_path_buf();
    }
    if config.trust == quiver_engine::permissions::trust::Source::Project
        && let Some(ws) = &config.workspace
    {
        return ws.clone();
    }
    dirs::home_dir().filter(|h| h.is_dir()).unwrap_or_else(|| std::path::PathBuf::from("/"))
}

/// Starts the server and completes the MCP handshake. The caller bounds this
/// with the server's startup timeout. Errors are plain text for the model.
pub(crate) async fn open(
    config: &ServerConfig,
    stderr: &Arc<StderrTail>,
    tools_changed: Arc<AtomicBool>,
    events: tokio::sync::broadcast::Sender<DownstreamEvent>,
    tokens: Option<super::oauth::FileTokenStore>,
    local: Option<Arc<dyn LocalAnswers>>,
    log_levels: Arc<super::log_levels::LogLevels>,
) -> Result<Connection, String> {
    open_or_challenge(config, stderr, tools_changed, events, tokens, local, log_levels).await.map_err(|f| f.message)
}

/// Why a connection did not open: the text, and the server's
/// `WWW-Authenticate` challenge when it refused for authorization.
pub(crate) struct OpenFailure {
    pub message: String,
    pub challenge: Option<String>,
    /// The server answered `initialize` by refusing it (see [`refuses_initialize`]).
    pub refused_initialize: bool,
}

impl From<String> for OpenFailure {
    fn from(message: String) -> Self {
        OpenFailure { message, challenge: None, refused_initialize: false }
    }
}

/// Whether the server answered `initialize` by refusing the handshake
/// itself (-32022 unsupported protocol version, or -32601 for a method it
/// no longer has): it speaks only revisions without it (2026-07-28 on). A
/// server that died, timed out or failed otherwise is not one.
fn refuses_initialize(e: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::model::ErrorCode;
    use rmcp::service::ClientInitializeError;
    match e {
        ClientInitializeError::JsonRpcError(error) => {
            error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION || error.code == ErrorCode::METHOD_NOT_FOUND
        }
        _ => false,
    }
}

/// The challenge of a 401/403 that stopped the handshake. With `protocol =
/// "auto"` it may have come on `server/discover`, after which rmcp tried
/// `initialize` and reports that attempt's error (a 2026-07-28-only server
/// answers it 400): the discover phase's challenge counts too.
fn challenge_of(e: &rmcp::service::ClientInitializeError) -> Option<String> {
    use rmcp::service::ClientInitializeError;
    let discover = match e {
        ClientInitializeError::LegacyFallbackFailed { discover, .. } => discover.auth_challenge(),
        _ => None,
    };
    e.auth_challenge().or(discover).map(str::to_string)
}

/// [`open`], keeping the server's authorization challenge (the conformance
/// probe signs in with the scope it names).
///
/// A server opened with `initialize` (the default) that refuses the
/// handshake speaks only MCP 2026-07-28 or later: it is opened again with
/// `server/discover`, so such a server works without `protocol = "auto"`
/// (which would ask every server `server/discover` first, and wait 10 s on
/// one that never answers an unknown method).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn open_or_challenge(
    config: &ServerConfig,
    stderr: &Arc<StderrTail>,
    tools_changed: Arc<AtomicBool>,
    events: tokio::sync::broadcast::Sender<DownstreamEvent>,
    tokens: Option<super::oauth::FileTokenStore>,
    local: Option<Arc<dyn LocalAnswers>>,
    log_levels: Arc<super::log_levels::LogLevels>,
) -> Result<Connection, OpenFailure> {
    let shared = Shared { tools_changed, events, tokens, local, log_levels };
    match open_with(config, lifecycle(config), stderr, &shared).await {
        Err(failure) if failure.refused_initialize && config.protocol == crate::config::Protocol::Initialize => {
            tracing::info!(server = %config.name, "the server refused initialize; opening it with server/discover");
            let discover = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
            let second = open_with(config, discover, stderr, &shared).await;
            second.map_err(|e| OpenFailure {
                message: format!("{} (it refused initialize first: {})", e.message, failure.message),
                ..e
            })
        }
        other => other,
    }
}

/// What every attempt at opening one server's connection shares (the
/// handle's flags, channels and stores; each attempt has its own relay).
struct Shared {
    tools_changed: Arc<AtomicBool>,
    events: tokio::sync::broadcast::Sender<DownstreamEvent>,
    tokens: Option<super::oauth::FileTokenStore>,
    local: Option<Arc<dyn LocalAnswers>>,
    log_levels: Arc<super::log_levels::LogLevels>,
}

/// Starts the server and opens the connection with `mode`.
async fn open_with(
    config: &ServerConfig,
    mode: ClientLifecycleMode,
    stderr: &Arc<StderrTail>,
    shared: &Shared,
) -> Result<Connection, OpenFailure> {
    let relay = Arc::new(Relay::default());
    let state = ClientState {
        server: config.name.clone(),
        tools_changed: Arc::clone(&shared.tools_changed),
        relay: Arc::clone(&relay),
        events: shared.events.clone(),
        local: shared.local.clone(),
        log_levels: Arc::clone(&shared.log_levels),
    };
    match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut cmd = tokio::process::Command::new(command);
            // quiver's own secrets (its listener's token, provider keys, any
            // `*_TOKEN`, what the user's `[sandbox] scrub_env` lists) are never
            // inherited: a server gets one only when its config names it in
            // `env`, which is set after the scrub. The
            // server itself runs without a filesystem/network sandbox (`full`):
            // the user configured it, or approved the project's configuration
            // through the command gate, and servers routinely need the network
            // and their own caches (`npx` writes ~/.npm). It is contained, though,
            // and kept away from quiver's processes (a PID namespace of its own).
            quiver_sandbox::EnvPolicy::user().apply_to(&mut cmd);
            cmd.args(args).envs(env);
            let dir = start_dir(config, cwd.as_deref());
            cmd.current_dir(&dir);
            let job = contain(&mut cmd)?;
            // Last: it forks, and the containment job and the parent-death
            // signal above belong to the process quiver starts.
            quiver_sandbox::own_pid_namespace(&mut cmd, &dir);
            let mut wrapped = CommandWrap::from(cmd);
            // Its own process group, so the whole tree (npx → node, a shell
            // wrapper → the real server) dies with the session.
            wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
            let spawned = super::child_lane::spawn(wrapped, std::process::Stdio::piped())
                .map_err(|e| format!("could not start `{command}`: {e}"))?;
            let pid = spawned.pid;
            #[cfg(target_os = "linux")]
            if let (Some(job), Some(pid)) = (&job, pid) {
                job.0.started(pid);
            }
            if let Some(pipe) = spawned.stderr {
                stderr.spawn_reader(config.name.clone(), pipe);
            }
            let transport = Ordered::new(
                spawned.transport.marking_tools_changed(Arc::clone(&state.tools_changed)),
                Arc::clone(&relay),
            );
            let service = state.serve_with_lifecycle(transport, mode).await.map_err(|e| OpenFailure {
                message: format!("the MCP handshake with `{command}` failed: {e}"),
                challenge: None,
                refused_initialize: refuses_initialize(&e),
            })?;
            let stateless = is_stateless(&service);
            // The raw lane writes a session's `tools/call` lines (no `_meta`).
            let raw = (!stateless).then_some(spawned.lane);
            let _listening = if stateless { listen(&service) } else { None };
            Ok(Connection { service, pid, relay, stateless, _listening, raw, _job: job })
        }
        Transport::Http { url, headers, bearer_token_env, .. } => {
            super::tls::install_crypto_provider();
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(var) = bearer_token_env {
                let token = quiver_sandbox::secret_env(var).ok_or_else(|| {
                    format!("environment variable `{var}` (bearer_token_env of server `{}`) is not set", config.name)
                })?;
                transport_config = transport_config.auth_header(token);
            }
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = http::HeaderName::try_from(name.as_str()).map_err(|e| format!("header `{name}`: {e}"))?;
                let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| format!("header `{name}`: {e}"))?;
                custom.insert(name, value);
            }
            transport_config = transport_config.custom_headers(custom);
            // A token from `quiver mcp login` is sent (and refreshed) when one
            // is stored for this server and URL; a static bearer token wins.
            let oauth = match (bearer_token_env, &shared.tokens) {
                (None, Some(store)) => super::oauth::authorized_client_with(config, store.clone()).await?,
                _ => None,
            };
            let opened = match oauth {
                Some(client) => {
                    let transport = StreamableHttpClientTransport::with_client(client, transport_config);
                    state.serve_with_lifecycle(Ordered::new(transport, Arc::clone(&relay)), mode).await
                }
                None => {
                    let transport = StreamableHttpClientTransport::from_config(transport_config);
                    state.serve_with_lifecycle(Ordered::new(transport, Arc::clone(&relay)), mode).await
                }
            };
            let service = opened.map_err(|e| match challenge_of(&e) {
                Some(challenge) => OpenFailure {
                    message: super::oauth::login_needed(config),
                    challenge: Some(challenge),
                    refused_initialize: false,
                },
                None => OpenFailure {
                    message: format!("could not open an MCP session at {url}: {e}"),
                    challenge: None,
                    refused_initialize: refuses_initialize(&e),
                },
            })?;
            let stateless = is_stateless(&service);
            let _listening = if stateless { listen(&service) } else { None };
            Ok(Connection { service, pid: None, relay, stateless, _listening, raw: None, _job: None })
        }
        Transport::Unsupported { reason, .. } => Err(reason.clone().into()),
    }
}
