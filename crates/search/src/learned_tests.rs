use super::*;
use crate::{FusionMethod, FusionParams, SearchDoc, fuse};

#[test]
fn the_embedded_weights_parse_and_name_every_feature() {
    let w = LearnedWeights::parse(WEIGHTS_JSON).unwrap();
    assert!(w.temperature > 0.0);
    assert_eq!(LearnedWeights::embedded(), Some(&w));
}

#[test]
fn a_weights_file_missing_or_adding_a_feature_is_refused_by_name() {
    let err = LearnedWeights::parse(r#"{"temperature": 20, "weights": {"lexical": 1}}"#).unwrap_err();
    assert!(err.contains("\"lexical_shared\""), "{err}");
    let mut all: serde_json::Map<String, serde_json::Value> =
        FEATURES.iter().map(|f| (f.to_string(), 0.5.into())).collect();
    all.insert("typo".into(), 1.into());
    let text = serde_json::json!({"temperature": 20, "weights": all}).to_string();
    assert!(LearnedWeights::parse(&text).unwrap_err().contains("\"typo\""));
}

fn doc(name: &str, description: &str) -> SearchDoc {
    SearchDoc {
        name: name.into(),
        aliases: vec![],
        domain: "mcp".into(),
        description: description.into(),
        prompt_snippet: None,
        phrasings: Vec::new(),
        examples: Vec::new(),
        params: vec![],
        server: None,
    }
}

#[test]
fn learned_scores_are_probabilities_over_both_pools() {
    let idx = SearchIndex::build(vec![
        doc("read_file", "read a file"),
        doc("fetch_url", "download a web page"),
        doc("git_status", "working tree state"),
    ]);
    let lexical = idx.search("read the file", 30, &|_| true);
    let semantic = [0.6, 0.2, 0.5];
    let p = FusionParams { method: FusionMethod::Learned, ..FusionParams::default() };
    let hits = fuse(&idx, "read the file", &lexical, &semantic, &p, 5, &|_| true);
    // every doc is in the semantic pool; the lexical and semantic best agree
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[0].doc, 0, "{hits:?}");
    let total: f32 = hits.iter().map(|h| h.score).sum();
    assert!((total - 1.0).abs() < 1e-4, "{hits:?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

/// The hand-set weights through the learned path rank as score fusion does:
/// the features express it exactly (train.py's parity check, here in Rust).
#[test]
fn hand_set_weights_as_features_rank_like_score_fusion() {
    let idx = SearchIndex::build(vec![
        doc("alpha", "list the alpha items"),
        doc("bravo", "show bravo details for an item"),
        doc("charlie", "delete a charlie"),
        doc("delta", "items of delta"),
    ]);
    let q = "show the items";
    let lexical = idx.search(q, 30, &|_| true);
    let semantic = [0.31, 0.42, 0.05, 0.4];
    let hand = FusionParams { pool: 4, ..FusionParams::default() };
    let by_hand: Vec<usize> = fuse(&idx, q, &lexical, &semantic, &hand, 4, &|_| true).iter().map(|h| h.doc).collect();
    let mut weights = [0f32; FEATURES.len()];
    weights[1] = hand.w_lexical;
    weights[4] = hand.w_semantic;
    let w = LearnedWeights { weights, temperature: 20.0 };
    let lex: Vec<&Hit> = lexical.iter().take(4).collect();
    let mut sem: Vec<Hit> = semantic.iter().enumerate().map(|(doc, &score)| Hit { doc, score }).collect();
    sem.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut learned = fuse_learned(&idx, q, &lex, &sem, &semantic, &w);
    learned.sort_by(|a, b| b.score.total_cmp(&a.score).then(idx.name_order(a.doc, b.doc)));
    assert_eq!(learned.iter().map(|h| h.doc).collect::<Vec<_>>(), by_hand);
}
