//! The engine: a registry of tools under one lifecycle manifest. It builds
//! catalogs and dispatches calls; everything else hangs off it.

use crate::catalog::Catalog;
use crate::discovery;
use crate::search::SearchIndex;
use crate::lifecycle::{Audience, Lifecycle};
use crate::manifest::Manifest;
use crate::registry::Registry;

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
}
