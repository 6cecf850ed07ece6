//! The engine: a registry of tools under one lifecycle manifest, frozen
//! together with its search index and command gate. It builds catalogs,
//! answers searches and dispatches calls (see `dispatch.rs`); contexts for
//! tool calls come from [`Engine::context`].

use std::sync::{Arc, OnceLock};

use quiver_search::{CatalogMeaning, MeaningModel, MeaningState, SearchIndex};
use serde_json::Value;

use crate::audience::Audience;
use crate::catalog::Catalog;
use crate::context::{DispatchFuture, Dispatcher, ToolContext};
use crate::discovery;
use crate::lifecycle::{Lifecycle, Resolution};
use crate::manifest::{AliasState, Manifest};
use crate::permissions::command::CommandGate;
use crate::permissions::trust::TrustStore;
use crate::registry::{RegisteredTool, Registry};
use crate::session::Session;
use crate::spec::ToolSpec;
use crate::surface::{Ranked, Resolved, SearchOptions, ToolSurface};
use crate::workspace::Workspace;

pub struct Engine {
    registry: Registry,
    lifecycle: Lifecycle,
    /// Built once: the registry and manifest are frozen for the engine's life,
    /// so the index only changes when a new engine (a new catalog) is built.
    search: SearchIndex,
    /// Semantic scores over the same docs, building in the background once a
    /// model is attached; absent or not ready, searches are lexical.
    meaning: OnceLock<Arc<dyn CatalogMeaning>>,
    commands: Arc<CommandGate>,
}

impl Engine {
    /// Lays the manifest's per-tool overlays onto the registry and freezes
    /// both. Approvals of project-defined processes are remembered in the
    /// user's state directory.
    pub fn new(registry: Registry, manifest: Manifest) -> Self {
        Engine::with_trust(registry, manifest, TrustStore::from_env())
    }

    /// [`Engine::new`] with an explicit trust store (tests, replays).
    pub fn with_trust(registry: Registry, manifest: Manifest, trust: TrustStore) -> Self {
        let commands = Arc::new(CommandGate::new(&manifest.exec_policy, trust));
        Engine::with_gate(registry, manifest, commands)
    }

    /// Shares `commands` with an earlier engine (a host's rebuild).
    pub fn with_gate(mut registry: Registry, manifest: Manifest, commands: Arc<CommandGate>) -> Self {
        registry.apply_overlays(&manifest);
        let lifecycle = Lifecycle::new(manifest);
        let search = discovery::build_index(&registry, &lifecycle);
        Engine { registry, lifecycle, search, meaning: OnceLock::new(), commands }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    pub fn search_index(&self) -> &SearchIndex {
        &self.search
    }

    /// Starts indexing this engine's catalog with `model` (in the
    /// background: searches stay lexical until the vectors are ready). The
    /// first model attached stays; later calls change nothing.
    pub fn attach_meaning(&self, model: &dyn MeaningModel) {
        if self.meaning.get().is_none() {
            let _ = self.meaning.set(model.index(self.search.docs()));
        }
    }

    /// Where semantic ranking stands: `None` without a model.
    pub fn meaning_state(&self) -> Option<MeaningState> {
        self.meaning.get().map(|m| m.state())
    }

    pub fn manifest(&self) -> &Manifest {
        self.lifecycle.manifest()
    }

    pub fn commands(&self) -> &Arc<CommandGate> {
        &self.commands
    }

    pub fn catalog(&self, audience: &Audience, loaded: &[String]) -> Catalog {
        Catalog::build(&self.registry, &self.lifecycle, audience, loaded)
    }

    /// The catalog for the next request of a live session (see [`Catalog::for_session`]).
    pub fn session_catalog(&self, audience: &Audience, session: &Session) -> Catalog {
        Catalog::for_session(&self.registry, &self.lifecycle, audience, session)
    }

    /// Every tool the session may load (see [`Catalog::deferrable`]).
    pub fn session_deferrable(&self, audience: &Audience, session: &Session) -> Vec<crate::ToolSpec> {
        Catalog::deferrable(&self.registry, &self.lifecycle, audience, session)
    }

    /// Ranked registered tools for `query` (see [`discovery::search`]).
    pub fn search_tools(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<Vec<&RegisteredTool>, String> {
        Ok(self.search_found(query, options, audience, loaded)?.tools)
    }

    /// [`Engine::search_tools`] with the ranking used and the confident count.
    pub fn search_found(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<discovery::Found<'_>, String> {
        let meaning = self.meaning.get().map(|m| &**m as &dyn CatalogMeaning);
        discovery::search(&self.search, &self.registry, &self.lifecycle, meaning, query, options, audience, loaded)
    }

    /// A context for calls on this engine, with a fresh session.
    pub fn context(self: &Arc<Self>, workspace: Workspace, audience: Audience) -> ToolContext {
        ToolContext::new(self.clone(), self.clone(), Arc::clone(&self.commands), workspace, audience)
    }
}

impl ToolSurface for Engine {
    fn search_ranked(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<Ranked, String> {
        let found = self.search_found(query, options, audience, loaded)?;
        Ok(Ranked {
            tools: found.tools.into_iter().map(|t| t.spec.clone()).collect(),
            ranking: found.ranking,
            confident: found.confident,
            held: found.held,
        })
    }

    fn resolve_visible(&self, name: &str, audience: &Audience) -> Option<Resolved> {
        let (canonical, deprecated) = match self.lifecycle.resolve(name, &self.registry) {
            Resolution::Canonical(n) => (n.to_string(), false),
            Resolution::Alias { entry, .. } => (entry.replacement.clone(), entry.state == AliasState::Deprecated),
            Resolution::Removed { .. } | Resolution::Unknown => return None,
        };
        let tool = self.registry.get(&canonical).filter(|_| self.lifecycle.visible(&canonical, audience))?;
        Some(Resolved { spec: tool.spec.clone(), via_deprecated_alias: deprecated })
    }

    fn in_head(&self, spec: &ToolSpec, audience: &Audience) -> bool {
        self.lifecycle.in_head(spec, audience)
    }

    fn aliases_of(&self, canonical: &str) -> Vec<String> {
        self.lifecycle.aliases_of(canonical)
    }

    fn deprecated_replacement(&self, name: &str) -> Option<String> {
        self.manifest().aliases.get(name).filter(|e| e.state == AliasState::Deprecated).map(|e| e.replacement.clone())
    }
}

impl Dispatcher for Engine {
    fn dispatch<'a>(&'a self, name: &'a str, args: Value, ctx: &'a ToolContext) -> DispatchFuture<'a> {
        Box::pin(Engine::dispatch(self, name, args, ctx))
    }
}
