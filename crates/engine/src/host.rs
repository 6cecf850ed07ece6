//! Engines over a changing set of tools. An [`Engine`] is frozen (registry,
//! manifest, search index together), which is what keeps a catalog
//! byte-stable. Tool sets do change: a downstream MCP server connects for the
//! first time, or says its list changed. The host keeps the current engine
//! and builds a new one when a [`ToolProvider`]'s generation moved, reusing
//! every base handler as-is (so session state, shell jobs and the native head
//! are untouched) and asking the providers for the rest.
//!
//! Sessions live outside the engine, so their loaded names survive a
//! rebuild; a loaded name whose tool disappeared simply drops out of the tail.
//! The host is also what a long-lived context holds as its search and dispatch
//! handles, so a call always reaches the newest engine.

use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use quiver_search::MeaningModel;
use serde_json::Value;

use crate::audience::Audience;
use crate::context::{DispatchFuture, Dispatcher, SettleFuture, ToolContext};
use crate::engine::Engine;
use crate::manifest::Manifest;
use crate::permissions::command::CommandGate;
use crate::permissions::trust::TrustStore;
use crate::registry::Registry;
use crate::spec::ToolSpec;
use crate::surface::{Ranked, Resolved, SearchOptions, ToolSurface};
use crate::tool::SharedTool;
use crate::workspace::Workspace;

/// A source of tools whose set can change while the host runs (MCP servers).
pub trait ToolProvider: Send + Sync {
    /// Registers the provider's current tools.
    fn register(&self, registry: &mut Registry) -> anyhow::Result<()>;
    /// Moves whenever the set of tools `register` would register changed.
    fn generation(&self) -> u64;
    /// Starts discovering tools not known yet (if that has not started) and
    /// waits up to `within` for it; notes on what is still pending or failed.
    /// See [`ToolSurface::settle`].
    fn settle<'a>(&'a self, _ctx: &'a ToolContext, _within: std::time::Duration) -> SettleFuture<'a> {
        Box::pin(std::future::ready(Vec::new()))
    }
}

pub struct EngineHost {
    /// The tools that never change (quiver's native ones), with their handlers.
    base: Vec<(ToolSpec, SharedTool)>,
    providers: Vec<Arc<dyn ToolProvider>>,
    manifest: Manifest,
    /// (provider generations it was built at, engine)
    current: RwLock<(Vec<u64>, Arc<Engine>)>,
    rebuilding: Mutex<()>,
    /// Attached to every engine built from now on (see [`EngineHost::set_meaning`]).
    meaning: RwLock<Option<Arc<dyn MeaningModel>>>,
}

impl EngineHost {
    /// The first engine: `base` plus every provider's tools. Approvals are
    /// remembered in the user's state directory.
    pub fn new(base: Registry, manifest: Manifest, providers: Vec<Arc<dyn ToolProvider>>) -> anyhow::Result<Arc<Self>> {
        EngineHost::with_trust(base, manifest, providers, TrustStore::from_env())
    }

    pub fn with_trust(
        base: Registry,
        manifest: Manifest,
        providers: Vec<Arc<dyn ToolProvider>>,
        trust: TrustStore,
    ) -> anyhow::Result<Arc<Self>> {
        let base: Vec<(ToolSpec, SharedTool)> = base.iter().map(|t| (t.spec.clone(), Arc::clone(&t.handler))).collect();
        let commands = Arc::new(CommandGate::new(&manifest.exec_policy, trust));
        let generations = providers.iter().map(|p| p.generation()).collect();
        let engine = build(&base, &providers, &manifest, commands)?;
        Ok(Arc::new(EngineHost {
            base,
            providers,
            manifest,
            current: RwLock::new((generations, Arc::new(engine))),
            rebuilding: Mutex::new(()),
            meaning: RwLock::new(None),
        }))
    }

    /// The engine for the next request: the current one, rebuilt first when a
    /// provider's tools changed since it was built. Cheap when nothing changed
    /// (one atomic read per provider and a read lock).
    pub fn engine(&self) -> Arc<Engine> {
        {
            // Compared in place: a gateway asks this once per relayed call.
            let current = self.current.read();
            if current.0.iter().zip(&self.providers).all(|(built, p)| *built == p.generation()) {
                return Arc::clone(&current.1);
            }
        }
        let wanted: Vec<u64> = self.providers.iter().map(|p| p.generation()).collect();
        let _one_at_a_time = self.rebuilding.lock();
        let base_engine = {
            let current = self.current.read();
            if current.0 == wanted {
                return Arc::clone(&current.1);
            }
            Arc::clone(&current.1)
        };
        let commands = Arc::clone(base_engine.commands());
        match build(&self.base, &self.providers, &self.manifest, commands) {
            Ok(engine) => {
                if let Some(model) = &*self.meaning.read() {
                    engine.attach_meaning(&**model);
                }
                let engine = Arc::new(engine);
                *self.current.write() = (wanted, Arc::clone(&engine));
                engine
            }
            Err(e) => {
                // Keep serving the old engine; the failure is a bug worth a log
                // line, not a reason to take the session down.
                tracing::error!(error = %format!("{e:#}"), "could not rebuild the engine after a tool list change");
                base_engine
            }
        }
    }

    /// Ranks by meaning too: the current engine and every rebuilt one index
    /// their catalog with `model` in the background (searches are lexical
    /// until an engine's vectors are ready).
    pub fn set_meaning(&self, model: Arc<dyn MeaningModel>) {
        *self.meaning.write() = Some(Arc::clone(&model));
        self.engine().attach_meaning(&*model);
    }

    /// A context whose search and dispatch reach the newest engine, with a
    /// fresh session.
    pub fn context(self: &Arc<Self>, workspace: Workspace, audience: Audience) -> ToolContext {
        let commands = Arc::clone(self.engine().commands());
        ToolContext::new(self.clone(), self.clone(), commands, workspace, audience)
    }
}

fn build(
    base: &[(ToolSpec, SharedTool)],
    providers: &[Arc<dyn ToolProvider>],
    manifest: &Manifest,
    commands: Arc<CommandGate>,
) -> anyhow::Result<Engine> {
    let mut registry = Registry::new();
    for (spec, handler) in base {
        registry.register_with_spec(spec.clone(), Arc::clone(handler))?;
    }
    for provider in providers {
        provider.register(&mut registry)?;
    }
    Ok(Engine::with_gate(registry, manifest.clone(), commands))
}

impl ToolSurface for EngineHost {
    fn search_ranked(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<Ranked, String> {
        self.engine().search_ranked(query, options, audience, loaded)
    }

    fn resolve_visible(&self, name: &str, audience: &Audience) -> Option<Resolved> {
        self.engine().resolve_visible(name, audience)
    }

    fn in_head(&self, spec: &ToolSpec, audience: &Audience) -> bool {
        ToolSurface::in_head(&*self.engine(), spec, audience)
    }

    fn aliases_of(&self, canonical: &str) -> Vec<String> {
        ToolSurface::aliases_of(&*self.engine(), canonical)
    }

    fn deprecated_replacement(&self, name: &str) -> Option<String> {
        self.engine().deprecated_replacement(name)
    }
}

impl Dispatcher for EngineHost {
    fn dispatch<'a>(&'a self, name: &'a str, args: Value, ctx: &'a ToolContext) -> DispatchFuture<'a> {
        let engine = self.engine();
        Box::pin(async move { engine.dispatch(name, args, ctx).await })
    }

    /// Every provider settles against one deadline.
    fn settle<'a>(&'a self, ctx: &'a ToolContext, within: std::time::Duration) -> SettleFuture<'a> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + within;
            let mut notes = Vec::new();
            for provider in &self.providers {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                notes.extend(provider.settle(ctx, left).await);
            }
            notes
        })
    }
}
