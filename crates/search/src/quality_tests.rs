//! The search-quality floor CI enforces: every dev and sanity set through the
//! lexical ranker, failing below per-set top-1 / top-5 / MRR floors. Ranking
//! is deterministic, so the floors sit just under today's numbers (a margin of
//! about one query); a real regression fails, a reordering of ties does not.
//! Every set is a copy in the repository (`bench/search`, sources and licences
//! in `bench/search/data/README.md`), so the floors run on a fresh clone.

use std::path::PathBuf;

use crate::bench::{self as b, BenchQuery};
use crate::{SearchDoc, SearchIndex};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The catalogs and queries copied from their public sources.
fn data() -> PathBuf {
    root().join("bench/search/data")
}

/// (set, top1, top5, mrr) floors.
fn check(set: &str, index: &SearchIndex, queries: &[BenchQuery], floor: (f64, f64, f64)) -> Option<String> {
    let m = b::evaluate(index, queries, 5);
    eprintln!("{set:9} top1={:.3} top5={:.3} mrr={:.3} n={}", m.top1, m.topk, m.mrr, m.n);
    (m.top1 < floor.0 || m.topk < floor.1 || m.mrr < floor.2)
        .then(|| format!("{set}: top1={:.3} top5={:.3} mrr={:.3} below the floor {floor:?}", m.top1, m.topk, m.mrr))
}

fn catalog(dir: &std::path::Path, names: &[&str]) -> Vec<SearchDoc> {
    names.iter().flat_map(|n| b::load_catalog(&dir.join("catalogs").join(n)).unwrap()).collect()
}

#[test]
fn lexical_quality_stays_above_the_floors() {
    let here = root().join("bench/search");
    let mut failures = Vec::new();
    let bfcl = SearchIndex::build(b::load_catalog(&here.join("generalization/bfcl-live.json")).unwrap());
    let bq = b::load_queries(&here.join("generalization/bfcl-live.jsonl")).unwrap();
    failures.extend(check("bfcl", &bfcl, &bq, FLOOR_BFCL));
    // The frozen check set: a floor only; no change may cite its numbers.
    let seal = SearchIndex::build(b::load_catalog(&here.join("frozen/seal-tools.json")).unwrap());
    let sq = b::load_queries(&here.join("frozen/seal-tools.jsonl")).unwrap();
    failures.extend(check("seal", &seal, &sq, FLOOR_SEAL));
    for (set, file, floor) in
        [("authored", "dev/bfcl-authored", FLOOR_AUTHORED), ("multiturn", "dev/bfcl-multiturn", FLOOR_MULTITURN)]
    {
        let index = SearchIndex::build(b::load_catalog(&here.join(format!("{file}.json"))).unwrap());
        let queries = b::load_queries(&here.join(format!("{file}.jsonl"))).unwrap();
        failures.extend(check(set, &index, &queries, floor));
    }
    let dir = data();
    let aq = b::load_queries(&dir.join("queries/azure-mcp.jsonl")).unwrap();
    let gq = b::load_queries(&here.join("queries/github-sanity.jsonl")).unwrap();
    let lq = b::load_queries(&here.join("queries/livemcp-sanity.jsonl")).unwrap();
    let azure = SearchIndex::build(catalog(&dir, &["azure-mcp.json"]));
    let mixed = SearchIndex::build(catalog(&dir, &["azure-mcp.json", "github-mcp.json", "livemcp.json"]));
    failures.extend(check("azure.odd", &azure, &b::split(aq.clone(), true), FLOOR_AZURE_ODD));
    failures.extend(check("azure.even", &azure, &b::split(aq.clone(), false), FLOOR_AZURE_EVEN));
    failures.extend(check("mixed", &mixed, &aq, FLOOR_MIXED));
    failures.extend(check("gh.mix", &mixed, &gq, FLOOR_GH));
    failures.extend(check("live.mix", &mixed, &lq, FLOOR_LIVE));
    assert!(failures.is_empty(), "search quality regressed:\n{}", failures.join("\n"));
}

// BFCL live is a dev set (earlier ranking decisions had cited it); the frozen
// check set is Seal-Tools (FLOOR_SEAL).
// Floors: today's lexical numbers (after the vocabulary audit) minus one query
// per set (a set loses two queries before it fails). Raise them when the ranker improves; never lower one to make
// a change pass without saying why in the commit.
// bfcl lowered 0.592 -> 0.590 by the literal-value weight (w_literal): top-1
// 0.594 -> 0.591 (4 of 1311), top-5 0.882 -> 0.886; kept for its gains elsewhere.
// bfcl lowered 0.590 -> 0.589 by the URL value kind (w_value_kind): top-1
// 0.591 -> 0.590 (one request naming an image URL now ranks a URL fetcher
// over the image analyser; several BFCL tools take URLs).
const FLOOR_BFCL: (f64, f64, f64) = (0.589, 0.884, 0.703);
// The third-party dev sets (bench/search/dev, BFCL's authored and multi-turn
// categories): 0.756 / 0.951 / 0.833 and 0.561 / 0.870 / 0.684 when added.
// The frozen Seal-Tools check set (bench/search/frozen): 0.963 / 0.997 / 0.978
// lexical when it was frozen; a floor only, never a reason for a change.
const FLOOR_SEAL: (f64, f64, f64) = (0.955, 0.99, 0.97);
// authored lowered 0.755 / 0.832 -> 0.754 / 0.831 by the snake_case literal
// rule: lexical top-1 0.756 -> 0.755 (1 of 1000), while azure and
// mixed gained one each; fused authored unchanged (0.790 / 0.969).
const FLOOR_AUTHORED: (f64, f64, f64) = (0.754, 0.950, 0.831);
// After the command-line and relative-clause rules: multi-turn 0.560 / 0.880 /
// 0.686, azure odd 0.940 / 0.988 / 0.959, even 0.944 / 0.992 / 0.965, mixed
// 0.942 / 0.982 / 0.959, live.mix 0.568 / 0.811 / 0.663; raised to those less
// about one query (multi-turn's top-1 floor stays).
const FLOOR_MULTITURN: (f64, f64, f64) = (0.559, 0.877, 0.684);
const FLOOR_AZURE_ODD: (f64, f64, f64) = (0.936, 0.984, 0.955);
const FLOOR_AZURE_EVEN: (f64, f64, f64) = (0.940, 0.988, 0.961);
const FLOOR_MIXED: (f64, f64, f64) = (0.940, 0.980, 0.957);
const FLOOR_GH: (f64, f64, f64) = (0.714, 0.857, 0.785);
const FLOOR_LIVE: (f64, f64, f64) = (0.54, 0.783, 0.636);
