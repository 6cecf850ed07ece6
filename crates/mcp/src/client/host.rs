//! Engines over a changing set of MCP tools.
//!
//! An [`Engine`] is frozen (registry, manifest and search index together), which
//! is what keeps a catalog byte-stable. Downstream tool lists do change: a
//! server connects for the first time, or says its list changed. The host keeps
//! the current engine and builds a new one when the manager's generation moved,
//! reusing every native handler as-is (so session state, shell jobs and the
//! native head are untouched) and re-registering only the MCP tools.
//!
//! Sessions live outside the engine, so their loaded names survive a rebuild;
//! a loaded name whose tool disappeared simply drops out of the tail.

use std::sync::{Arc, Mutex, RwLock};

use quiver_engine::{Engine, Manifest, Registry, ToolSource};

use super::McpManager;

/// Native registry + the `mcp_*` tools + every known downstream tool.
pub fn build_engine(mut native: Registry, manifest: Manifest, manager: &Arc<McpManager>) -> anyhow::Result<Engine> {
    crate::tools::register_mcp_tools(&mut native, manager)?;
    manager.register_server_tools(&mut native)?;
    Ok(Engine::new(native, manifest))
}

pub struct EngineHost {
    manifest: Manifest,
    manager: Arc<McpManager>,
    /// (manager generation it was built at, engine)
    current: RwLock<(u64, Arc<Engine>)>,
    rebuilding: Mutex<()>,
}

impl EngineHost {
    /// Builds the first engine from `native` (quiver's native tools, without
    /// the `mcp_*` ones: they are added here).
    pub fn new(native: Registry, manifest: Manifest, manager: Arc<McpManager>) -> anyhow::Result<Arc<Self>> {
        let generation = manager.generation();
        let engine = Arc::new(build_engine(native, manifest.clone(), &manager)?);
        let host = Arc::new(EngineHost {
            manifest,
            manager: Arc::clone(&manager),
            current: RwLock::new((generation, engine)),
            rebuilding: Mutex::new(()),
        });
        manager.attach_host(Arc::downgrade(&host));
        Ok(host)
    }

    pub fn manager(&self) -> &Arc<McpManager> {
        &self.manager
    }

    /// The engine to use for the next request: the current one, rebuilt first
    /// when a downstream tool list changed since it was built. Cheap when
    /// nothing changed (two atomic reads and a read lock).
    pub fn engine(&self) -> Arc<Engine> {
        let wanted = self.manager.generation();
        {
            let current = self.current.read().unwrap_or_else(|p| p.into_inner());
            if current.0 == wanted {
                return Arc::clone(&current.1);
            }
        }
        let _one_at_a_time = self.rebuilding.lock().unwrap_or_else(|p| p.into_inner());
        let base = {
            let current = self.current.read().unwrap_or_else(|p| p.into_inner());
            if current.0 == wanted {
                return Arc::clone(&current.1);
            }
            Arc::clone(&current.1)
        };
        match self.rebuild(&base) {
            Ok(engine) => {
                let engine = Arc::new(engine);
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = (wanted, Arc::clone(&engine));
                engine
            }
            Err(e) => {
                // Keep serving the old engine; the failure is a bug worth a log
                // line, not a reason to take the session down.
                tracing::error!(error = %format!("{e:#}"), "could not rebuild the engine after an MCP tool list change");
                base
            }
        }
    }

    /// The native tools of `base` (same handlers) plus the current MCP tools.
    fn rebuild(&self, base: &Engine) -> anyhow::Result<Engine> {
        let mut registry = Registry::new();
        for tool in base.registry().iter() {
            if tool.spec.source == ToolSource::Native {
                registry.register_with_spec(tool.spec.clone(), Arc::clone(&tool.handler))?;
            }
        }
        self.manager.register_server_tools(&mut registry)?;
        Ok(Engine::new(registry, self.manifest.clone()))
    }
}
