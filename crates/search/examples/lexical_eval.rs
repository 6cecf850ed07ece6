//! Lexical ranker quality on every dev and sanity set in one process (fast to
//! rebuild while auditing rules): `cargo run --release -p quiver-search
//! --features bench --example lexical_eval [-- --baseline] [--set KEY=VALUE ...]`. Prints, per set,
//! top-1 / top-5 / MRR and the hit count the both-halves rule compares.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use quiver_search::bench::{self as b, BenchQuery};
use quiver_search::{RankParams, SearchDoc, SearchIndex};

fn main() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = std::env::var_os("BENCH_DIR").map_or_else(|| root.join("bench/search/data"), PathBuf::from);
    let here = root.join("bench/search");
    let cat = |n: &str| b::load_catalog(&data.join("catalogs").join(n));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let baseline = args.iter().any(|a| a == "--baseline");
    // `--set KEY=VALUE` (repeatable): a ranker parameter, as in `quiver bench search`
    let mut overrides = Vec::new();
    for pair in args.windows(2).filter(|w| w[0] == "--set") {
        let (k, v) = pair[1].split_once('=').ok_or_else(|| anyhow::anyhow!("--set {}: expected KEY=VALUE", pair[1]))?;
        overrides.push((k.to_string(), v.parse::<f32>()?));
    }
    let mut base = if baseline { RankParams::baseline() } else { RankParams::default() };
    for (k, v) in &overrides {
        base.set(k, *v).map_err(|e| anyhow::anyhow!("--set {k}={v}: {e}"))?;
    }
    let params = || base.clone();
    let azure = cat("azure-mcp.json")?;
    let mut mixed: Vec<SearchDoc> = azure.clone();
    mixed.extend(cat("github-mcp.json")?);
    mixed.extend(cat("livemcp.json")?);
    let aq = b::load_queries(&data.join("queries/azure-mcp.jsonl"))?;
    let gq = b::load_queries(&here.join("queries/github-sanity.jsonl"))?;
    let lq = b::load_queries(&here.join("queries/livemcp-sanity.jsonl"))?;
    let bfcl = b::load_catalog(&here.join("generalization/bfcl-live.json"))?;
    let bq = b::load_queries(&here.join("generalization/bfcl-live.jsonl"))?;
    let authored = b::load_catalog(&here.join("dev/bfcl-authored.json"))?;
    let auq = b::load_queries(&here.join("dev/bfcl-authored.jsonl"))?;
    let turns = b::load_catalog(&here.join("dev/bfcl-multiturn.json"))?;
    let tq = b::load_queries(&here.join("dev/bfcl-multiturn.jsonl"))?;
    let ai = SearchIndex::build_with(azure, params());
    let mi = SearchIndex::build_with(mixed, params());
    let gi = SearchIndex::build_with(cat("github-mcp.json")?, params());
    let li = SearchIndex::build_with(cat("livemcp.json")?, params());
    let bi = SearchIndex::build_with(bfcl, params());
    let aui = SearchIndex::build_with(authored, params());
    let ti = SearchIndex::build_with(turns, params());
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
        ("authored", &aui, auq.clone()),
        ("au.even", &aui, b::split(auq.clone(), false)),
        ("au.odd", &aui, b::split(auq, true)),
        ("turns", &ti, tq.clone()),
        ("t.even", &ti, b::split(tq.clone(), false)),
        ("t.odd", &ti, b::split(tq, true)),
        ("bfcl", &bi, bq),
    ];
    for (name, index, queries) in sets {
        let m = b::evaluate(index, &queries, 5);
        let hits = ((m.top1 + m.topk) * m.n as f64).round();
        println!("{name:9} top1={:.3} top5={:.3} mrr={:.3} n={} hits={hits}", m.top1, m.topk, m.mrr, m.n);
    }
    Ok(())
}
