//! `quiver bench search (--catalog FILE[,FILE] | --native) --queries FILE [--limit N]`
//!
//! Quality (top-1, top-k, MRR) and per-query latency of the search engine. The
//! last line is the contract: `top1=… top5=… mrr=… p50_us=… p99_us=… n=… tools=…`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use quiver_search::bench::{self as bench_data, Metrics};
use quiver_search::{RankParams, SearchDoc, SearchIndex};

use crate::setup;

#[derive(clap::Subcommand)]
pub enum Bench {
    /// Tool-search quality and latency over catalog and query files.
    Search(SearchArgs),
}

#[derive(clap::Args)]
pub struct SearchArgs {
    /// Catalog files (JSON), comma separated; mixed into one index.
    #[arg(long, value_delimiter = ',')]
    catalog: Vec<PathBuf>,
    /// Search quiver's own tool surface instead (every canonical tool, aliases as text).
    #[arg(long)]
    native: bool,
    #[arg(long)]
    queries: PathBuf,
    #[arg(long, default_value_t = 5)]
    limit: usize,
    /// Plain BM25 over name and description, as a baseline.
    #[arg(long)]
    baseline: bool,
    /// Print each query whose expected tool is not ranked first.
    #[arg(long)]
    misses: bool,
    /// Grow the catalog to N tools with renamed copies (latency at scale).
    #[arg(long)]
    replicate: Option<usize>,
    /// Only the odd or even query lines (1-based): tune on one half, check on the other.
    #[arg(long, value_enum, default_value_t = Split::All)]
    split: Split,
    /// Override a ranking parameter, e.g. `--set k1=1.5 --set b.desc=0.6` (tuning).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Split {
    All,
    Odd,
    Even,
}

pub fn run(bench: Bench) -> anyhow::Result<ExitCode> {
    match bench {
        Bench::Search(args) => search(args),
    }
}

fn search(args: SearchArgs) -> anyhow::Result<ExitCode> {
    let mut docs: Vec<SearchDoc> = Vec::new();
    if args.native {
        let engine = setup::own_engine()?;
        docs = engine.search_index().docs().to_vec();
    }
    for path in &args.catalog {
        docs.extend(bench_data::load_catalog(path)?);
    }
    if docs.is_empty() {
        bail!("nothing to search: give --catalog FILE[,FILE] or --native");
    }
    if let Some(n) = args.replicate {
        docs = replicate(docs, n);
    }
    let queries: Vec<_> = bench_data::load_queries(&args.queries)?
        .into_iter()
        .enumerate()
        .filter(|(i, _)| match args.split {
            Split::All => true,
            Split::Odd => i % 2 == 0,
            Split::Even => i % 2 == 1,
        })
        .map(|(_, q)| q)
        .collect();
    let limit = args.limit.clamp(1, 100);
    let mut params = if args.baseline { RankParams::baseline() } else { RankParams::default() };
    for kv in &args.sets {
        let (key, value) = kv.split_once('=').ok_or_else(|| anyhow::anyhow!("--set {kv}: expected KEY=VALUE"))?;
        let value: f32 = value.trim().parse().map_err(|e| anyhow::anyhow!("--set {kv}: {e}"))?;
        params.set(key.trim(), value).map_err(|e| anyhow::anyhow!("--set {kv}: {e}"))?;
    }
    let tools = docs.len();
    let index = SearchIndex::build_with(docs, params);
    let keep = |_: usize| true;

    // Quality pass (doubles as warm-up), then a timed pass.
    let mut ranks = Vec::with_capacity(queries.len());
    for q in &queries {
        let hits = index.search(&q.query, limit, &keep);
        let names: Vec<&str> = hits.iter().map(|h| index.docs()[h.doc].name.as_str()).collect();
        let rank = names.iter().position(|n| bench_data::is_hit(n, &q.expected));
        if args.misses && rank != Some(0) {
            setup::out(&format!("miss: {:?} expected {:?} got {:?}", q.query, q.expected, names));
        }
        ranks.push(rank);
    }
    let mut latencies = Vec::with_capacity(queries.len());
    for q in &queries {
        let start = Instant::now();
        let hits = index.search(&q.query, limit, &keep);
        latencies.push(start.elapsed().as_micros());
        std::hint::black_box(hits);
    }
    setup::out(&Metrics::from_ranks(&ranks, latencies, tools).line());
    Ok(ExitCode::SUCCESS)
}

/// Copies of the catalog under new server names, so identical tools cannot
/// short-cut anything but the index still grows.
fn replicate(base: Vec<SearchDoc>, total: usize) -> Vec<SearchDoc> {
    let mut out = base.clone();
    let mut copy = 0;
    while out.len() < total {
        copy += 1;
        for d in &base {
            if out.len() >= total {
                break;
            }
            let server = format!("{}copy{copy}", d.server.clone().unwrap_or_else(|| "srv".into()));
            let mut c = d.clone();
            c.name = format!("mcp__{server}__{}", d.name.rsplit("__").next().unwrap_or(&d.name));
            c.server = Some(server);
            out.push(c);
        }
    }
    out
}
