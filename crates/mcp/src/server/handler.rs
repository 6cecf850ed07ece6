//! The MCP handler: one [`QuiverServer`] per MCP connection (stdio) or HTTP
//! session, each holding its own quiver [`Session`], so what one client loads
//! with `tool_search` never shows up in another client's list.
//!
//! Tools are dynamic (the list grows as the session loads tools), so this is a
//! hand-written `ServerHandler` rather than rmcp's `#[tool]` router.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use quiver_engine::transcript::{Event, TRANSCRIPT_VERSION, TranscriptWriter};
use quiver_engine::{Audience, CatalogFormat, Engine, EngineHost, Session, ToolContext, Workspace};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::Value;

use super::approver::ElicitationApprover;
use super::convert;
use crate::client::McpManager;

/// What every session of one `quiver mcp serve` shares: the engine (or the
/// host that rebuilds it when a downstream tool list changes), the workspace
/// its tools act on, and the audience (provider, model, mode).
pub struct Surface {
    engines: Engines,
    pub workspace: Workspace,
    pub audience: Audience,
    /// Where each session's transcript is written (`<dir>/<session id>.jsonl`).
    pub transcript_dir: Option<std::path::PathBuf>,
}

enum Engines {
    Fixed(Arc<Engine>),
    Hosted { host: Arc<EngineHost>, manager: Arc<McpManager> },
}

impl Surface {
    /// A surface over one frozen engine (native tools only, or tests).
    pub fn new(engine: Arc<Engine>, workspace: Workspace, audience: Audience) -> Self {
        Surface { engines: Engines::Fixed(engine), workspace, audience, transcript_dir: None }
    }

    /// A surface whose engine follows `host` (downstream MCP servers of
    /// `manager` behind quiver).
    pub fn hosted(host: Arc<EngineHost>, manager: Arc<McpManager>, workspace: Workspace, audience: Audience) -> Self {
        Surface { engines: Engines::Hosted { host, manager }, workspace, audience, transcript_dir: None }
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

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

pub struct QuiverServer {
    surface: Arc<Surface>,
    session: Arc<Session>,
    transcript: Option<Arc<TranscriptWriter>>,
    /// What the client was last shown or told about, so each change of the
    /// list sends exactly one `notifications/tools/list_changed`.
    announced: Mutex<Announced>,
}

#[derive(Default)]
struct Announced {
    /// Loaded tools (the tail) the client knows about.
    loaded: usize,
    /// The engine the client's list came from, and that list's fingerprint:
    /// a rebuilt engine (a downstream server's tools changed) only matters
    /// when the list it renders differs.
    engine: Option<Arc<Engine>>,
    fingerprint: String,
}

impl QuiverServer {
    /// A handler with a fresh session (one per connection / HTTP session).
    pub fn new(surface: Arc<Surface>) -> Self {
        let n = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        let session = Arc::new(Session::new(format!("mcp-{}-{n}", std::process::id())));
        let transcript = surface.transcript_dir.as_deref().and_then(|dir| open_transcript(dir, &surface, &session));
        QuiverServer { surface, session, transcript, announced: Mutex::new(Announced::default()) }
    }

    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    fn announced(&self) -> MutexGuard<'_, Announced> {
        // Plain bookkeeping, consistent between statements: a panic elsewhere
        // must not stop notifications.
        self.announced.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The context one call runs in. The approver is per call because the peer
    /// (and whether it can answer elicitation) is only known once the client
    /// has initialized.
    fn context(&self, request: &RequestContext<RoleServer>) -> ToolContext {
        let approver = ElicitationApprover::for_peer(&request.peer)
            .map(|a| Arc::new(a) as Arc<dyn quiver_engine::permissions::Approver>);
        // Built by the engine so fields it adds later get their defaults.
        let mut ctx = self.surface.context();
        ctx.session = self.session.clone();
        ctx.approver = approver;
        ctx.transcript = self.transcript.clone();
        ctx
    }

    /// Whether the list the client would get now differs from what it knows:
    /// the tail grew, or a rebuilt engine renders a different list.
    fn list_changed_since_announced(&self) -> bool {
        let loaded = self.session.loaded();
        let engine = self.surface.engine();
        let mut announced = self.announced();
        if loaded.len() > announced.loaded {
            announced.loaded = loaded.len();
            return true;
        }
        let same_engine = announced.engine.as_ref().is_some_and(|e| Arc::ptr_eq(e, &engine));
        if same_engine || announced.engine.is_none() {
            return false;
        }
        let fingerprint = fingerprint(&engine, &self.surface.audience, &loaded);
        announced.engine = Some(engine);
        if fingerprint == announced.fingerprint {
            return false;
        }
        announced.fingerprint = fingerprint;
        true
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

fn fingerprint(engine: &Engine, audience: &Audience, loaded: &[String]) -> String {
    engine.catalog(audience, loaded).fingerprint(CatalogFormat::Mcp).sha256
}

impl ServerHandler for QuiverServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("quiver", quiver_engine::VERSION)
                    .with_title("quiver")
                    .with_description("quiver's tool surface: coding tools and MCP servers behind tool_search"),
            )
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(INSTRUCTIONS)
    }

    /// Session-based protocol versions only: notifications and elicitation are
    /// server-to-client messages, which the stateless 2026-07-28 revision drops.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let engine = self.surface.engine();
        let catalog = engine.session_catalog(&self.surface.audience, &self.session);
        // One tool that cannot be rendered (a downstream server's odd schema)
        // must not empty the whole list.
        let tools: Vec<_> = catalog
            .tools()
            .filter_map(|spec| match convert::mcp_tool(spec) {
                Ok(tool) => Some(tool),
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
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let ctx = self.context(&context);
        self.session.advance_turn();
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let name = request.name.to_string();
        let dispatched = tokio::select! {
            r = ctx.call(&name, args) => r,
            () = context.ct.cancelled() => {
                return Ok(convert::error_result(format!("call to `{name}` was cancelled by the client")).into());
            }
        };
        let result = match dispatched {
            Ok(result) => convert::call_result(&result),
            // A fatal tool failure breaks that call, not the connection.
            Err(e) => {
                tracing::error!(tool = %name, error = %format!("{e:#}"), "tool failed");
                convert::error_result(format!("{e:#}"))
            }
        };
        self.announce_changes(&context).await;
        Ok(result.into())
    }
}
