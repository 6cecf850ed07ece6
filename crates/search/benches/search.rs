//! Criterion benchmark of tool search latency at 1k and 10k tools, built from
//! the bench catalogs in the repository (`bench/search/data`). Run with
//! `cargo bench -p quiver-search --features bench --bench search`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use quiver_search::bench as bench_data;
use quiver_search::{SearchDoc, SearchIndex};

fn bench_data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/data")
}

fn catalog() -> Vec<SearchDoc> {
    let mut docs = Vec::new();
    for name in ["azure-mcp.json", "github-mcp.json", "livemcp.json"] {
        docs.append(&mut bench_data::load_catalog(&bench_data_dir().join("catalogs").join(name)).unwrap());
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
    let queries: Vec<String> = bench_data::load_queries(&bench_data_dir().join("queries/azure-mcp.jsonl"))
        .unwrap()
        .into_iter()
        .take(50)
        .map(|q| q.query)
        .collect();
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
