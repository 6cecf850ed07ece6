//! Learned fusion: a linear re-ranker over the hand-set fusion's top
//! candidates (`depth`, 10). Each candidate's features are the hand-set
//! fused score and rank, the lexical and semantic scores and ranks, the match
//! share, the share matched in each field group (name, description,
//! parameters, example requests), the lexical ranker's rule signals
//! (`signals.rs`: what each rule added, which penalty it took) and the
//! request's spans and kinds crossed with the lexical and semantic scores.
//! The weights are trained on the dev sets by `bench/search/learn/train.py`
//! (the smoothed top-1 error of each query's deciding pair, pure Python, L2
//! towards the hand-set ranking: weight 1 on `hand`, 0 elsewhere, which
//! reproduces it rank for rank) from the feature vectors [`features`] writes
//! (the lab's `lab_eval --features FILE`), so training and ranking share one
//! feature computation; the weights are embedded from `learned_fusion.json`.
//! Not the default: under cross-validation on the dev sets it does not beat
//! the hand-set fusion (`bench/search/README.md`, learned fusion v2).

use std::sync::OnceLock;

use crate::signals::{RULES, flag};
use crate::{Hit, SearchIndex};

/// The feature names, in the order of the weight vector.
pub const FEATURES: [&str; 47] = [
    "hand",
    "hand_rank",
    "lexical",
    "lexical_rank",
    "share",
    "semantic",
    "cosine_gap",
    "semantic_rank",
    "bm25",
    "name_coverage",
    "name_score",
    "action_miss",
    "sibling_miss",
    "one_of_several",
    "list_for_one",
    "kind_miss",
    "field_name",
    "field_description",
    "field_params",
    "field_phrase",
    "rule_intent",
    "rule_value_kind",
    "rule_completion",
    "rule_file_name",
    "rule_command",
    "rule_file",
    "rule_pattern",
    "rule_tool_named",
    "rule_look_at",
    "lexical_x_best_share",
    "semantic_x_best_share",
    "lexical_x_pasted",
    "semantic_x_pasted",
    "lexical_x_tool_purpose",
    "semantic_x_tool_purpose",
    "lexical_x_payload",
    "semantic_x_payload",
    "lexical_x_command",
    "semantic_x_command",
    "lexical_x_file",
    "semantic_x_file",
    "lexical_x_several",
    "semantic_x_several",
    "lexical_x_instance",
    "semantic_x_instance",
    "lexical_x_clause",
    "semantic_x_clause",
];

/// Number of features.
pub const NF: usize = FEATURES.len();

/// Index of the first field-share feature (`field_name`), of the first rule
/// feature (`rule_intent`) and of the first flag-crossed feature
/// (`lexical_x_pasted`).
const FIELD_AT: usize = 16;
const RULE_AT: usize = 20;
const FLAG_AT: usize = 31;

const WEIGHTS_JSON: &str = include_str!("learned_fusion.json");

/// The trained model: one weight per feature, and how many of the hand-set
/// fusion's candidates it re-ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedWeights {
    pub weights: [f32; NF],
    pub depth: usize,
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
        let mut weights = [0f32; NF];
        for (w, name) in weights.iter_mut().zip(FEATURES) {
            *w = map
                .get(name)
                .and_then(serde_json::Value::as_f64)
                .ok_or(format!("learned fusion weights: no {name:?}"))? as f32;
        }
        let depth = v["depth"].as_u64().filter(|&d| d > 0).ok_or("learned fusion weights: no positive \"depth\"")?;
        Ok(LearnedWeights { weights, depth: depth as usize })
    }

    /// The hand-set ranking as weights: 1 on `hand`, 0 elsewhere.
    pub fn hand(depth: usize) -> LearnedWeights {
        let mut weights = [0f32; NF];
        weights[0] = 1.0;
        LearnedWeights { weights, depth }
    }

    /// The weights embedded in this build (`None` only if the file is broken,
    /// which a unit test rules out; the caller then fuses by hand-set weights).
    pub fn embedded() -> Option<&'static LearnedWeights> {
        static W: OnceLock<Option<LearnedWeights>> = OnceLock::new();
        W.get_or_init(|| LearnedWeights::parse(WEIGHTS_JSON).ok()).as_ref()
    }
}

/// The candidates' pools as `fuse` took them: the lexical and the semantic
/// top `pool` (best first; `sem` holds cosines) and every doc's cosine.
pub(crate) struct Pools<'a> {
    pub lex: &'a [&'a Hit],
    pub sem: &'a [Hit],
    pub semantic: &'a [f32],
}

/// The features of each of `hand` (the hand-set fusion's candidates, best first).
pub(crate) fn features(index: &SearchIndex, query: &str, hand: &[Hit], pools: &Pools) -> Vec<[f32; NF]> {
    let Pools { lex, sem, semantic } = pools;
    let docs: Vec<usize> = hand.iter().map(|h| h.doc).collect();
    let mut share_docs = docs.clone();
    share_docs.extend(lex.first().map(|h| h.doc));
    let shares = index.match_share(query, &share_docs);
    let best_share =
        if lex.first().is_some_and(|h| h.score > 0.0) { shares.last().copied().unwrap_or(0.0) } else { 0.0 };
    let (flags, signals) = index.signals(query, &docs);
    let fit = index.value_kind_fit(query, &docs);
    let hand_top = hand.first().map_or(0.0, |h| h.score);
    let lex_top = lex.first().map_or(0.0, |h| h.score);
    let (best_cos, floor) = match (sem.first(), sem.last()) {
        (Some(b), Some(f)) => (b.score, f.score),
        _ => (0.0, 0.0),
    };
    let span = best_cos - floor;
    let max_of = |f: &dyn Fn(&crate::signals::DocSignals) -> f32| signals.iter().map(f).fold(0f32, f32::max);
    let max_bm25 = max_of(&|s| s.bm25);
    let max_name = max_of(&|s| s.name_score);
    let rel = |x: f32, max: f32| if max > 0.0 { x / max } else { 0.0 };
    let bit = |b: bool| if b { 1.0 } else { 0.0 };
    hand.iter()
        .enumerate()
        .map(|(i, h)| {
            let d = h.doc;
            let lr = lex.iter().position(|x| x.doc == d);
            let sr = sem.iter().position(|x| x.doc == d);
            let cos = semantic.get(d).copied().unwrap_or(floor);
            let lexn = lr.map_or(0.0, |r| rel(lex[r].score, lex_top));
            let semn = match (sr, span > 0.0) {
                (Some(_), true) => ((cos - floor) / span).max(0.0),
                (Some(_), false) => 1.0,
                (None, _) => 0.0,
            };
            let s = &signals[i];
            let mut f = [0f32; NF];
            let head = [
                rel(h.score, hand_top),
                1.0 / (1.0 + i as f32),
                lexn,
                lr.map_or(0.0, |r| 1.0 / (1.0 + r as f32)),
                shares[i],
                semn,
                cos - best_cos,
                sr.map_or(0.0, |r| 1.0 / (1.0 + r as f32)),
                rel(s.bm25, max_bm25),
                s.coverage,
                rel(s.name_score, max_name),
                bit(s.action_miss),
                bit(s.sibling_miss),
                bit(s.one_of_several),
                bit(s.list_for_one),
                bit(fit.as_ref().is_some_and(|f| !f[i])),
            ];
            f[..FIELD_AT].copy_from_slice(&head);
            f[FIELD_AT..RULE_AT].copy_from_slice(&s.fields);
            for (k, c) in s.rules.iter().enumerate().take(RULES.len()) {
                f[RULE_AT + k] = rel(*c, max_bm25);
            }
            f[FLAG_AT - 2] = lexn * best_share;
            f[FLAG_AT - 1] = semn * best_share;
            for (k, b) in flag::ALL.iter().enumerate() {
                if flags & b != 0 {
                    f[FLAG_AT + 2 * k] = lexn;
                    f[FLAG_AT + 2 * k + 1] = semn;
                }
            }
            f
        })
        .collect()
}

/// `hand` re-ranked by the learned score. A hit's score keeps the hand-set
/// fusion's scale (the top hit keeps the hand-set top score, the others
/// their learned score relative to it), so [`crate::confident`]'s margin
/// reads as it does for the hand-set fusion; the map is increasing, so the
/// order is the learned score's.
pub(crate) fn rerank(hand: &[Hit], feats: &[[f32; NF]], w: &LearnedWeights) -> Vec<Hit> {
    let learned: Vec<f32> = feats.iter().map(|f| f.iter().zip(&w.weights).map(|(a, b)| a * b).sum()).collect();
    let top = hand.first().map_or(1.0, |h| h.score).max(f32::MIN_POSITIVE);
    let best = learned.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // above 0: a share of the best (as the hand-set scores are); at or below
    // 0: a small positive value that still falls with the score
    const LOW: f32 = 1e-3;
    let scale = |s: f32| {
        if s > 0.0 && best > 0.0 { (LOW + s / best) / (1.0 + LOW) } else { LOW * s.min(0.0).exp() / (1.0 + LOW) }
    };
    hand.iter().zip(learned).map(|(h, s)| Hit { doc: h.doc, score: top * scale(s) }).collect()
}

#[cfg(test)]
#[path = "learned_tests.rs"]
mod tests;
