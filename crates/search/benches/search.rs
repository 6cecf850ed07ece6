//! Criterion benchmark of tool search latency at 1k and 10k tools, built from
//! the shared bench catalogs (`../shared/bench` beside the checkout). Run with
//! `cargo bench -p quiver-search --features bench --bench search`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use quiver_search::bench as bench_data;
use quiver_search::{SearchDoc, SearchIndex};

fn shared_bench() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench")
}

fn catalog() -> Vec<SearchDoc> {
    let mut docs = Vec::new();
    for name in ["azure-mcp.json", "github-mcp.json", "livemcp.json"] {
        if let Ok(mut d) = bench_data::load_catalog(&shared_bench().join("catalogs").join(name)) {
            docs.append(&mut d);
        }
    }
    docs
}

/// Grows `base` to `total` documents with copies under new server names.
fn grow(base: &[SearchDoc], total: usize) -> Vec<SearchDoc> {
    let mut out = Vec::with_capacity(total);
    let mut copy = 0;
    while out.len() < total {
        for d in base {
            if out.len() >= total {
                break;
            }
            let mut c = d.clone();
            let server = format!("s{copy}");
            c.name = format!("mcp__{server}__{}", d.name.rsplit("__").next().unwrap_or(&d.name));
            c.server = Some(server);
            out.push(c);
        }
        copy += 1;
    }
    out
}

fn bench_search(c: &mut Criterion) {
    let base = catalog();
    if base.is_empty() {
        eprintln!("no bench catalogs found under {}; skipping", shared_bench().display());
        return;
    }
    let queries: Vec<String> = bench_data::load_queries(&shared_bench().join("queries/azure-mcp.jsonl"))
        .map(|qs| qs.into_iter().take(50).map(|q| q.query).collect())
        .unwrap_or_else(|_| vec!["list storage accounts in my subscription".into()]);
    let mut group = c.benchmark_group("tool_search");
    for size in [1_000usize, 10_000] {
        let index = SearchIndex::build(grow(&base, size));
        let keep = |_: usize| true;
        group.bench_with_input(BenchmarkId::new("query", size), &index, |b, index| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % queries.len();
                index.search(&queries[i], 5, &keep)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
