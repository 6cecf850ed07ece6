//! The one file that touches engine types. The turn loop sees only the
//! [`ToolPort`] trait, because the engine's API (how a `ToolContext` is built,
//! how an engine is composed) is being reshaped: when it changes, this file
//! changes and the loop does not.
//!
//! What this file works around, for whoever reshapes the engine:
//! - no head-only fingerprint: it builds a `Catalog` with an empty tail itself;
//! - no "spec for a called name" lookup: it resolves aliases through
//!   `lifecycle().resolve` and the registry by hand;
//! - `tool_search` / `mcp_discover` report `Risk::Read` yet change the tail, and
//!   a direct call to a deferred tool loads it at dispatch: nothing in a spec
//!   says "this call changes the catalog", so names are special-cased here;
//! - no model-facing rendering of a `ToolResult` (content plus metadata such
//!   as `_deprecation`): `outcome_of` defines one;
//! - model requests are recorded as `Event::ModelRequest` (sizes and hashes,
//!   never bodies).

use std::sync::Arc;

use quiver_engine::transcript::Event;
use quiver_engine::{
    Catalog, CatalogFormat, Engine, EngineHost, FillInMiddle, FimError, FimFuture, Resolution, Risk, ToolContext,
    ToolResult, canonical,
};
use serde_json::{Value, json};

use crate::provider::{BoxFuture, Provider, Wire};
use crate::run::prefix::RequestRecord;

/// The tool list for one request, rendered for the provider's wire.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogView {
    /// A JSON array: head first, then this session's loaded tail.
    pub tools: Value,
    pub head_len: usize,
    /// `sha256:<hex>` of the head's canonical bytes.
    pub head_hash: String,
    /// The loaded tools after the head, in load order.
    pub tail: Vec<String>,
    /// Every tool the session may load, rendered for the wire, in an order
    /// stable for the session (for wires that send them up front, deferred).
    pub deferred: Vec<Value>,
}

/// What a tool call gives back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The text the model reads.
    pub content: String,
    pub is_error: bool,
    /// What child-model calls the tool made cost (an RLM eval's `sub_query*`):
    /// its `child_usage` metadata, passed on to the run's events.
    pub child_usage: Option<Value>,
    /// Image blocks of the result, for vision-capable models.
    pub images: Vec<crate::message::ToolImage>,
    /// The tools the call loaded into the session (a `tool_search`), in load order.
    pub loaded: Vec<String>,
}

/// Everything the loop needs from a tool engine.
pub trait ToolPort: Send + Sync {
    fn session_id(&self) -> String;
    /// Called once per model request, before `catalog`.
    fn begin_turn(&self) -> u64;
    fn catalog(&self, wire: Wire) -> CatalogView;
    /// Whether a call may run concurrently with its neighbours: a read-only
    /// tool that is already in the catalog. (A call to a not-yet-loaded tool
    /// loads it, and loads must happen in call order to keep the tail stable.)
    fn concurrency_safe(&self, name: &str) -> bool;
    /// Runs one call. `Err` is fatal for the run (a broken session), never a
    /// tool's ordinary failure, which comes back as an error outcome.
    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<ToolOutcome, String>>;
    /// Records a conversation message in the session transcript, if any.
    fn record_message(&self, role: &str, content: Value);
    /// Records one model request (sizes, hashes, usage) in the transcript, if any.
    fn record_request(&self, _record: &RequestRecord) {}
    /// The history was compacted: reset the session's loads (the tail) and
    /// record that this is the one allowed break in prefix growth, with the
    /// estimated request size before and after.
    fn compacted(&self, _before_tokens: u64, _after_tokens: u64) {}
    /// Compaction produced this relay document (`# Session relay`); a root
    /// session keeps it as the workspace's hand-off file.
    fn keep_relay(&self, _relay: &str) {}
}

/// The provider's fill-in-the-middle completions, as the engine's
/// [`FillInMiddle`] (what `fim_edit` reaches through its `ToolContext`).
pub struct ProviderFim(pub Arc<dyn Provider>);

impl FillInMiddle for ProviderFim {
    fn provider(&self) -> &str {
        self.0.name()
    }

    fn fill<'a>(&'a self, prefix: &'a str, suffix: &'a str, max_tokens: u32) -> FimFuture<'a> {
        Box::pin(async move { self.0.fim(prefix, suffix, max_tokens).await.map_err(FimError::new) })
    }
}

/// Where the port gets the engine for the next request.
enum Engines {
    Fixed(Arc<Engine>),
    /// The engine's host: rebuilt engines (an MCP server's tools changed)
    /// reach the next request; the session's head stays pinned.
    Hosted(Arc<EngineHost>),
}

/// A [`ToolPort`] over a quiver engine and one session's context.
pub struct EnginePort {
    engines: Engines,
    ctx: ToolContext,
    /// Compaction writes the relay to this workspace's `.quiver/handoff.md`.
    relay_root: Option<std::path::PathBuf>,
}

impl EnginePort {
    /// Over one frozen engine; `ctx` should come from `engine.context(..)`.
    pub fn new(engine: Arc<Engine>, ctx: ToolContext) -> Self {
        EnginePort { engines: Engines::Fixed(engine), ctx, relay_root: None }
    }

    /// Over the engine's host; `ctx` should come from `host.context(..)`.
    pub fn hosted(host: Arc<EngineHost>, ctx: ToolContext) -> Self {
        EnginePort { engines: Engines::Hosted(host), ctx, relay_root: None }
    }

    /// Compaction also writes its relay to the workspace's hand-off file (the
    /// top-level session only: a sub-agent's relay would overwrite its parent's).
    pub fn with_relay_file(mut self) -> Self {
        self.relay_root = Some(self.ctx.workspace.root().to_path_buf());
        self
    }

    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    fn engine(&self) -> Arc<Engine> {
        match &self.engines {
            Engines::Fixed(engine) => Arc::clone(engine),
            Engines::Hosted(host) => host.engine(),
        }
    }

    fn catalog_now(&self) -> Catalog {
        self.engine().session_catalog(&self.ctx.audience, &self.ctx.session)
    }
}

fn format_for(wire: Wire) -> CatalogFormat {
    match wire {
        // The Responses wire reshapes Chat Completions tools itself (flat
        // functions, the client-executed `tool_search`).
        Wire::OpenAi | Wire::Responses => CatalogFormat::OpenAi,
        Wire::Anthropic => CatalogFormat::Anthropic,
    }
}

/// The model sees the content; when a result carries metadata (a
/// `_deprecation` notice, a spill handle, an exit code) it sees the whole
/// result as canonical JSON so nothing is lost and bytes are stable.
fn outcome_of(result: &ToolResult) -> ToolOutcome {
    let content = if result.metadata.is_empty() {
        result.content_text()
    } else {
        canonical::to_string(&json!({
            "content": result.content, "is_error": result.is_error, "metadata": result.metadata,
        }))
    };
    let images =
        result.images().into_iter().map(|(mime_type, data)| crate::message::ToolImage { mime_type, data }).collect();
    ToolOutcome {
        content,
        is_error: result.is_error,
        child_usage: result.metadata.get("child_usage").cloned(),
        images,
        loaded: Vec::new(),
    }
}

impl EnginePort {
    fn append(&self, event: &Event) {
        let Some(transcript) = &self.ctx.transcript else { return };
        if let Err(e) = transcript.append(event) {
            tracing::warn!(error = %e, "could not record an event in the transcript");
        }
    }
}

impl ToolPort for EnginePort {
    fn session_id(&self) -> String {
        self.ctx.session.id().to_string()
    }

    fn begin_turn(&self) -> u64 {
        self.ctx.session.advance_turn()
    }

    fn catalog(&self, wire: Wire) -> CatalogView {
        let catalog = self.catalog_now();
        let format = format_for(wire);
        let head = Catalog { head: catalog.head.clone(), tail: Vec::new() };
        let deferred = self.engine().session_deferrable(&self.ctx.audience, &self.ctx.session);
        CatalogView {
            tools: catalog.render(format),
            head_len: catalog.head.len(),
            head_hash: format!("sha256:{}", head.fingerprint(format).sha256),
            tail: catalog.tail.iter().map(|t| t.name.clone()).collect(),
            deferred: deferred.iter().map(|t| quiver_engine::render_tool(t, format)).collect(),
        }
    }

    fn concurrency_safe(&self, name: &str) -> bool {
        let engine = self.engine();
        let registry = engine.registry();
        let canonical_name = match engine.lifecycle().resolve(name, registry) {
            Resolution::Canonical(n) => n.to_string(),
            Resolution::Alias { entry, .. } => entry.replacement.clone(),
            _ => return false,
        };
        let Some(tool) = registry.get(&canonical_name) else { return false };
        // tool_search and discovery tools report `read` but change the tail.
        let loads = matches!(canonical_name.as_str(), "tool_search" | "mcp_discover");
        let session = &self.ctx.session;
        let in_catalog = session.is_loaded(&canonical_name)
            || session.pinned_head().is_some_and(|head| head.contains(&canonical_name));
        tool.spec.risk == Risk::Read && !loads && in_catalog
    }

    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<ToolOutcome, String>> {
        Box::pin(async move {
            // Loads happen only in calls that run alone (`concurrency_safe`
            // is false for them), so the difference is this call's loads.
            let before = self.ctx.session.loaded();
            match self.ctx.call(name, args).await {
                Ok(result) => {
                    let mut outcome = outcome_of(&result);
                    outcome.loaded = self.ctx.session.loaded().into_iter().filter(|n| !before.contains(n)).collect();
                    Ok(outcome)
                }
                Err(e) => Err(format!("{e:#}")),
            }
        })
    }

    fn record_message(&self, role: &str, content: Value) {
        self.append(&Event::Message { role: role.to_string(), content });
    }

    fn record_request(&self, r: &RequestRecord) {
        self.append(&Event::ModelRequest {
            turn: u64::from(r.turn),
            request_hash: r.request_hash.clone(),
            bytes: r.bytes,
            shared_prefix_bytes: r.shared_prefix_bytes,
            extends_previous: r.extends_previous,
            head_hash: r.head_hash.clone(),
            tools: r.tools,
            tail: r.tail.clone(),
            usage: r.usage.and_then(|u| serde_json::to_value(u).ok()),
            cache_order: Some(r.cache_order.to_string()),
        });
    }

    fn compacted(&self, before_tokens: u64, after_tokens: u64) {
        self.ctx.session.reset_loads();
        self.append(&Event::Compaction { before_tokens: Some(before_tokens), after_tokens: Some(after_tokens) });
    }

    fn keep_relay(&self, relay: &str) {
        let Some(root) = &self.relay_root else { return };
        // The relay is a convenience next to the compacted history, which
        // already carries it: failing to write it must not fail the run.
        match crate::relay::write(root, relay) {
            Ok(path) => tracing::info!(path = %path.display(), "wrote the session relay"),
            Err(e) => tracing::warn!(error = %e, "could not write the session relay"),
        }
    }
}
