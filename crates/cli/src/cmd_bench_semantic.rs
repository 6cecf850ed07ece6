//! The semantic side of `quiver bench search`: load the model tool search
//! uses (see `search_model`), build (or read back) tool vectors, rank a query
//! by meaning alone or fused with the lexical ranker, and time each step.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use quiver_search::semantic::{Encoder, SemanticIndex};
use quiver_search::{FusionParams, Hit, PriorScores, Ranking, SearchDoc, SearchIndex, SemanticScores, fuse_scores};

use crate::search_model::ModelChoice;

pub struct Semantic {
    encoder: Arc<Encoder>,
    index: SemanticIndex,
    /// What the model is, for the report line.
    name: String,
    load_ms: u128,
    vectors_ms: u128,
    cached_ms: Option<u128>,
}

impl Semantic {
    /// `cold`: encode into a fresh cache dir (the cold time), then read it back
    /// (the cached time), ignoring the user's cache.
    /// A static model's vectors are not cached on disk (encoding them is
    /// cheaper than reading them back), so `cold` changes nothing for it.
    pub fn load(choice: &ModelChoice, docs: &[SearchDoc], cold: bool) -> anyhow::Result<Semantic> {
        let start = Instant::now();
        let (encoder, name) = match choice {
            ModelChoice::Off => anyhow::bail!("no search model (off)"),
            ModelChoice::Embedded => (Encoder::embedded()?, "embedded".to_string()),
            ModelChoice::Dir(dir) => (Arc::new(Encoder::load(dir)?), dir.display().to_string()),
        };
        let load_ms = start.elapsed().as_millis();
        let cold = cold && !encoder.is_static();
        let scratch = if cold { Some(tempfile::tempdir().context("temp dir for a cold vector build")?) } else { None };
        let cache = match &scratch {
            Some(t) => Some(t.path().to_path_buf()),
            None if encoder.is_static() => None,
            None => crate::search_model::vectors_dir(),
        };
        let start = Instant::now();
        let index = SemanticIndex::build(&encoder, docs, cache.as_deref())?;
        let vectors_ms = start.elapsed().as_millis();
        let cached_ms = if scratch.is_some() {
            let start = Instant::now();
            let again = SemanticIndex::build(&encoder, docs, cache.as_deref())?;
            anyhow::ensure!(again.from_cache(), "tool vectors were not read back from the cache");
            Some(start.elapsed().as_millis())
        } else {
            None
        };
        Ok(Semantic { encoder, index, name, load_ms, vectors_ms, cached_ms })
    }

    /// How this model's similarities are fused (as tool search does).
    pub fn fusion(&self) -> FusionParams {
        self.encoder.fusion()
    }

    /// One line about the model and the vector build (printed before the metrics line).
    pub fn report(&self) -> String {
        let mut line = format!(
            "semantic: model={} id={} dim={} pooling={:?} load_ms={} vectors_ms={} vectors={}",
            self.name,
            self.encoder.id(),
            self.encoder.dim(),
            self.encoder.pooling(),
            self.load_ms,
            self.vectors_ms,
            if self.index.from_cache() { "cached" } else { "cold" },
        );
        if let Some(ms) = self.cached_ms {
            line.push_str(&format!(" cached_ms={ms}"));
        }
        line
    }
}

/// The cosine of `query` with every tool (its closest embedded text).
pub fn cosines(s: &Semantic, query: &str) -> anyhow::Result<Vec<f32>> {
    Ok(s.index.scores(&s.encoder.encode_query(query)?))
}

/// Ranks `query` by meaning (`Semantic`) or by the fusion of meaning and the
/// lexical ranker (`Fused`, lexical candidates from the top `pool`), with
/// whether the scores carry the intent prior's log (the confident-load
/// margin depends on it).
pub fn rank(
    s: &Semantic,
    lexical: &SearchIndex,
    query: &str,
    ranking: Ranking,
    fusion: &FusionParams,
    pool: usize,
    limit: usize,
) -> anyhow::Result<(Vec<Hit>, bool)> {
    let keep = |_: usize| true;
    let q = s.encoder.encode_query(query)?;
    let scores = s.index.scores(&q);
    Ok(match ranking {
        Ranking::Semantic => (s.index.rank(&scores, limit, &keep), false),
        _ => {
            let lex = lexical.search(query, pool, &keep);
            let prior = s.index.prior(query, &q);
            let log = PriorScores::adds_log(prior.as_ref(), fusion);
            let scores = SemanticScores { similarity: &scores, prior: prior.as_ref() };
            (fuse_scores(lexical, query, &lex, scores, fusion, limit, &keep), log)
        }
    })
}
