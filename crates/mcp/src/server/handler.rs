//! The MCP handler: one [`QuiverServer`] per MCP connection (stdio) or HTTP
//! session, each holding its own quiver [`Session`], so what one client loads
//! with `tool_search` never shows up in another client's list.
//!
//! Tools are dynamic (the list grows as the session loads tools), so this is a
//! hand-written `ServerHandler` rather than rmcp's `#[tool]` router.

use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use quiver_engine::transcript::{Event, TRANSCRIPT_VERSION, TranscriptWriter};
use quiver_engine::{Audience, CatalogFormat, Engine, EngineHost, Session, ToolContext, Workspace};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approver::ElicitationApprover;
use super::convert;
use super::passthrough::Passthrough;
use crate::client::McpManager;

#[path = "announce.rs"]
mod announce;
#[path = "handler_call.rs"]
mod call;
#[path = "handler_relay.rs"]
mod relay;
use announce::{Announced, Forwarder, changed_since_announced, forward_downstream};

/// What every session of one `quiver mcp serve` shares: the engine (or the
/// host that rebuilds it when a downstream tool list changes), the workspace
/// its tools act on, and the audience (provider, model, mode).
pub struct Surface {
    engines: Engines,
    /// Resources, prompts and completion of the servers behind (hosted only).
    passthrough: Option<Arc<Passthrough>>,
    pub workspace: Workspace,
    pub audience: Audience,
    /// Where each session's transcript is written (`<dir>/<session id>.jsonl`).
    pub transcript_dir: Option<std::path::PathBuf>,
    /// The head every stateless (2026-07-28) request is shown.
    stateless_head: super::stateless::StatelessHead,
    /// Signs the tails stateless clients carry (see `stateless_tail`).
    tail_keys: super::stateless_tail::TailKeys,
    /// Stateless calls waiting for their client's input (`input_required`).
    input_rounds: Arc<super::input_required::InputRounds>,
    /// Stateless calls relayed beside rmcp so far, over any transport (for
    /// tests and benches to tell the paths apart).
    stateless_lane_calls: std::sync::atomic::AtomicU64,
}

enum Engines {
    Fixed(Arc<Engine>),
    Hosted { host: Arc<EngineHost>, manager: Arc<McpManager> },
}

impl Surface {
    /// Stateless calls relayed beside rmcp so far, over HTTP and stdio.
    pub fn stateless_lane_calls(&self) -> u64 {
        self.stateless_lane_calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A surface over one frozen engine (native tools only, or tests).
    pub fn new(engine: Arc<Engine>, workspace: Workspace, audience: Audience) -> Self {
        Surface {
            engines: Engines::Fixed(engine),
            passthrough: None,
            workspace,
            audience,
            transcript_dir: None,
            stateless_head: Default::default(),
            tail_keys: Default::default(),
            input_rounds: super::input_required::InputRounds::new(Default::default()),
            stateless_lane_calls: Default::default(),
        }
    }

    /// A surface whose engine follows `host` (downstream MCP servers of
    /// `manager` behind quiver).
    pub fn hosted(host: Arc<EngineHost>, manager: Arc<McpManager>, workspace: Workspace, audience: Audience) -> Self {
        let servers: Vec<_> = manager.servers().cloned().collect();
        let passthrough = (!servers.is_empty()).then(|| Arc::new(Passthrough::new(servers)));
        Surface {
            engines: Engines::Hosted { host, manager },
            passthrough,
            workspace,
            audience,
            transcript_dir: None,
            stateless_head: Default::default(),
            tail_keys: Default::default(),
            input_rounds: super::input_required::InputRounds::new(Default::default()),
            stateless_lane_calls: Default::default(),
        }
    }

    /// How long a stateless call waits for its client's input, and how many
    /// may wait at once (see `input_required`).
    pub fn with_input_limits(mut self, limits: super::input_required::InputLimits) -> Self {
        self.input_rounds = super::input_required::InputRounds::new(limits);
        self
    }

    /// Stateless calls waiting for their client's input.
    pub fn input_rounds(&self) -> &Arc<super::input_required::InputRounds> {
        &self.input_rounds
    }

    /// How many resource subscriptions quiver holds on the servers behind
    /// (one per server and URI, however many sessions asked for it).
    pub fn downstream_subscriptions(&self) -> usize {
        self.passthrough.as_ref().map_or(0, |p| p.subscriptions_held())
    }

    /// The engine for the next request.
    pub fn engine(&self) -> Arc<Engine> {
        match &self.engines {
            Engines::Fixed(engine) => engine.clone(),
            Engines::Hosted { host, .. } => host.engine(),
        }
    }

    /// A context whose search and dispatch reach this surface's newest engine.
    fn context(&self) -> ToolContext {
        match &self.engines {
            Engines::Fixed(engine) => engine.context(self.workspace.clone(), self.audience.clone()),
            Engines::Hosted { host, .. } => host.context(self.workspace.clone(), self.audience.clone()),
        }
    }

    /// Downstream tools by quiver name, for what `tools/list` forwards of them.
    fn remote_tools(&self) -> std::collections::HashMap<String, crate::client::RemoteTool> {
        let Engines::Hosted { manager, .. } = &self.engines else { return Default::default() };
        manager.servers().flat_map(|server| manager.exposed_tools(server)).collect()
    }

    /// A direct server's tools belong in the head from the first list: on a
    /// fresh machine (no cached tool list) wait, bounded, for its discovery
    /// before the first list or call. A server that cannot start in time
    /// joins later, as a loaded tool (the head stays as first sent).
    async fn settle_direct(&self, ctx: &ToolContext) {
        let Engines::Hosted { manager, .. } = &self.engines else { return };
        let pending = manager.servers().any(|s| {
            let config = s.config();
            config.enabled
                && config.expose.is_direct()
                && s.tool_origin() == crate::client::ToolOrigin::None
                && s.status().state != crate::client::ConnState::Failed
        });
        if pending {
            let notes = manager.settle(ctx, DIRECT_DISCOVERY_WAIT).await;
            for note in notes {
                tracing::warn!("{note}");
            }
        }
    }

    /// Whether a directly exposed server is behind quiver (its tools are in
    /// the head, and change when it says so).
    fn has_direct_servers(&self) -> bool {
        let Engines::Hosted { manager, .. } = &self.engines else { return false };
        manager.servers().any(|s| s.config().enabled && s.config().expose.is_direct())
    }

    /// Announcements of the servers behind (none for a fixed engine).
    fn downstream_events(&self) -> Option<tokio::sync::broadcast::Receiver<crate::client::DownstreamEvent>> {
        match &self.engines {
            Engines::Hosted { manager, .. } => Some(manager.subscribe_events()),
            Engines::Fixed(_) => None,
        }
    }

    /// Stops downstream servers this surface started, if any.
    pub async fn shutdown(&self) {
        if let Engines::Hosted { manager, .. } = &self.engines {
            manager.shutdown().await;
        }
    }
}

/// Shown to the client at `initialize`; clients pass it to the model.
pub const INSTRUCTIONS: &str = "quiver lists only a small set of tools up front; call `tool_search` \
with what you need to do to find and load the rest (files, git, shell jobs, web, other MCP servers). \
Loaded tools are callable by name right away, even before your tool list refreshes.";

/// How long the first list or call waits for direct servers never listed before.
const DIRECT_DISCOVERY_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// A handle on one client's session: clones share it (the stdio transport
/// answers `tools/call` through a clone, see `stdio_calls`).
#[derive(Clone)]
pub struct QuiverServer {
    surface: Arc<Surface>,
    session: Arc<Session>,
    /// Opened at `initialize`: a stateless request (which sends none) has no
    /// transcript of its own.
    transcript: Arc<OnceLock<Arc<TranscriptWriter>>>,
    /// What the client was last shown or told about, so each change of the
    /// list sends exactly one `notifications/tools/list_changed`.
    announced: Arc<Mutex<Announced>>,
    /// Resource URIs (as this client knows them) it subscribed to.
    subscribed: Arc<Mutex<std::collections::HashSet<String>>>,
    /// Set when the transport writes verbatim results (quiver's stdio
    /// transport, its HTTP layer): downstream answers then reach the client
    /// as their server wrote them.
    verbatim: Option<Arc<super::verbatim::VerbatimResults>>,
    /// Set over HTTP: where this session arms its call lane (`http_calls`).
    lanes: Option<Arc<dyn ArmLane>>,
    /// This client's number (its session's): what a downstream server sends
    /// during a call goes to the client whose call it is, never another's.
    client: u64,
    /// Cancelled when the last handle on this session drops (its connection
    /// ended): the session's forwarder stops then and releases what it held.
    ended: CancellationToken,
    _end: Arc<SessionEnd>,
}

/// Dropped with the session's last handle: ends its forwarder and gives back
/// its log level (the servers behind may then log less).
struct SessionEnd {
    ended: CancellationToken,
    client: u64,
    surface: Arc<Surface>,
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        self.ended.cancel();
        if let Engines::Hosted { manager, .. } = &self.surface.engines {
            manager.forget_log_level(self.client);
        }
    }
}

/// Where an HTTP session's handler arms the listener's call lane once its
/// client is initialized (`http_calls::Lanes`; a trait, so the handler does
/// not depend on the lane that calls it).
pub trait ArmLane: Send + Sync {
    fn arm(&self, session_id: &str, server: QuiverServer, peer: rmcp::service::Peer<RoleServer>);
}

impl QuiverServer {
    /// A handler with a fresh session (one per connection / HTTP session).
    pub fn new(surface: Arc<Surface>) -> Self {
        let n = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        let session = Arc::new(Session::new(format!("mcp-{}-{n}", std::process::id())));
        let ended = CancellationToken::new();
        let end = SessionEnd { ended: ended.clone(), client: n, surface: Arc::clone(&surface) };
        QuiverServer {
            surface,
            session,
            transcript: Arc::default(),
            announced: Arc::default(),
            subscribed: Arc::default(),
            verbatim: None,
            lanes: None,
            client: n,
            _end: Arc::new(end),
            ended,
        }
    }

    /// This client's number (see [`crate::relay::Upstream::client`]).
    pub(crate) fn client(&self) -> u64 {
        self.client
    }

    /// This handler's transport writes the results in `verbatim` as their text.
    pub fn with_verbatim_results(mut self, verbatim: Arc<super::verbatim::VerbatimResults>) -> Self {
        self.verbatim = Some(verbatim);
        self
    }

    /// This handler serves an HTTP session of `lanes`' listener, whose
    /// plain relayed calls are answered beside rmcp once it is initialized.
    pub fn with_lanes(mut self, lanes: Arc<dyn ArmLane>) -> Self {
        self.lanes = Some(lanes);
        self
    }

    /// What the client gets for a dispatch result. A downstream server's
    /// answer that quiver left alone (no deprecation notice, nothing spilled)
    /// goes on as the server wrote it (no `_meta` or `isError` added, every
    /// field and number kept): verbatim where the transport writes the slots
    /// (quiver's stdio transport, its HTTP layer), else as rmcp reads it.
    pub(crate) fn call_result(&self, result: &quiver_engine::ToolResult) -> rmcp::model::CallToolResult {
        if let Some(text) = &result.verbatim {
            match &self.verbatim {
                Some(slots) => return slots.placeholder(Arc::clone(text)),
                None => {
                    if let Ok(typed) = serde_json::from_str(text) {
                        return typed;
                    }
                }
            }
        }
        convert::call_result(result)
    }

    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// For the stateless HTTP lane's own handler: shows this session the
    /// head every stateless request is shown, once one was pinned (by the
    /// first stateless list); whether it now has it.
    pub(crate) fn adopt_pinned_stateless_head(&self) -> bool {
        if !self.session.is_head_pinned()
            && let Some(head) = self.surface.stateless_head.get()
        {
            self.session.pin_head(head);
        }
        self.session.is_head_pinned()
    }

    /// Counts a stateless call relayed beside rmcp (`http_stateless_calls`).
    pub(crate) fn note_stateless_lane_call(&self) {
        self.surface.stateless_lane_calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// What signs and checks the tails stateless clients carry.
    pub(crate) fn tail_keys(&self) -> &super::stateless_tail::TailKeys {
        &self.surface.tail_keys
    }

    fn announced(&self) -> MutexGuard<'_, Announced> {
        self.announced.lock()
    }

    /// The context one call runs in. The approver is per call because the peer
    /// (and whether it can answer elicitation) is only known once the client
    /// has initialized. A stateless request gets none here: its revision has
    /// no server-to-client requests, and its call sets one that asks by
    /// input request (`handler_call`).
    pub(super) fn context(&self, request: &RequestContext<RoleServer>) -> ToolContext {
        let approver = if super::stateless::is_stateless(request) {
            None
        } else {
            ElicitationApprover::for_peer(&request.peer)
                .map(|a| Arc::new(a) as Arc<dyn quiver_engine::permissions::Approver>)
        };
        // Built by the engine so fields it adds later get their defaults.
        let mut ctx = self.surface.context();
        ctx.session = self.session.clone();
        ctx.approver = approver;
        ctx.transcript = self.transcript.get().cloned();
        ctx
    }

    /// Whether `request` is stateless (see `stateless`); if so this fresh
    /// session starts from the head every stateless request is shown and the
    /// tail the client carries, when quiver signed it (see `stateless_tail`).
    fn adopt_stateless_head(&self, request: &RequestContext<RoleServer>) -> bool {
        let stateless = super::stateless::is_stateless(request);
        if !stateless {
            return false;
        }
        if let Some(head) = self.surface.stateless_head.get() {
            self.session.pin_head(head);
        }
        if let Some(token) = request.meta.get(super::stateless_tail::TAIL_KEY) {
            match self.surface.tail_keys.verify(token) {
                Some(loaded) => {
                    self.session.load(&loaded);
                }
                None => tracing::debug!("ignored a tail token quiver cannot verify"),
            }
        }
        true
    }

    /// Whether the list the client would get now differs from what it knows:
    /// the tail grew, or a rebuilt engine renders a different list.
    fn list_changed_since_announced(&self) -> bool {
        changed_since_announced(&self.surface, &self.session, &self.announced)
    }

    fn passthrough(&self) -> Result<&Arc<Passthrough>, McpError> {
        self.surface.passthrough.as_ref().ok_or_else(|| {
            McpError::invalid_request(
                "no MCP servers are configured behind quiver, so it has no resources or prompts",
                None,
            )
        })
    }

    /// Tells the client its list changed. A client that ignores this can still
    /// call every loaded tool by name (dispatch accepts any known name).
    async fn announce_changes(&self, request: &RequestContext<RoleServer>) {
        if self.list_changed_since_announced()
            && let Err(e) = request.peer.notify_tool_list_changed().await
        {
            tracing::debug!(error = %e, "could not send tools/list_changed");
        }
    }
}

/// A stateless request's result says it is complete (2026-07-28 requires
/// `resultType`; what the servers behind answer in an older revision has
/// none). rmcp drops it again for a session's older revision.
fn complete(result_type: &mut Option<rmcp::model::ResultType>, context: &RequestContext<RoleServer>) {
    if super::stateless::is_stateless(context) {
        result_type.get_or_insert(rmcp::model::ResultType::COMPLETE);
    }
}

/// The capabilities a gateway with servers behind it adds.
fn with_passthrough(capabilities: ServerCapabilities) -> ServerCapabilities {
    let mut value = serde_json::to_value(&capabilities).unwrap_or_default();
    if let Value::Object(map) = &mut value {
        map.insert("resources".into(), serde_json::json!({"subscribe": true, "listChanged": true}));
        map.insert("prompts".into(), serde_json::json!({"listChanged": true}));
        map.insert("completions".into(), serde_json::json!({}));
    }
    serde_json::from_value(value).unwrap_or(capabilities)
}

/// Starts this session's transcript. A transcript that cannot be written is
/// reported and the session goes on without one: serving tools matters more.
fn open_transcript(dir: &std::path::Path, surface: &Surface, session: &Session) -> Option<Arc<TranscriptWriter>> {
    let path = dir.join(format!("{}.jsonl", session.id()));
    let start = Event::SessionStart {
        version: TRANSCRIPT_VERSION,
        session: session.id().to_string(),
        quiver_version: quiver_engine::VERSION.to_string(),
        workspace: surface.workspace.root().to_string_lossy().into_owned(),
        provider: surface.audience.provider.clone(),
        model: surface.audience.model.clone(),
        mode: surface.audience.mode.as_str().to_string(),
    };
    match TranscriptWriter::open(&path).and_then(|w| w.append(&start).map(|()| w)) {
        Ok(writer) => Some(Arc::new(writer)),
        Err(e) => {
            tracing::warn!(path = %path.display(), "no transcript for this session: {e:#}");
            None
        }
    }
}

impl ServerHandler for QuiverServer {
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    fn get_info(&self) -> ServerConfig {
        let mut capabilities =
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_logging().build();
        if self.surface.passthrough.as_ref().is_some_and(|p| !p.is_empty()) {
            // Servers are behind: their resources, prompts and completion pass through.
            capabilities = with_passthrough(capabilities);
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("quiver", quiver_engine::VERSION)
                    .with_title("quiver")
                    .with_description("quiver's tool surface: coding tools and MCP servers behind tool_search"),
            )
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(INSTRUCTIONS)
    }

    /// The session-based revisions and the stateless 2026-07-28 (see
    /// `stateless`); an `initialize` still settles on a session-based one.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    /// A session starts here, and so does its transcript (a stateless
    /// request never sends `initialize`, so it writes no file of its own).
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        if let Some(dir) = self.surface.transcript_dir.as_deref()
            && self.transcript.get().is_none()
            && let Some(writer) = open_transcript(dir, &self.surface, &self.session)
        {
            let _ = self.transcript.set(writer);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// `subscriptions/listen` (2026-07-28): tool list changes, and those of
    /// the resource and prompt lists when servers are behind (not yet updates
    /// of single resources).
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let mut accepted = rmcp::model::SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        if self.surface.passthrough.as_ref().is_some_and(|p| !p.is_empty()) {
            accepted.prompts_list_changed = requested.prompts_list_changed;
            accepted.resources_list_changed = requested.resources_list_changed;
        }
        Some(accepted)
    }

    /// See [`announce::listen`]; the tail the listen request carried is the
    /// one whose changes count.
    async fn listen(&self, subscription: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        self.adopt_stateless_head(subscription.request_context());
        announce::listen(&self.surface, &self.session, &self.announced, subscription).await;
        Ok(())
    }

    /// What a stateless client can use (see [`super::stateless::discover_capabilities`]).
    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<rmcp::model::DiscoverResult, McpError> {
        let passthrough = self.surface.passthrough.as_ref().is_some_and(|p| !p.is_empty());
        let mut info = self.get_info();
        info.capabilities = super::stateless::discover_capabilities(passthrough);
        Ok(rmcp::model::DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info))
    }

    /// Kept as this client's choice: the servers behind, which every client
    /// of an HTTP gateway shares, send at the most verbose level any client
    /// chose, and this client gets their messages at its own level and above
    /// (`client::log_levels`).
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if super::stateless::is_stateless(&context) {
            return Err(super::stateless::removed_error("logging/setLevel"));
        }
        if let Engines::Hosted { manager, .. } = &self.surface.engines {
            manager.choose_log_level(self.client, request.level).await;
        }
        Ok(())
    }

    /// Starts forwarding what the servers behind announce (see [`forward_downstream`]).
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        // Over HTTP the notification's request names the session it completes.
        if let Some(lanes) = &self.lanes
            && let Some(parts) = context.extensions.get::<http::request::Parts>()
            && let Some(id) = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok())
        {
            lanes.arm(id, self.clone(), context.peer.clone());
        }
        let Some(events) = self.surface.downstream_events() else { return };
        let forwarder = Forwarder {
            surface: Arc::clone(&self.surface),
            session: Arc::clone(&self.session),
            announced: Arc::clone(&self.announced),
            subscribed: Arc::clone(&self.subscribed),
            peer: context.peer.clone(),
            ended: self.ended.clone(),
        };
        tokio::spawn(forward_downstream(forwarder, events));
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        let mut result = match &self.surface.passthrough {
            Some(p) => p.list_resources().await?,
            None => Default::default(),
        };
        complete(&mut result.result_type, &context);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        let mut result = match &self.surface.passthrough {
            Some(p) => p.list_resource_templates().await?,
            None => Default::default(),
        };
        complete(&mut result.result_type, &context);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        call::read_resource(self, request, context).await
    }

    #[allow(deprecated)] // resources/subscribe: legacy-only, still in every session revision
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let passthrough = self.passthrough()?;
        if self.subscribed.lock().contains(&request.uri) {
            return Ok(());
        }
        passthrough.subscribe(&request.uri, &self.context(&context)).await?;
        self.subscribed.lock().insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)] // resources/unsubscribe: legacy-only, still in every session revision
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let passthrough = self.passthrough()?;
        if self.subscribed.lock().remove(&request.uri) {
            passthrough.unsubscribe(&request.uri).await?;
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        let mut result = match &self.surface.passthrough {
            Some(p) => p.list_prompts().await?,
            None => Default::default(),
        };
        complete(&mut result.result_type, &context);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        call::get_prompt(self, request, context).await
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        let mut result = match &self.surface.passthrough {
            Some(p) => p.complete(request, &self.context(&context)).await?,
            None => Default::default(),
        };
        complete(&mut result.result_type, &context);
        Ok(result)
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        if super::stateless::is_stateless(&context) && super::stateless::removed(&request.method) {
            return Err(super::stateless::removed_error(&request.method));
        }
        Err(super::bad_request::answer(&request.method, request.params.as_ref()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let stateless = self.adopt_stateless_head(&context);
        if self.session.pinned_head().is_none() {
            self.surface.settle_direct(&self.context(&context)).await;
        }
        let engine = self.surface.engine();
        let catalog = engine.session_catalog(&self.surface.audience, &self.session);
        let remote = self.surface.remote_tools();
        // One tool that cannot be rendered (a downstream server's odd schema)
        // must not empty the whole list.
        let mut verbatim_entries = Vec::new();
        let tools: Vec<_> = catalog
            .tools()
            .filter_map(|spec| match convert::mcp_tool(spec) {
                Ok(mut tool) => {
                    let remote = remote.get(&spec.name);
                    if let Some(remote) = remote {
                        convert::forward_remote_fields(&mut tool, remote);
                    }
                    verbatim_entries.push(remote.and_then(|r| r.verbatim.clone()));
                    Some(tool)
                }
                Err(e) => {
                    tracing::warn!(tool = %spec.name, "left out of tools/list: {e}");
                    None
                }
            })
            .collect();
        // Whatever the client lists now is what it knows about.
        let mut announced = self.announced();
        announced.loaded = announced.loaded.max(self.session.loaded().len());
        announced.fingerprint = catalog.fingerprint(CatalogFormat::Mcp).sha256;
        announced.engine = Some(engine);
        drop(announced);
        let mut result = ListToolsResult::with_all_items(tools);
        if stateless {
            if let Some(head) = self.session.pinned_head() {
                self.surface.stateless_head.pin(head);
            }
            let carries_tail = !self.session.loaded().is_empty();
            let (ttl, scope) = super::stateless::tools_cache_hints(self.surface.has_direct_servers(), carries_tail);
            result.ttl_ms = Some(ttl);
            result.cache_scope = Some(scope);
        }
        // A directly exposed server's entries go out as it wrote them.
        Ok(match &self.verbatim {
            Some(slots) if verbatim_entries.iter().any(Option::is_some) => {
                slots.tools_placeholder(result, verbatim_entries)
            }
            _ => result,
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.adopt_stateless_head(&context) {
            return call::call_stateless(self, request, context).await;
        }
        let ctx = self.context(&context);
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let name = request.name.to_string();
        let result = tokio::select! {
            r = self.dispatch(&name, args, ctx, self.upstream(&context, None), false) => r,
            () = context.ct.cancelled() => {
                return Ok(convert::error_result(format!("call to `{name}` was cancelled by the client")).into());
            }
        };
        self.announce_changes(&context).await;
        Ok(result.into())
    }
}
