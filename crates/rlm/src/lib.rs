//! RLM sessions: persistent Python REPLs over large context (a file, inline
//! content, a URL or a session object), with bounded fan-out to a fast child
//! model (`sub_query*`, at most 16 per call) and results as var handles.
//!
//! - [`repl`]: the Python process (gate, sandbox, scrubbed env, containment)
//!   and the JSON-lines wire to the bootstrap shipped in `bootstrap.py`.
//! - [`session`]: one session: eval with wall-time limit, interrupt, restart.
//! - [`child`] / [`fanout`]: child-model calls (provider layer) and `sub_rlm`.
//! - [`source`] / [`session_objects`]: what `rlm_open` loads.
//! - [`hub`]: where sessions live; [`tools`]: the five tools.
//!
//! The tools join the engine through [`RlmProvider`], a `ToolProvider`.

pub mod child;
pub mod config;
pub mod fanout;
pub mod hub;
pub mod repl;
pub mod session;
pub mod session_objects;
pub mod source;
pub mod tools;

use std::sync::Arc;

use quiver_engine::{Registry, ToolProvider};

pub use child::{BATCH_CAP, ChildModel, ChildUsage, DEFAULT_CHILD_MODEL, ProviderFactory};
pub use hub::RlmHub;

/// The RLM tools as one provider of the engine's host.
pub struct RlmProvider {
    hub: Arc<RlmHub>,
}

impl RlmProvider {
    pub fn shared(child: ChildModel) -> Arc<dyn ToolProvider> {
        Arc::new(RlmProvider { hub: RlmHub::new(child) })
    }
}

impl ToolProvider for RlmProvider {
    fn register(&self, registry: &mut Registry) -> anyhow::Result<()> {
        let hub = || Arc::clone(&self.hub);
        registry.register(tools::rlm_open::RlmOpen { hub: hub() })?;
        registry.register(tools::rlm_eval::RlmEval { hub: hub() })?;
        registry.register(tools::rlm_configure::RlmConfigure { hub: hub() })?;
        registry.register(tools::rlm_close::RlmClose { hub: hub() })?;
        registry.register(tools::rlm_session_objects::RlmSessionObjects)?;
        Ok(())
    }

    /// The set of tools never changes.
    fn generation(&self) -> u64 {
        0
    }
}
