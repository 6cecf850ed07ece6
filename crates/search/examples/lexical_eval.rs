//! Lexical ranker quality on every dev and sanity set in one process (fast to
//! rebuild while auditing rules): `cargo run --release -p quiver-search
//! --features bench --example lexical_eval [-- --baseline]`. Prints, per set,
//! top-1 / top-5 / MRR and the hit count the both-halves rule compares.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use quiver_search::bench::{self as b, BenchQuery};
use quiver_search::{RankParams, SearchDoc, SearchIndex};

fn main() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = std::env::var_os("BENCH_DIR").map_or_else(|| root.join("../shared/bench"), PathBuf::from);
    let here = root.join("bench/search");
    let cat = |n: &str| b::load_catalog(&shared.join("catalogs").join(n));
    let baseline = std::env::args().any(|a| a == "--baseline");
    let params = || if baseline { RankParams::baseline() } else { RankParams::default() };
    let azure = cat("azure-mcp.json")?;
    let mut mixed: Vec<SearchDoc> = azure.clone();
    mixed.extend(cat("github-mcp.json")?);
    mixed.extend(cat("livemcp.json")?);
    let aq = b::load_queries(&shared.join("queries/azure-mcp.jsonl"))?;
    let gq = b::load_queries(&here.join("queries/github-sanity.jsonl"))?;
    let lq = b::load_queries(&here.join("queries/livemcp-sanity.jsonl"))?;
    let bfcl = b::load_catalog(&here.join("generalization/bfcl-live.json"))?;
    let bq = b::load_queries(&here.join("generalization/bfcl-live.jsonl"))?;
    let ai = SearchIndex::build_with(azure, params());
    let mi = SearchIndex::build_with(mixed, params());
    let gi = SearchIndex::build_with(cat("github-mcp.json")?, params());
    let li = SearchIndex::build_with(cat("livemcp.json")?, params());
    let bi = SearchIndex::build_with(bfcl, params());
    let sets: Vec<(&str, &SearchIndex, Vec<BenchQuery>)> = vec![
        ("azure", &ai, aq.clone()),
        ("even", &ai, b::split(aq.clone(), false)),
        ("odd", &ai, b::split(aq.clone(), true)),
        ("mixed", &mi, aq.clone()),
        ("m.even", &mi, b::split(aq.clone(), false)),
        ("m.odd", &mi, b::split(aq, true)),
        ("gh", &gi, gq.clone()),
        ("gh.mix", &mi, gq),
        ("live", &li, lq.clone()),
        ("live.mix", &mi, lq),
        ("bfcl", &bi, bq),
    ];
    for (name, index, queries) in sets {
        let m = b::evaluate(index, &queries, 5);
        let hits = ((m.top1 + m.topk) * m.n as f64).round();
        println!("{name:9} top1={:.3} top5={:.3} mrr={:.3} n={} hits={hits}", m.top1, m.topk, m.mrr, m.n);
    }
    Ok(())
}
