//! The engine: a registry of tools under one lifecycle manifest. It builds
//! catalogs and dispatches calls; everything else hangs off it.

use crate::catalog::Catalog;
use crate::discovery;
use crate::lifecycle::{Audience, Lifecycle};
use crate::manifest::Manifest;
use crate::registry::Registry;
use quiver_search::SearchIndex;
use crate::session::Session;

pub struct Engine {
    registry: Registry,
    lifecycle: Lifecycle,
    /// Built once: the registry and manifest are frozen for the engine's life,
    /// so the index only changes when a new engine (a new catalog) is built.
    search: SearchIndex,
}

impl Engine {
    /// Lays the manifest's per-tool overlays onto the registry and freezes both.
    pub fn new(mut registry: Registry, manifest: Manifest) -> Self {
        registry.apply_overlays(&manifest);
        let lifecycle = Lifecycle::new(manifest);
        let search = discovery::build_index(&registry, &lifecycle);
        Engine { registry, lifecycle, search }
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

    pub fn manifest(&self) -> &Manifest {
        self.lifecycle.manifest()
    }

    pub fn catalog(&self, audience: &Audience, loaded: &[String]) -> Catalog {
        Catalog::build(self, audience, loaded)
    }

    /// The catalog for the next request of a live session. The head is pinned
    /// to what the session was first sent, even when the engine is rebuilt
    /// (a downstream MCP server connected and, in yolo mode, brought new
    /// active tools): such newcomers are loaded into the tail instead, so the
    /// provider's prompt prefix survives.
    pub fn session_catalog(&self, audience: &Audience, session: &Session) -> Catalog {
        let fresh = Catalog::build(self, audience, &[]);
        let pinned = session.pin_head(fresh.head.iter().map(|t| t.name.clone()).collect());
        let newcomers: Vec<String> =
            fresh.head.iter().map(|t| t.name.clone()).filter(|n| !pinned.contains(n)).collect();
        session.load(&newcomers);
        let head = pinned.iter().filter_map(|n| self.registry.get(n)).map(|t| t.spec.clone()).collect();
        let tail = session
            .loaded()
            .iter()
            .filter(|n| !pinned.contains(n))
            .filter_map(|n| self.registry.get(n))
            .filter(|t| self.lifecycle.visible(&t.spec.name, audience))
            .map(|t| t.spec.clone())
            .collect();
        Catalog { head, tail }
    }
}
