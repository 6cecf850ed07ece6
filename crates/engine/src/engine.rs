//! The engine: a registry of tools under one lifecycle manifest. It builds
//! catalogs and dispatches calls; everything else hangs off it.

use crate::catalog::Catalog;
use crate::lifecycle::{Audience, Lifecycle};
use crate::manifest::Manifest;
use crate::registry::Registry;

pub struct Engine {
    registry: Registry,
    lifecycle: Lifecycle,
}

impl Engine {
    /// Lays the manifest's per-tool overlays onto the registry and freezes both.
    pub fn new(mut registry: Registry, manifest: Manifest) -> Self {
        registry.apply_overlays(&manifest);
        Engine { registry, lifecycle: Lifecycle::new(manifest) }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    pub fn manifest(&self) -> &Manifest {
        self.lifecycle.manifest()
    }

    pub fn catalog(&self, audience: &Audience, loaded: &[String]) -> Catalog {
        Catalog::build(self, audience, loaded)
    }
}
