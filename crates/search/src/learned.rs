//! Learned fusion: a linear ranker over each candidate's lexical and semantic
//! signals, its weights trained on the dev sets by `bench/search/learn/train.py`
//! (listwise logistic, pure Python) and embedded from `learned_fusion.json`.
//! The features are computed here exactly as the script computes them from a
//! `quiver bench search --dump` file; the script's parity check is that the
//! hand-set weights (0.5 `lexical_shared` + 0.2 `semantic_leaned`) reproduce
//! [`crate::fuse`]'s score fusion rank for rank.

use std::sync::OnceLock;

use crate::{Hit, SearchIndex};

/// The feature names, in the order of the weight vector.
pub const FEATURES: [&str; 10] = [
    "lexical",
    "lexical_shared",
    "share",
    "semantic",
    "semantic_leaned",
    "cosine_gap",
    "lexical_rank",
    "semantic_rank",
    "lexical_confident",
    "semantic_alone",
];

const WEIGHTS_JSON: &str = include_str!("learned_fusion.json");

/// The trained model: one weight per feature, and the softmax temperature it
/// was trained with (a hit's score is the model's probability that it is the
/// tool wanted, so [`crate::confident`]'s margin reads as a probability ratio).
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedWeights {
    pub weights: [f32; FEATURES.len()],
    pub temperature: f32,
}

impl LearnedWeights {
    /// Parses a weights file written by `train.py`; every feature must be
    /// present and no other.
    pub fn parse(text: &str) -> Result<LearnedWeights, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("learned fusion weights: {e}"))?;
        let map = v["weights"].as_object().ok_or("learned fusion weights: no \"weights\" object")?;
        if let Some(extra) = map.keys().find(|k| !FEATURES.contains(&k.as_str())) {
            return Err(format!("learned fusion weights: unknown feature {extra:?}"));
        }
        let mut weights = [0f32; FEATURES.len()];
        for (w, name) in weights.iter_mut().zip(FEATURES) {
            *w = map
                .get(name)
                .and_then(serde_json::Value::as_f64)
                .ok_or(format!("learned fusion weights: no {name:?}"))? as f32;
        }
        let temperature = v["temperature"].as_f64().ok_or("learned fusion weights: no \"temperature\"")? as f32;
        Ok(LearnedWeights { weights, temperature })
    }

    /// The weights embedded in this build (`None` only if the file is broken,
    /// which a unit test rules out; the caller then fuses by hand-set weights).
    pub fn embedded() -> Option<&'static LearnedWeights> {
        static W: OnceLock<Option<LearnedWeights>> = OnceLock::new();
        W.get_or_init(|| LearnedWeights::parse(WEIGHTS_JSON).ok()).as_ref()
    }
}

/// Ranks the union of the lexical and the semantic pool (`lex`, `sem`: each
/// best first, `sem` holding cosines) by the learned
/// score; each hit's score is its softmax probability within the candidates.
pub(crate) fn fuse_learned(
    index: &SearchIndex,
    query: &str,
    lex: &[&Hit],
    sem: &[Hit],
    semantic: &[f32],
    w: &LearnedWeights,
) -> Vec<Hit> {
    let n = index.docs().len();
    let mut lex_rank = vec![usize::MAX; n];
    let mut sem_rank = vec![usize::MAX; n];
    let mut docs: Vec<usize> = Vec::new();
    for (r, h) in lex.iter().enumerate() {
        lex_rank[h.doc] = r;
        docs.push(h.doc);
    }
    for (r, h) in sem.iter().enumerate() {
        if sem_rank[h.doc] == usize::MAX {
            sem_rank[h.doc] = r;
        }
        if lex_rank[h.doc] == usize::MAX {
            docs.push(h.doc);
        }
    }
    let shares = index.match_share(query, &docs);
    let top = lex.first().map_or(0.0, |h| h.score);
    let best_share = if top > 0.0 { shares.first().copied().unwrap_or(0.0) } else { 0.0 };
    let (best_cos, floor) = match (sem.first(), sem.last()) {
        (Some(b), Some(f)) => (b.score, f.score),
        _ => (0.0, 0.0),
    };
    let span = best_cos - floor;
    let mut scores: Vec<f32> = Vec::with_capacity(docs.len());
    for (&d, &share) in docs.iter().zip(&shares) {
        let in_lex = lex_rank[d] != usize::MAX;
        let in_sem = sem_rank[d] != usize::MAX;
        let lexn = if in_lex && top > 0.0 { lex[lex_rank[d]].score / top } else { 0.0 };
        let semn = match (in_sem, span > 0.0) {
            (true, true) => ((semantic.get(d).copied().unwrap_or(floor) - floor) / span).max(0.0),
            (true, false) => 1.0,
            (false, _) => 0.0,
        };
        let sem15 = semn.powf(1.5);
        let cos = semantic.get(d).copied().unwrap_or(floor);
        let f: [f32; FEATURES.len()] = [
            lexn,
            if share > 0.0 { lexn * share.powf(0.25) } else { 0.0 },
            if in_lex { share } else { 0.0 },
            semn,
            sem15 * (1.5 - best_share).max(0.0),
            cos - best_cos,
            if in_lex { 1.0 / (1.0 + lex_rank[d] as f32) } else { 0.0 },
            if in_sem { 1.0 / (1.0 + sem_rank[d] as f32) } else { 0.0 },
            lexn * best_share,
            sem15 * (1.0 - share),
        ];
        scores.push(f.iter().zip(&w.weights).map(|(a, b)| a * b).sum());
    }
    // softmax: the same ranking, scores on a 0..1 probability scale
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = scores.iter().map(|s| (w.temperature * (s - max)).exp()).collect();
    let total: f32 = exp.iter().sum();
    docs.iter().zip(exp).map(|(&doc, e)| Hit { doc, score: if total > 0.0 { e / total } else { 0.0 } }).collect()
}

#[cfg(test)]
#[path = "learned_tests.rs"]
mod tests;
