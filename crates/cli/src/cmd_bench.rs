//! `quiver bench search (--catalog FILE[,FILE] | --native) --queries FILE [--limit N]`
//!
//! Quality (top-1, top-k, MRR) and per-query latency of the search engine. The
//! last line is the contract: `top1=… top5=… mrr=… p50_us=… p99_us=… n=… tools=…`,
//! then (scripts match the prefix) `tail_bytes=` and the other load figures.
//!
//! Ranking: `--baseline` (plain BM25), `--lexical`, `--semantic`; the default
//! is the fusion of both with the model tool search uses (`QUIVER_SEARCH_MODEL`,
//! the user's `[search] model`, a pulled model, else the embedded one), or
//! lexical when that is `off`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use quiver_search::bench::{self as bench_data, Metrics};
use quiver_search::{FusionParams, RankParams, Ranking, SearchDoc, SearchIndex, confident, confident_margin};

#[cfg(feature = "semantic")]
use crate::cmd_bench_semantic::{self as sem, Semantic};
use crate::setup;

#[derive(clap::Subcommand)]
pub enum Bench {
    /// Tool-search quality and latency over catalog and query files.
    Search(SearchArgs),
    /// The interactive agent: first frame, keypress-to-frame while streaming,
    /// scrolling a long transcript, idle CPU.
    Tui(crate::cmd_bench_tui::Args),
}

#[derive(clap::Args)]
pub struct SearchArgs {
    /// Catalog files (JSON), comma separated; mixed into one index.
    #[arg(long, value_delimiter = ',')]
    catalog: Vec<PathBuf>,
    /// Search quiver's own tool surface instead (every canonical tool, aliases as text).
    #[arg(long)]
    native: bool,
    /// With `--native`: lay this manifest over the built-in one (e.g. to try
    /// other `phrasings` without a rebuild).
    #[arg(long, requires = "native")]
    manifest: Option<PathBuf>,
    #[arg(long)]
    queries: PathBuf,
    #[arg(long, default_value_t = 5)]
    limit: usize,
    /// Plain BM25 over name and description, as a baseline.
    #[arg(long, conflicts_with_all = ["lexical", "semantic"])]
    baseline: bool,
    /// The lexical ranker alone, even with a model configured.
    #[arg(long, conflicts_with = "semantic")]
    lexical: bool,
    /// The sentence-embedding model alone.
    #[arg(long)]
    semantic: bool,
    /// Ignore cached tool vectors: time a cold build, then a read back from cache.
    #[arg(long)]
    cold: bool,
    /// Print each query whose expected tool is not ranked first.
    #[arg(long)]
    misses: bool,
    /// With `--misses`: how the lexical ranker scored the expected tool and
    /// the one it ranked first (per-term contributions, name signals).
    #[arg(long, requires = "misses")]
    explain: bool,
    /// Write each query's candidates (the lexical and semantic top 50, with
    /// lexical score, cosine and match share) as JSON lines to FILE, for
    /// studying fusion offline.
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
    /// Write the searched tools' documents (with `--native`: quiver's own
    /// surface, phrasings and snippets included) as a catalog FILE that
    /// `--catalog` and the search crate's `lab_eval` example read back.
    #[arg(long, value_name = "FILE")]
    export_docs: Option<PathBuf>,
    /// Grow the catalog to N tools with renamed copies (latency at scale).
    #[arg(long)]
    replicate: Option<usize>,
    /// Only the odd or even query lines (1-based): tune on one half, check on the other.
    #[arg(long, value_enum, default_value_t = Split::All)]
    split: Split,
    /// Override a parameter, e.g. `--set k1=1.5 --set b.desc=0.6` (ranker),
    /// `--set fuse.w_semantic=0.6` (fusion), `--set margin=0.3` (confident loads).
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
        Bench::Tui(args) => crate::cmd_bench_tui::run(args),
    }
}

fn load_docs(args: &SearchArgs) -> anyhow::Result<(Vec<SearchDoc>, Vec<usize>)> {
    let mut docs: Vec<SearchDoc> = Vec::new();
    let mut bytes = Vec::new();
    if args.native {
        let engine = setup::own_engine(args.manifest.as_deref())?;
        docs = engine.search_index().docs().to_vec();
        for d in &docs {
            let spec = engine.registry().get(&d.name).map(|t| &t.spec);
            bytes.push(spec.map_or(0, |s| bench_data::tool_bytes(&s.name, &s.description, Some(&s.input_schema))));
        }
    }
    for path in &args.catalog {
        for (d, b) in bench_data::load_catalog_sized(path)? {
            docs.push(d);
            bytes.push(b);
        }
    }
    if docs.is_empty() {
        bail!("nothing to search: give --catalog FILE[,FILE] or --native");
    }
    if let Some(n) = args.replicate {
        let base = bytes.clone();
        docs = replicate(docs, n);
        bytes = (0..docs.len()).map(|i| base[i % base.len()]).collect();
    }
    Ok((docs, bytes))
}

fn search(args: SearchArgs) -> anyhow::Result<ExitCode> {
    let (docs, bytes) = load_docs(&args)?;
    if let Some(path) = &args.export_docs {
        std::fs::write(path, bench_data::docs_json(&docs).to_string())
            .with_context(|| format!("writing {}", path.display()))?;
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
    let mut fusion_sets = Vec::new();
    let mut margin = None;
    for kv in &args.sets {
        let (key, value) = kv.split_once('=').ok_or_else(|| anyhow::anyhow!("--set {kv}: expected KEY=VALUE"))?;
        let value: f32 = value.trim().parse().map_err(|e| anyhow::anyhow!("--set {kv}: {e}"))?;
        let key = key.trim();
        let done = if let Some(k) = key.strip_prefix("fuse.") {
            // checked now, applied once the model (and so the base) is known
            fusion_sets.push((k.to_string(), value));
            FusionParams::default().set(k, value)
        } else if key == "margin" {
            margin = Some(value);
            Ok(())
        } else {
            params.set(key, value)
        };
        done.map_err(|e| anyhow::anyhow!("--set {kv}: {e}"))?;
    }
    let model = crate::search_model::model_choice()?;
    let off = model == crate::search_model::ModelChoice::Off;
    let ranking = match (off, args.semantic, args.lexical || args.baseline) {
        (true, true, _) => bail!(
            "--semantic needs a model, and QUIVER_SEARCH_MODEL or [search] model says off: unset it (the embedded model), or name a model directory"
        ),
        (false, true, _) => Ranking::Semantic,
        (false, false, false) => Ranking::Fused,
        _ => Ranking::Lexical,
    };
    let tools = docs.len();
    #[cfg(feature = "semantic")]
    let semantic = match ranking {
        Ranking::Semantic | Ranking::Fused => Some(Semantic::load(&model, &docs, args.cold)?),
        Ranking::Lexical => None,
    };
    #[cfg(not(feature = "semantic"))]
    let semantic: Option<std::convert::Infallible> = match ranking {
        Ranking::Lexical => None,
        _ => bail!("this quiver was built without the `semantic` feature: use --lexical"),
    };
    #[cfg(feature = "semantic")]
    if let Some(s) = &semantic {
        setup::out(&s.report());
    }
    #[cfg(feature = "semantic")]
    let mut fusion = semantic.as_ref().map_or_else(FusionParams::default, Semantic::fusion);
    #[cfg(not(feature = "semantic"))]
    let mut fusion = FusionParams::default();
    for (k, v) in &fusion_sets {
        fusion.set(k, *v).map_err(anyhow::Error::msg)?;
    }
    let index = SearchIndex::build_with(docs, params);
    let keep = |_: usize| true;
    // `--set margin=X` holds for every search; else each search's own
    let margin_of = |prior_log: bool| margin.unwrap_or_else(|| confident_margin(ranking, prior_log));
    #[cfg(feature = "semantic")]
    let pool = limit.max(fusion.pool);
    let rank = |q: &str| -> anyhow::Result<(Vec<quiver_search::Hit>, bool)> {
        Ok(match &semantic {
            None => (index.search(q, limit, &keep), false),
            #[cfg(feature = "semantic")]
            Some(s) => sem::rank(s, &index, q, ranking, &fusion, pool, limit)?,
            #[cfg(not(feature = "semantic"))]
            Some(never) => match *never {},
        })
    };

    if let Some(path) = &args.dump {
        let mut out = String::new();
        for q in &queries {
            #[cfg(feature = "semantic")]
            let cosines = match &semantic {
                Some(s) => Some(sem::cosines(s, &q.query)?),
                None => None,
            };
            #[cfg(not(feature = "semantic"))]
            let cosines: Option<Vec<f32>> = None;
            out.push_str(&dump_line(&index, &q.query, &q.expected, cosines.as_deref()).to_string());
            out.push('\n');
        }
        std::fs::write(path, out)?;
    }

    // Quality pass (doubles as warm-up), then a timed pass.
    let mut ranks = Vec::with_capacity(queries.len());
    let (mut tail_all, mut tail_confident, mut loaded, mut loaded_hit) = (0usize, 0usize, 0usize, 0usize);
    for q in &queries {
        let (hits, prior_log) = rank(&q.query)?;
        let names: Vec<&str> = hits.iter().map(|h| index.docs()[h.doc].name.as_str()).collect();
        let rank = names.iter().position(|n| bench_data::is_hit(n, &q.expected));
        if args.misses && rank != Some(0) {
            setup::out(&format!("miss: {:?} expected {:?} got {:?}", q.query, q.expected, names));
            if args.explain {
                for name in q.expected.iter().map(String::as_str).chain(names.first().copied()) {
                    setup::out(&format!(" {name}:\n{}", index.explain(&q.query, name).trim_end()));
                }
            }
        }
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        let sure = confident(&scores, margin_of(prior_log));
        tail_all += hits.iter().map(|h| bytes[h.doc]).sum::<usize>();
        tail_confident += hits[..sure].iter().map(|h| bytes[h.doc]).sum::<usize>();
        loaded += sure;
        loaded_hit += usize::from(rank.is_some_and(|r| r < sure));
        ranks.push(rank);
    }
    let mut latencies = Vec::with_capacity(queries.len());
    for q in &queries {
        let start = Instant::now();
        let hits = rank(&q.query)?;
        latencies.push(start.elapsed().as_micros());
        std::hint::black_box(hits);
    }
    let n = queries.len().max(1);
    setup::out(&format!(
        "{} tail_bytes={} tail_bytes_all={} loaded={:.2} loaded_hit={:.3} ranking={}",
        Metrics::from_ranks(&ranks, latencies, tools).line(),
        tail_confident / n,
        tail_all / n,
        loaded as f64 / n as f64,
        loaded_hit as f64 / n as f64,
        if args.baseline { "bm25" } else { ranking.as_str() },
    ));
    Ok(ExitCode::SUCCESS)
}

/// One query's fusion candidates: the lexical top 50 and, with cosines, the
/// semantic top 50, each `[name, lexical score or 0, cosine or null, match share]`.
fn dump_line(index: &SearchIndex, query: &str, expected: &[String], cosines: Option<&[f32]>) -> serde_json::Value {
    const TOP: usize = 50;
    let keep = |_: usize| true;
    let lexical = index.search(query, TOP, &keep);
    let mut docs: Vec<usize> = lexical.iter().map(|h| h.doc).collect();
    if let Some(c) = cosines {
        let mut order: Vec<usize> = (0..c.len()).collect();
        order.sort_by(|&a, &b| c[b].total_cmp(&c[a]).then(a.cmp(&b)));
        docs.extend(order.into_iter().take(TOP).filter(|d| !lexical.iter().any(|h| h.doc == *d)));
    }
    let share = index.match_share(query, &docs);
    let rows: Vec<serde_json::Value> = docs
        .iter()
        .zip(share)
        .map(|(&d, sh)| {
            let lex = lexical.iter().find(|h| h.doc == d).map_or(0.0, |h| h.score);
            serde_json::json!([index.docs()[d].name, lex, cosines.map(|c| c[d]), sh])
        })
        .collect();
    serde_json::json!({ "query": query, "expected": expected, "candidates": rows })
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
