//! Discovery: the engine's search index over its registry, and the audience
//! filter that decides which tools a search may return. The ranking itself is
//! in [`crate::search`]; this module only feeds it and filters for policy.

use crate::engine::Engine;
use crate::lifecycle::Audience;
use crate::lifecycle::Lifecycle;
use crate::registry::{RegisteredTool, Registry};
use quiver_search::{SearchDoc, SearchIndex, params_from_schema};
use crate::tool::ToolSource;

/// Which tools a search may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Deferred tools not loaded yet (what `tool_search` loads).
    #[default]
    Deferred,
    /// Deferred tools, loaded ones included.
    DeferredAndLoaded,
    /// Every visible canonical tool, active ones too (for humans: `quiver search --scope all`).
    All,
}

#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    pub limit: usize,
    /// `None` or `all`: every domain.
    pub domain: Option<String>,
    pub regex: bool,
    pub scope: Scope,
}

/// Builds the index: one document per canonical tool, with its aliases as
/// searchable text (an alias is never a result of its own).
pub fn build_index(registry: &Registry, lifecycle: &Lifecycle) -> SearchIndex {
    let docs = registry
        .iter()
        .map(|tool| SearchDoc {
            name: tool.spec.name.clone(),
            aliases: lifecycle.aliases_of(&tool.spec.name),
            domain: tool.spec.domain.clone(),
            description: tool.spec.description.clone(),
            prompt_snippet: tool.spec.prompt_snippet.clone(),
            params: params_from_schema(&tool.spec.input_schema),
            server: match &tool.spec.source {
                ToolSource::Mcp { server } => Some(server.clone()),
                ToolSource::Native => None,
            },
        })
        .collect();
    SearchIndex::build(docs)
}

impl Engine {
    /// Ranked tools for `query` that this audience may find under `options`.
    /// `loaded` is the session's tail. Errors are for a bad regex.
    pub fn search_tools(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<Vec<&RegisteredTool>, String> {
        let index = self.search_index();
        let lifecycle = self.lifecycle();
        let domain = options.domain.as_deref().filter(|d| *d != "all");
        let keep = |doc: usize| -> bool {
            let Some(tool) = index.docs().get(doc).and_then(|d| self.registry().get(&d.name)) else { return false };
            if domain.is_some_and(|d| d != tool.spec.domain) || !lifecycle.visible(&tool.spec.name, audience) {
                return false;
            }
            let is_loaded = loaded.iter().any(|n| n == &tool.spec.name);
            match options.scope {
                Scope::All => true,
                Scope::DeferredAndLoaded => lifecycle.searchable(&tool.spec, audience),
                Scope::Deferred => lifecycle.searchable(&tool.spec, audience) && !is_loaded,
            }
        };
        let limit = options.limit.clamp(1, 20);
        let hits = if options.regex {
            index.search_regex(query, limit, &keep).map_err(|e| format!("invalid regex: {e}"))?
        } else {
            index.search(query, limit, &keep)
        };
        Ok(hits.iter().filter_map(|h| index.docs().get(h.doc).and_then(|d| self.registry().get(&d.name))).collect())
    }
}
