use super::*;
use crate::SearchDoc;

fn index(names: &[&str]) -> SearchIndex {
    SearchIndex::build(
        names
            .iter()
            .map(|n| SearchDoc {
                name: n.to_string(),
                aliases: vec![],
                domain: "mcp".into(),
                description: format!("{n} tool"),
                prompt_snippet: None,
                phrasings: Vec::new(),
                examples: Vec::new(),
                params: vec![],
                server: None,
            })
            .collect(),
    )
}

#[test]
fn confident_keeps_the_top_and_those_within_the_margin() {
    assert_eq!(confident(&[], 0.2), 0);
    assert_eq!(confident(&[5.0], 0.2), 1);
    assert_eq!(confident(&[10.0, 9.0, 8.0, 7.9, 3.0], 0.2), 3);
    assert_eq!(confident(&[10.0, 9.0], 0.0), 1);
    // a margin outside 0..1 is clamped, never loads past a lower score first
    assert_eq!(confident(&[10.0, 1.0, 9.0], 5.0), 3);
    assert_eq!(confident(&[10.0, 10.0, 2.0], 0.0), 2);
    // below 0 the bar is still under the top: a hit within a quarter of the
    // top's size loads beside it, one further off does not
    assert_eq!(confident(&[-0.4, -0.45, -0.6], 0.25), 2);
    assert_eq!(confident(&[-0.4, -0.45, -0.49], 0.25), 3);
    assert_eq!(confident(&[0.0, 0.0, -0.1], 0.25), 2);
}

#[test]
fn fusion_needs_both_rankings_to_agree_and_breaks_ties_by_name() {
    let idx = index(&["alpha", "bravo", "charlie", "delta"]);
    let lexical = [Hit { doc: 0, score: 4.0 }, Hit { doc: 1, score: 3.9 }];
    let semantic = [0.1, 0.9, 0.2, 0.0];
    let p = FusionParams { pool: 4, ..FusionParams::default() };
    let hits = fuse(&idx, "alpha bravo", &lexical, &semantic, &p, 4, &|_| true);
    assert_eq!(hits[0].doc, 1, "{hits:?}");
    assert_eq!(hits.len(), 4);
    // equal fused scores: name order
    let tie = fuse(&idx, "", &[], &[0.5, 0.5, 0.5, 0.5], &p, 4, &|_| true);
    assert_eq!(tie.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    // keep filters both rankings
    let kept = fuse(&idx, "alpha bravo", &lexical, &semantic, &p, 4, &|d| d != 1);
    assert!(kept.iter().all(|h| h.doc != 1));
    assert_eq!(kept[0].doc, 0);
}

#[test]
fn a_lexical_match_that_explains_little_of_the_request_yields_to_meaning() {
    let idx = SearchIndex::build(vec![
        SearchDoc {
            name: "weather_forecast".into(),
            description: "Forecast for a city.".into(),
            ..SearchDoc::default()
        },
        SearchDoc { name: "city_guide".into(), description: "Sights of a city.".into(), ..SearchDoc::default() },
    ]);
    let p = FusionParams { pool: 2, ..FusionParams::default() };
    // semantic prefers the forecast a little; lexically only `city` matches,
    // and the guide has it twice
    let semantic = [0.62, 0.55];
    let everyday = "will it rain in my city tomorrow";
    let lexical = idx.search(everyday, 2, &|_| true);
    assert_eq!(lexical[0].doc, 1, "{lexical:?}");
    let shares = idx.match_share(everyday, &[0, 1]);
    assert!(shares[1] < 0.5, "{shares:?}");
    assert_eq!(fuse(&idx, everyday, &lexical, &semantic, &p, 2, &|_| true)[0].doc, 0);
    // with the share ignored, the lexical winner keeps its lead
    let plain = FusionParams { share_pow: 0.0, ..p };
    assert_eq!(fuse(&idx, everyday, &lexical, &semantic, &plain, 2, &|_| true)[0].doc, 1);
    // a request in the catalog's words: the lexical match explains it all
    let literal = "city guide sights";
    assert_eq!(idx.match_share(literal, &[1]), vec![1.0]);
    let lexical = idx.search(literal, 2, &|_| true);
    assert_eq!(fuse(&idx, literal, &lexical, &semantic, &p, 2, &|_| true)[0].doc, 1);
}

#[test]
fn meaning_weighs_more_when_the_best_lexical_match_covers_little_of_the_request() {
    let idx = index(&["alpha", "bravo", "charlie"]);
    // lexical: alpha well ahead; semantic: bravo best, alpha at the floor
    let lexical = [Hit { doc: 0, score: 4.0 }, Hit { doc: 1, score: 2.0 }];
    let semantic = [0.1, 0.9, 0.1];
    let p = FusionParams { pool: 3, w_semantic: 0.3, share_pow: 0.0, semantic_pow: 1.0, ..FusionParams::default() };
    let covered = "alpha";
    let wordy = "alpha zulu yankee xray";
    assert_eq!(idx.match_share(covered, &[0]), vec![1.0]);
    assert!(idx.match_share(wordy, &[0])[0] < 0.6, "{:?}", idx.match_share(wordy, &[0]));
    let first = |q: &str, p: &FusionParams| fuse(&idx, q, &lexical, &semantic, p, 3, &|_| true)[0].doc;
    // the request is all in alpha's words: the lexical lead holds
    assert_eq!(first(covered, &p), 0);
    // most of the request is in other words: meaning decides
    assert_eq!(first(wordy, &p), 1);
    // a constant semantic weight cannot tell the two requests apart
    let constant = FusionParams { share_lean: 0.0, ..p };
    assert_eq!(first(covered, &constant), first(wordy, &constant));
}

#[test]
fn a_semantic_score_counts_raised_to_semantic_pow() {
    let idx = index(&["alpha", "bravo", "charlie"]);
    // no lexical match: the weight is w_semantic * share_lean
    let p = FusionParams { pool: 3, w_semantic: 0.2, share_lean: 1.5, semantic_pow: 2.0, ..FusionParams::default() };
    let hits = fuse(&idx, "zulu", &[], &[0.0, 1.0, 0.5], &p, 3, &|_| true);
    let score = |d: usize| hits.iter().find(|h| h.doc == d).map(|h| h.score);
    assert_eq!(score(1), Some(0.3));
    assert!((score(2).unwrap_or(0.0) - 0.3 * 0.25).abs() < 1e-6, "{hits:?}");
    assert_eq!(score(0), Some(0.0));
}

#[test]
fn rrf_fusion_is_deterministic() {
    let idx = index(&["a", "b", "c"]);
    let p = FusionParams { method: FusionMethod::Rrf, pool: 3, ..FusionParams::default() };
    let lexical = [Hit { doc: 2, score: 1.0 }, Hit { doc: 0, score: 0.5 }];
    let a = fuse(&idx, "c a", &lexical, &[0.3, 0.2, 0.9], &p, 3, &|_| true);
    let b = fuse(&idx, "c a", &lexical, &[0.3, 0.2, 0.9], &p, 3, &|_| true);
    assert_eq!(a, b);
    assert_eq!(a[0].doc, 2);
}

#[test]
fn fusion_params_set_by_name() {
    let mut p = FusionParams::default();
    p.set("w_semantic", 0.7).unwrap();
    p.set("rrf", 1.0).unwrap();
    p.set("share_lean", 0.0).unwrap();
    p.set("semantic_pow", 2.0).unwrap();
    assert_eq!((p.share_lean, p.semantic_pow), (0.0, 2.0));
    assert_eq!(p.w_semantic, 0.7);
    assert_eq!(p.method, FusionMethod::Rrf);
    assert!(p.set("nope", 1.0).is_err());
    assert_eq!(Ranking::Fused.as_str(), "fused");
}

#[test]
fn a_semantic_match_counts_less_when_the_tool_takes_no_value_of_the_requests_kind() {
    let idx = SearchIndex::build(vec![
        SearchDoc { name: "edit_file".into(), description: "Replace text in a file.".into(), ..SearchDoc::default() },
        SearchDoc { name: "configure".into(), description: "Set the runtime timeout.".into(), ..SearchDoc::default() },
    ]);
    let q = "bump the timeout in settings.py";
    let lexical = idx.search(q, 30, &|_| true);
    // meaning prefers the tool without a file
    let semantic = [0.50, 0.60];
    let p = FusionParams { pool: 2, ..FusionParams::default() };
    let score = |p: &FusionParams, d: usize| {
        fuse(&idx, q, &lexical, &semantic, p, 2, &|_| true).iter().find(|h| h.doc == d).map_or(0.0, |h| h.score)
    };
    let off = FusionParams { kind_miss: 1.0, ..p };
    assert!(score(&p, 1) < score(&off, 1), "{} {}", score(&p, 1), score(&off, 1));
    assert_eq!(score(&p, 0), score(&off, 0));
    // no value in the request: no change
    assert_eq!(idx.value_kind_fit("bump the timeout", &[0, 1]), None);
    assert_eq!(idx.value_kind_fit(q, &[0, 1]), Some(vec![true, false]));
}

/// Over a catalog the prior covers, its log: a confident prior sinks the
/// tools it rules out, by a bounded amount. Beside tools it does not know,
/// its probability: it lifts its own and sinks nothing.
#[test]
fn the_prior_adds_its_log_over_its_own_tools_and_a_probability_beside_others() {
    let params = FusionParams { w_prior: 0.5, w_prior_log: 0.15, ..FusionParams::default() };
    let own = PriorScores { per_doc: vec![Some(0.9), Some(0.001), Some(0.0)] };
    assert!(own.covers_catalog());
    let gain = |p: &PriorScores, doc| p.gain(doc, &params, PriorScores::adds_log(Some(p), &params));
    assert!((gain(&own, 0) - 0.15 * (0.9f32 + PRIOR_FLOOR).ln()).abs() < 1e-6);
    assert!(gain(&own, 1) < gain(&own, 0));
    assert!((gain(&own, 2) - 0.15 * PRIOR_FLOOR.ln()).abs() < 1e-6, "bounded below");
    let mixed = PriorScores { per_doc: vec![Some(0.9), Some(0.001), None] };
    assert!(!mixed.covers_catalog());
    assert!((gain(&mixed, 0) - 0.45).abs() < 1e-6);
    assert!(gain(&mixed, 1) >= 0.0, "beside other servers' tools nothing sinks");
    assert_eq!(gain(&mixed, 2), 0.0);
    assert_eq!(gain(&mixed, 7), 0.0, "out of range is unknown, never a panic");
    // without a log weight, the probability everywhere
    let linear = FusionParams { w_prior_log: 0.0, ..params };
    assert!((own.gain(0, &linear, PriorScores::adds_log(Some(&own), &linear)) - 0.45).abs() < 1e-6);
}

/// Two tools, "alpha" ahead of "bravo" in the lexical ranking.
fn alpha_first_lexically() -> (SearchIndex, [Hit; 2]) {
    (index(&["alpha", "bravo"]), [Hit { doc: 0, score: 4.0 }, Hit { doc: 1, score: 2.0 }])
}

/// The log lets a confident prior overturn a lexical match in words the
/// request happens to share with another tool; a probability at its weight
/// could not.
#[test]
fn a_confident_prior_overturns_a_shared_word_through_its_log() {
    let (idx, lexical) = alpha_first_lexically();
    let similarity = [0.5, 0.5];
    let prior = PriorScores { per_doc: vec![Some(0.001), Some(0.95)] };
    let scores = SemanticScores { similarity: &similarity, prior: Some(&prior) };
    let first = |p: &FusionParams| fuse_scores(&idx, "alpha", &lexical, scores, p, 2, &|_| true)[0].doc;
    let linear = FusionParams { pool: 2, w_prior: 0.5, w_prior_log: 0.0, ..FusionParams::default() };
    let log = FusionParams { pool: 2, w_prior: 0.5, w_prior_log: 0.15, ..FusionParams::default() };
    assert_eq!(first(&linear), 0);
    assert_eq!(first(&log), 1);
}

/// Scores that carry the prior's log spread wider, so a fused ranking over
/// quiver's own tools loads with a wider margin; beside other servers' tools
/// (a probability added), or with the learned ranker or no log weight, the
/// usual one.
#[test]
fn the_load_margin_widens_only_where_the_prior_adds_its_log() {
    let params = FusionParams::default();
    let own = PriorScores { per_doc: vec![Some(0.9), Some(0.1)] };
    let mixed = PriorScores { per_doc: vec![Some(0.9), None] };
    assert!(PriorScores::adds_log(Some(&own), &params));
    assert!(!PriorScores::adds_log(Some(&mixed), &params));
    assert!(!PriorScores::adds_log(None, &params));
    assert!(!PriorScores::adds_log(Some(&own), &FusionParams { w_prior_log: 0.0, ..params }));
    let learned = FusionParams { method: FusionMethod::Learned, ..params };
    assert!(!PriorScores::adds_log(Some(&own), &learned));
    assert!(confident_margin(Ranking::Fused, true) > confident_margin(Ranking::Fused, false));
    assert_eq!(confident_margin(Ranking::Lexical, true), confident_margin(Ranking::Lexical, false));
    // the same spread loads two tools with the log's margin, one without
    let scores = [0.6, 0.3, -0.5];
    assert_eq!(confident(&scores, confident_margin(Ranking::Fused, true)), 2);
    assert_eq!(confident(&scores, confident_margin(Ranking::Fused, false)), 1);
}

/// `adds_log` says what `fuse_scores` does: over a catalog the prior covers,
/// the log moves the scores off the probability's; beside a tool it does not
/// know, or with the learned ranker, the log weight changes nothing.
#[test]
fn adds_log_agrees_with_what_fusion_adds() {
    let (idx, lexical) = alpha_first_lexically();
    let similarity = [0.5, 0.4];
    let own = PriorScores { per_doc: vec![Some(0.3), Some(0.6)] };
    let mixed = PriorScores { per_doc: vec![Some(0.3), None] };
    let score = |p: &PriorScores, params: &FusionParams| -> Vec<f32> {
        let scores = SemanticScores { similarity: &similarity, prior: Some(p) };
        let mut hits = fuse_scores(&idx, "alpha", &lexical, scores, params, 2, &|_| true);
        hits.sort_by_key(|h| h.doc);
        hits.iter().map(|h| h.score).collect()
    };
    for method in [FusionMethod::Score, FusionMethod::Learned] {
        let log = FusionParams { pool: 2, method, ..FusionParams::default() };
        let linear = FusionParams { w_prior_log: 0.0, ..log };
        for prior in [&own, &mixed] {
            let moved = score(prior, &log) != score(prior, &linear);
            assert_eq!(moved, PriorScores::adds_log(Some(prior), &log), "{method:?} {prior:?}");
        }
    }
}
