use super::*;
use crate::query::tests::doc;
use crate::{FusionMethod, FusionParams, fuse, learned_candidates};

#[test]
fn the_embedded_weights_parse_and_name_every_feature() {
    let w = LearnedWeights::parse(WEIGHTS_JSON).unwrap();
    assert!(w.depth >= 5);
    assert_eq!(LearnedWeights::embedded(), Some(&w));
}

#[test]
fn a_weights_file_missing_or_adding_a_feature_is_refused_by_name() {
    let err = LearnedWeights::parse(r#"{"depth": 10, "weights": {"hand": 1}}"#).unwrap_err();
    assert!(err.contains("\"hand_rank\""), "{err}");
    let mut all: serde_json::Map<String, serde_json::Value> =
        FEATURES.iter().map(|f| (f.to_string(), 0.5.into())).collect();
    all.insert("typo".into(), 1.into());
    let text = serde_json::json!({"depth": 10, "weights": all}).to_string();
    assert!(LearnedWeights::parse(&text).unwrap_err().contains("\"typo\""));
    all.remove("typo");
    let text = serde_json::json!({"depth": 0, "weights": all}).to_string();
    assert!(LearnedWeights::parse(&text).unwrap_err().contains("depth"));
}

fn catalog() -> SearchIndex {
    SearchIndex::build(vec![
        doc("alpha", "list the alpha items"),
        doc("bravo", "show bravo details for an item"),
        doc("charlie", "delete a charlie"),
        doc("delta", "items of delta"),
        doc("read_file", "read a file"),
    ])
}

/// The candidates with their features, as the trainer sees them, and the
/// same re-ranked by `w`.
fn ranked(idx: &SearchIndex, q: &str, semantic: &[f32], w: &LearnedWeights) -> (Vec<usize>, Vec<usize>) {
    let lexical = idx.search(q, 30, &|_| true);
    let hand = FusionParams::default();
    let by_hand: Vec<usize> = fuse(idx, q, &lexical, semantic, &hand, 5, &|_| true).iter().map(|h| h.doc).collect();
    let cands = learned_candidates(idx, q, &lexical, semantic, &hand, w.depth);
    let hits: Vec<Hit> =
        cands.iter().enumerate().map(|(i, (doc, _))| Hit { doc: *doc, score: 1.0 / (1.0 + i as f32) }).collect();
    let feats: Vec<[f32; NF]> = cands.iter().map(|(_, f)| *f).collect();
    let mut learned = rerank(&hits, &feats, w);
    learned.sort_by(|a, b| b.score.total_cmp(&a.score).then(idx.name_order(a.doc, b.doc)));
    (by_hand, learned.iter().map(|h| h.doc).collect())
}

/// Weight 1 on `hand` and 0 elsewhere is the hand-set fusion, rank for rank
/// (the trainer's starting point and the pull of its L2 term).
#[test]
fn the_hand_weights_rank_as_score_fusion_does() {
    let idx = catalog();
    let semantic = [0.31, 0.42, 0.05, 0.4, 0.2];
    let (by_hand, learned) = ranked(&idx, "show the items", &semantic, &LearnedWeights::hand(10));
    assert_eq!(learned, by_hand);
    let lexical = idx.search("show the items", 30, &|_| true);
    let cands = learned_candidates(&idx, "show the items", &lexical, &semantic, &FusionParams::default(), 10);
    // the hand-set top is 1 on `hand` and `hand_rank`; ranks fall as 1 / (1 + rank)
    assert_eq!((cands[0].1[0], cands[0].1[1]), (1.0, 1.0));
    assert!(cands.iter().enumerate().all(|(i, (_, f))| (f[1] - 1.0 / (1.0 + i as f32)).abs() < 1e-6));
}

/// A weight on a feature moves the docs that have it: here the semantic
/// score alone decides.
#[test]
fn a_feature_weight_reorders_the_candidates() {
    let idx = catalog();
    let semantic = [0.1, 0.2, 0.9, 0.3, 0.15];
    let mut w = LearnedWeights::hand(10);
    w.weights[0] = 0.0;
    w.weights[FEATURES.iter().position(|f| *f == "semantic").unwrap()] = 1.0;
    let (_, learned) = ranked(&idx, "show the items", &semantic, &w);
    assert_eq!(learned, [2, 3, 1, 4, 0]);
}

#[test]
fn rerank_keeps_the_top_score_and_an_increasing_map() {
    let hand = [Hit { doc: 0, score: 0.8 }, Hit { doc: 1, score: 0.6 }, Hit { doc: 2, score: 0.1 }];
    let mut feats = [[0f32; NF]; 3];
    for (f, x) in feats.iter_mut().zip([0.5, 1.0, -2.0]) {
        f[0] = x;
    }
    let out = rerank(&hand, &feats, &LearnedWeights::hand(10));
    // doc 1 is best now and takes the hand-set top score; a negative score stays positive and last
    assert!((out[1].score - 0.8).abs() < 1e-6, "{out:?}");
    assert!(out[0].score < out[1].score && out[2].score < out[0].score && out[2].score > 0.0, "{out:?}");
}

#[test]
fn the_learned_method_returns_at_most_limit_hits_best_first() {
    let idx = catalog();
    let semantic = [0.31, 0.42, 0.05, 0.4, 0.2];
    let lexical = idx.search("show the items", 30, &|_| true);
    let p = FusionParams { method: FusionMethod::Learned, ..FusionParams::default() };
    let hits = fuse(&idx, "show the items", &lexical, &semantic, &p, 3, &|_| true);
    assert_eq!(hits.len(), 3);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{hits:?}");
    // `keep` still filters
    let hits = fuse(&idx, "show the items", &lexical, &semantic, &p, 5, &|d| d != 1);
    assert!(hits.iter().all(|h| h.doc != 1));
}
