//! The narrow handle `tool_search` gets onto the tool surface: find tools,
//! resolve names, ask what is in the head. It carries no engine type, so a
//! tool can hold it without tying the engine's modules into a circle; the
//! [`crate::engine::Engine`] and the [`crate::host::EngineHost`] implement it.

use quiver_search::Ranking;

use crate::audience::Audience;
use crate::domain::DomainFilter;
use crate::spec::ToolSpec;

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
    pub domain: DomainFilter,
    pub regex: bool,
    pub scope: Scope,
}

/// A search's tools, best first, with how they were ranked and how many of
/// the first ones are confident matches (what `tool_search` loads).
#[derive(Debug, Clone)]
pub struct Ranked {
    pub tools: Vec<ToolSpec>,
    pub ranking: Ranking,
    pub confident: usize,
    /// Confident matches not to load: tools that ask for approval, found by
    /// a request that does not name their action (see `load_guard.rs`).
    pub held: Vec<String>,
}

/// A name resolved for loading: its canonical tool, and whether the name
/// given was a deprecated alias of it.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub spec: ToolSpec,
    pub via_deprecated_alias: bool,
}

pub trait ToolSurface: Send + Sync {
    /// Ranked tools for `query` that `audience` may find; `loaded` is the
    /// session's tail. `Err` is for a bad regex, worded for the model.
    fn search(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<Vec<ToolSpec>, String> {
        self.search_ranked(query, options, audience, loaded).map(|r| r.tools)
    }

    /// [`ToolSurface::search`] with the ranking used and the confident count.
    fn search_ranked(
        &self,
        query: &str,
        options: &SearchOptions,
        audience: &Audience,
        loaded: &[String],
    ) -> Result<Ranked, String>;

    /// A name (canonical or alias) resolved to a tool `audience` may see;
    /// `None` for removed, unknown and gated-out names.
    fn resolve_visible(&self, name: &str, audience: &Audience) -> Option<Resolved>;

    /// In the audience's first-turn head (already visible, nothing to load).
    fn in_head(&self, spec: &ToolSpec, audience: &Audience) -> bool;

    /// Alias names of a canonical tool, sorted (searchable text only).
    fn aliases_of(&self, canonical: &str) -> Vec<String>;

    /// The replacement of `name` when `name` is a deprecated alias.
    fn deprecated_replacement(&self, name: &str) -> Option<String>;
}
