//! Discovery: the search index over a registry, and the audience filter that
//! decides which tools a search may return. The ranking itself is the
//! `quiver-search` crate's; this module only feeds it and filters for policy.
//! With a sentence-embedding model attached (its vectors ready), lexical and
//! semantic scores are fused; until then, or without one, ranking is lexical.

use quiver_search::{
    CatalogMeaning, FusionParams, PriorScores, Ranking, SearchDoc, SearchIndex, SemanticScores, confident,
    confident_margin, fuse_scores, params_from_schema,
};

use crate::audience::Audience;
use crate::lifecycle::Lifecycle;
use crate::load_guard;
use crate::registry::{RegisteredTool, Registry};
use crate::spec::ToolSource;
use crate::surface::{Scope, SearchOptions};

/// Builds the index: one document per canonical tool, with its aliases as
/// searchable text (an alias is never a result of its own).
pub fn build_index(registry: &Registry, lifecycle: &Lifecycle) -> SearchIndex {
    let docs = registry
        .iter()
        .map(|tool| SearchDoc {
            name: tool.spec.name.clone(),
            aliases: lifecycle.aliases_of(&tool.spec.name),
            domain: tool.spec.domain.as_str().to_string(),
            description: tool.spec.description.clone(),
            prompt_snippet: tool.spec.prompt_snippet.clone(),
            phrasings: lifecycle.manifest().tools.get(&tool.spec.name).map(|t| t.phrasings.clone()).unwrap_or_default(),
            examples: lifecycle.manifest().tools.get(&tool.spec.name).map(|t| t.examples.clone()).unwrap_or_default(),
            params: params_from_schema(&tool.spec.input_schema),
            server: match &tool.spec.source {
                ToolSource::Mcp { server, .. } => Some(server.clone()),
                ToolSource::Native => None,
            },
        })
        .collect();
    SearchIndex::build(docs)
}

/// A search's tools, best first, and how they were ranked.
pub struct Found<'r> {
    pub tools: Vec<&'r RegisteredTool>,
    pub ranking: Ranking,
    /// How many of the first `tools` are confident matches (see
    /// [`quiver_search::confident`]); every one for a regex search.
    pub confident: usize,
    /// Names among the confident matches that are listed but not loaded
    /// (see `load_guard.rs`).
    pub held: Vec<String>,
}

/// Ranked tools for `query` that `audience` may find under `options`.
/// `loaded` is the session's tail; `meaning` the catalog's semantic scores,
/// used when ready. Errors are for a bad regex.
#[allow(clippy::too_many_arguments)]
pub fn search<'r>(
    index: &SearchIndex,
    registry: &'r Registry,
    lifecycle: &Lifecycle,
    meaning: Option<&dyn CatalogMeaning>,
    query: &str,
    options: &SearchOptions,
    audience: &Audience,
    loaded: &[String],
) -> Result<Found<'r>, String> {
    let keep = |doc: usize| -> bool {
        let Some(tool) = index.docs().get(doc).and_then(|d| registry.get(&d.name)) else { return false };
        if !options.domain.admits(tool.spec.domain) || !lifecycle.visible(&tool.spec.name, audience) {
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
    let (hits, ranking, prior_log) = if options.regex {
        (index.search_regex(query, limit, &keep).map_err(|e| format!("invalid regex: {e}"))?, Ranking::Lexical, false)
    } else {
        let fusion = meaning.map_or_else(FusionParams::default, |m| m.fusion());
        // Fusion takes its candidates from the lexical pool, not just the top `limit`.
        let lexical = index.search(query, limit.max(fusion.pool), &keep);
        match meaning.and_then(|m| m.scores_and_prior(query)).filter(|(s, _)| s.len() == index.docs().len()) {
            Some((similarity, prior)) => {
                let log = PriorScores::adds_log(prior.as_ref(), &fusion);
                let scores = SemanticScores { similarity: &similarity, prior: prior.as_ref() };
                (fuse_scores(index, query, &lexical, scores, &fusion, limit, &keep), Ranking::Fused, log)
            }
            None => (lexical.into_iter().take(limit).collect(), Ranking::Lexical, false),
        }
    };
    let confident = if options.regex {
        hits.len()
    } else {
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        confident(&scores, confident_margin(ranking, prior_log))
    };
    let tools: Vec<&RegisteredTool> =
        hits.iter().filter_map(|h| index.docs().get(h.doc).and_then(|d| registry.get(&d.name))).collect();
    let held = tools
        .iter()
        .take(confident)
        .filter(|t| {
            let overlay = lifecycle.manifest().tools.get(&t.spec.name);
            load_guard::action_words(&t.spec, overlay).is_some_and(|words| !load_guard::names_action(query, &words))
        })
        .map(|t| t.spec.name.clone())
        .collect();
    Ok(Found { tools, ranking, confident, held })
}
