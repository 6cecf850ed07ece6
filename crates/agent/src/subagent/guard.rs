//! The restricted dispatcher a child runs behind: every call by the child
//! (and by its tools, through `ToolContext::call`) is checked against the
//! roles of the child and of every ancestor before it reaches the engine.
//! The mode needs no check here: a child's context carries its parent's
//! mode, and the engine's own gate enforces it.

use std::sync::Arc;

use quiver_engine::{DispatchFuture, Dispatcher, EngineHost, Resolution, ToolContext, ToolResult};
use serde_json::Value;

use crate::subagent::role::Role;

/// One link of the chain: a role and, for custom (or a narrowed role), its allowlist.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub role: Role,
    /// Canonical names; `None` means the role's own rule alone.
    pub allowed: Option<Vec<String>>,
}

impl Limit {
    fn refusal(&self, spec: &quiver_engine::ToolSpec) -> Option<String> {
        if let Some(message) = self.role.refusal(spec, self.allowed.as_deref().unwrap_or(&[])) {
            return Some(message);
        }
        let allowed = self.allowed.as_ref().filter(|_| self.role != Role::Custom)?;
        (!allowed.contains(&spec.name)).then(|| {
            format!(
                "`{}` is refused for this sub-agent: it is not in its allowed_tools ({})",
                spec.name,
                allowed.join(", ")
            )
        })
    }
}

pub struct Guarded {
    pub host: Arc<EngineHost>,
    /// Outermost ancestor first; a call must pass every link.
    pub chain: Vec<Limit>,
}

impl Guarded {
    /// The refusal for `name`, if any link refuses it. Names the engine
    /// cannot resolve pass through: dispatch words their error.
    pub fn refusal(&self, name: &str) -> Option<String> {
        let engine = self.host.engine();
        let canonical = match engine.lifecycle().resolve(name, engine.registry()) {
            Resolution::Canonical(n) => n.to_string(),
            Resolution::Alias { entry, .. } => entry.replacement.clone(),
            _ => return None,
        };
        let tool = engine.registry().get(&canonical)?;
        self.chain.iter().find_map(|limit| limit.refusal(&tool.spec))
    }
}

impl Dispatcher for Guarded {
    fn dispatch<'a>(&'a self, name: &'a str, args: Value, ctx: &'a ToolContext) -> DispatchFuture<'a> {
        Box::pin(async move {
            match self.refusal(name) {
                Some(message) => Ok(ToolResult::error(message)),
                None => self.host.engine().dispatch(name, args, ctx).await,
            }
        })
    }
}
