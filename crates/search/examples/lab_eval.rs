//! Every dev set, lexical and fused, in one process (the ranking lab's fast loop):
//! `cargo run -p quiver-search --features semantic,bench --example lab_eval --
//! --native-docs FILE [--model DIR] [--only a,b] [--misses a,b] [--halves] [--ranks F] [--set KEY=VALUE ...]`.
//!
//! `FILE` is quiver's own surface exported once by `quiver bench search
//! --native --export-docs FILE` (the engine builds it; this crate cannot), so
//! a ranking change is measured on the native dev sets without rebuilding the
//! CLI. With `--model` the fused ranking runs too, as `quiver bench search`
//! does it (lexical pool, then `fuse`); query vectors are kept in
//! `--qcache FILE` between runs. `--halves` adds each set's hits (top-1 + top-5)
//! on its odd and even lines, lexical and fused, for the both-halves rule.
//! `--features FILE` writes, per query, the learned re-ranker's candidates
//! (score fusion's top `--depth`, default 10) with their feature vectors and
//! which of them hit: what `bench/search/learn/train.py` trains on. Check
//! sets are not listed here: they are run once, by `table.sh`. Prints per set
//! the top-1 / top-5 counts.

#![allow(clippy::print_stdout)]

use std::collections::HashMap;
use std::path::PathBuf;

use quiver_search::bench::{self as b, BenchQuery};
use quiver_search::semantic::{Encoder, IntentPrior, SemanticIndex};
use quiver_search::{
    FusionParams, LEARNED_FEATURES, RankParams, SearchDoc, SearchIndex, SemanticScores, fuse_scores, learned_candidates,
};

struct QueryVectors {
    path: Option<PathBuf>,
    known: HashMap<String, Vec<f32>>,
    added: bool,
}

impl QueryVectors {
    fn load(path: Option<PathBuf>) -> QueryVectors {
        let mut known = HashMap::new();
        if let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) {
            for line in text.lines() {
                if let Ok((q, v)) = serde_json::from_str::<(String, Vec<f32>)>(line) {
                    known.insert(q, v);
                }
            }
        }
        QueryVectors { path, known, added: false }
    }

    fn get(&mut self, enc: &Encoder, q: &str) -> anyhow::Result<Vec<f32>> {
        if let Some(v) = self.known.get(q) {
            return Ok(v.clone());
        }
        let v = enc.encode_query(q)?;
        self.known.insert(q.to_string(), v.clone());
        self.added = true;
        Ok(v)
    }

    fn save(&self) -> anyhow::Result<()> {
        if let (Some(p), true) = (&self.path, self.added) {
            let mut out = String::new();
            for (q, v) in &self.known {
                out.push_str(&serde_json::to_string(&(q, v))?);
                out.push('\n');
            }
            std::fs::write(p, out)?;
        }
        Ok(())
    }
}

fn main() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = root.join("bench/search/data");
    let here = root.join("bench/search");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let list = |flag: &str| opt(flag).map(|v| v.split(',').map(str::to_string).collect::<Vec<_>>());
    let native_docs = opt("--native-docs").ok_or_else(|| anyhow::anyhow!("--native-docs FILE is required"))?;
    let only = list("--only");
    let misses = list("--misses").unwrap_or_default();
    let explain = args.iter().any(|a| a == "--explain");
    let halves_out = args.iter().any(|a| a == "--halves");
    // `--ranks FILE`: each query's lexical and fused rank of the expected tool (0 = missed)
    let mut ranks = String::new();
    let ranks_file = opt("--ranks");
    // `--features FILE`: the learned re-ranker's training rows, one query a line
    let features_file = opt("--features");
    // `--scores FILE`: each native query's hand-set fused score of every tool in its pools
    let scores_file = opt("--scores");
    let mut score_rows = String::new();
    let depth: usize = opt("--depth").map_or(Ok(10), |d| d.parse())?;
    let mut feature_rows = String::new();
    if features_file.is_some() {
        feature_rows
            .push_str(&serde_json::json!({ "features": LEARNED_FEATURES.to_vec(), "depth": depth }).to_string());
        feature_rows.push('\n');
    }
    let mut params = RankParams::default();
    let encoder = opt("--model").map(|d| Encoder::load(&PathBuf::from(d))).transpose()?;
    // the model's own fusion, as `quiver bench search` ranks with it (the
    // static embedding's weighs meaning less)
    let mut fusion = encoder.as_ref().map_or_else(FusionParams::default, Encoder::fusion);
    // `--set sem.example=W`: the weight of example rows' cosines (default
    // `EXAMPLE_WEIGHT`; 0 leaves them out)
    let mut sem_example = quiver_search::semantic::EXAMPLE_WEIGHT;
    // `--set sem.example_top=K`: example rows count by their K best's mean
    let mut sem_top = quiver_search::semantic::EXAMPLE_TOP;
    for pair in args.windows(2).filter(|w| w[0] == "--set") {
        let (k, v) = pair[1].split_once('=').ok_or_else(|| anyhow::anyhow!("--set {}: expected KEY=VALUE", pair[1]))?;
        let v: f32 = v.parse()?;
        if k == "sem.example" {
            sem_example = v;
            continue;
        }
        if k == "sem.example_top" {
            sem_top = v.max(1.0) as usize;
            continue;
        }
        match k.strip_prefix("fuse.") {
            Some(f) => fusion.set(f, v),
            None => params.set(k, v),
        }
        .map_err(|e| anyhow::anyhow!("--set {k}={v}: {e}"))?;
    }
    // `--prior FILE`: measure another intent prior's weights (`off`: none)
    let prior_override: Option<Option<&'static IntentPrior>> = match opt("--prior") {
        None => None,
        Some(f) if f == "off" => Some(None),
        Some(f) => Some(Some(Box::leak(Box::new(
            IntentPrior::parse(&std::fs::read_to_string(&f)?).map_err(|e| anyhow::anyhow!("{f}: {e}"))?,
        )))),
    };
    let mut qv = QueryVectors::load(opt("--qcache").map(PathBuf::from));
    let vectors = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/quiver/vectors"));

    let cat = |n: &str| b::load_catalog(&data.join("catalogs").join(n));
    let native = b::load_catalog(&PathBuf::from(&native_docs))?;
    let azure = cat("azure-mcp.json")?;
    let mut mixed: Vec<SearchDoc> = azure.clone();
    mixed.extend(cat("github-mcp.json")?);
    mixed.extend(cat("livemcp.json")?);
    // quiver's own tools beside three MCP servers' (does the prior pull
    // third-party requests to built-in tools?)
    let mut with_native = native.clone();
    with_native.extend(mixed.iter().cloned());
    let q = |p: PathBuf| b::load_queries(&p);
    let aq = q(data.join("queries/azure-mcp.jsonl"))?;
    // (set, catalog, queries): catalogs by key, built once each.
    let catalogs: Vec<(&str, Vec<SearchDoc>)> = vec![
        ("native", native),
        ("azure", azure),
        ("mixed", mixed),
        ("with_native", with_native),
        ("authored", b::load_catalog(&here.join("dev/bfcl-authored.json"))?),
        ("turns", b::load_catalog(&here.join("dev/bfcl-multiturn.json"))?),
        ("bfcl", b::load_catalog(&here.join("generalization/bfcl-live.json"))?),
    ];
    let sets: Vec<(&str, &str, Vec<BenchQuery>)> = vec![
        ("native", "native", q(data.join("queries/native.jsonl"))?),
        ("native.ev", "native", q(here.join("dev/native-everyday.jsonl"))?),
        ("daily.dev", "native", q(here.join("queries/native-daily-dev.jsonl"))?),
        ("daily.dev2", "native", q(here.join("queries/native-daily-dev2.jsonl"))?),
        ("daily.dev3", "native", q(here.join("queries/native-daily-dev3.jsonl"))?),
        ("daily.dev4", "native", q(here.join("queries/native-daily-dev4.jsonl"))?),
        ("daily.dev5", "native", q(here.join("queries/native-daily-dev5.jsonl"))?),
        ("blind.dev6", "native", q(here.join("queries/native-blind-dev6.jsonl"))?),
        ("blind.dev7", "native", q(here.join("queries/native-blind-dev7.jsonl"))?),
        ("blind.dev8", "native", q(here.join("queries/native-blind-dev8.jsonl"))?),
        ("blind.dev9", "native", q(here.join("queries/native-blind-dev9.jsonl"))?),
        ("blind.dev10", "native", q(here.join("queries/native-blind-dev10.jsonl"))?),
        ("blind.dev11", "native", q(here.join("queries/native-blind-dev11.jsonl"))?),
        ("blind.dev12", "native", q(here.join("queries/native-blind-dev12.jsonl"))?),
        ("blind.dev13", "native", q(here.join("queries/native-blind-dev13.jsonl"))?),
        ("blind.dev14", "native", q(here.join("queries/native-blind-dev14.jsonl"))?),
        ("azure", "azure", aq.clone()),
        ("mixed", "mixed", aq),
        ("gh.mix", "mixed", q(here.join("queries/github-sanity.jsonl"))?),
        ("live.mix", "mixed", q(here.join("queries/livemcp-sanity.jsonl"))?),
        ("authored", "authored", q(here.join("dev/bfcl-authored.jsonl"))?),
        ("turns", "turns", q(here.join("dev/bfcl-multiturn.jsonl"))?),
        ("bfcl", "bfcl", q(here.join("generalization/bfcl-live.jsonl"))?),
        // sets over `with_native` run only when named in --only
        ("dev5.nat", "with_native", q(here.join("queries/native-daily-dev5.jsonl"))?),
        ("dev4.nat", "with_native", q(here.join("queries/native-daily-dev4.jsonl"))?),
        ("azure.nat", "with_native", q(data.join("queries/azure-mcp.jsonl"))?),
        ("gh.nat", "with_native", q(here.join("queries/github-sanity.jsonl"))?),
        ("live.nat", "with_native", q(here.join("queries/livemcp-sanity.jsonl"))?),
    ];
    let keep = |_: usize| true;
    let limit = 5;
    for (key, docs) in catalogs {
        let mine: Vec<_> = sets
            .iter()
            .filter(|(s, c, _)| {
                *c == key
                    && match &only {
                        Some(o) => o.iter().any(|x| x == s),
                        None => !s.ends_with(".nat"),
                    }
            })
            .collect();
        if mine.is_empty() {
            continue;
        }
        let sem = match &encoder {
            Some(e) => Some(
                SemanticIndex::build(e, &docs, vectors.as_deref())?
                    .with_example_weight(sem_example)
                    .with_example_top(sem_top),
            )
            .map(|s| match prior_override {
                Some(p) => s.with_prior(p, e, &docs),
                None => s,
            }),
            None => None,
        };
        let index = SearchIndex::build_with(docs, params.clone());
        for (name, _, queries) in mine {
            let (mut l1, mut l5, mut f1, mut f5) = (0, 0, 0, 0);
            // hits (top-1 + top-5) on the odd and even lines (1-based), lexical and fused
            let mut halves = [[0usize; 2]; 2];
            let show = misses.iter().any(|m| m == name);
            for (line, bq) in queries.iter().enumerate() {
                let half = line % 2;
                let names = |hits: &[quiver_search::Hit]| -> Vec<String> {
                    hits.iter().map(|h| index.docs()[h.doc].name.clone()).collect()
                };
                let lex = names(&index.search(&bq.query, limit, &keep));
                let lr = lex.iter().position(|n| b::is_hit(n, &bq.expected));
                l1 += usize::from(lr == Some(0));
                l5 += usize::from(lr.is_some());
                halves[0][half] += usize::from(lr == Some(0)) + usize::from(lr.is_some());
                let mut fused = None;
                if let (Some(s), Some(e)) = (&sem, &encoder) {
                    let qvec = qv.get(e, &bq.query)?;
                    let scores = s.scores(&qvec);
                    let prior = s.prior(&bq.query, &qvec);
                    let both = SemanticScores { similarity: &scores, prior: prior.as_ref() };
                    let pool = index.search(&bq.query, limit.max(fusion.pool), &keep);
                    if features_file.is_some() {
                        let cands = learned_candidates(&index, &bq.query, &pool, &scores, &fusion, depth);
                        let hits: Vec<usize> = (0..cands.len())
                            .filter(|&i| b::is_hit(&index.docs()[cands[i].0].name, &bq.expected))
                            .collect();
                        let rows: Vec<Vec<f64>> = cands
                            .iter()
                            .map(|(_, f)| f.iter().map(|&x| (f64::from(x) * 1e6).round() / 1e6).collect())
                            .collect();
                        let line = serde_json::json!({ "set": name, "line": line, "hits": hits, "f": rows });
                        feature_rows.push_str(&line.to_string());
                        feature_rows.push('\n');
                    }
                    if scores_file.is_some() && key == "native" {
                        let all = fuse_scores(&index, &bq.query, &pool, both, &fusion, index.docs().len(), &keep);
                        let by_name: serde_json::Map<String, serde_json::Value> = all
                            .iter()
                            .map(|h| (index.docs()[h.doc].name.clone(), serde_json::json!(h.score)))
                            .collect();
                        let line = serde_json::json!({ "set": name, "query": bq.query, "expected": bq.expected, "scores": by_name });
                        score_rows.push_str(&line.to_string());
                        score_rows.push('\n');
                    }
                    let f = names(&fuse_scores(&index, &bq.query, &pool, both, &fusion, limit, &keep));
                    let fr = f.iter().position(|n| b::is_hit(n, &bq.expected));
                    f1 += usize::from(fr == Some(0));
                    f5 += usize::from(fr.is_some());
                    halves[1][half] += usize::from(fr == Some(0)) + usize::from(fr.is_some());
                    fused = Some((fr, f));
                }
                if ranks_file.is_some() {
                    let fr = fused.as_ref().map_or(0, |(r, _)| r.map_or(0, |r| r + 1));
                    let top = fused.as_ref().map_or(lex.first(), |(_, f)| f.first());
                    ranks.push_str(&format!(
                        "{name}\t{}\t{}\t{fr}\t{}\t{}\n",
                        bq.query.replace(['\t', '\n', '\r'], " "),
                        lr.map_or(0, |r| r + 1),
                        lex.first().map_or("", String::as_str),
                        top.map_or("", String::as_str)
                    ));
                }
                if show {
                    let (r, top) = match &fused {
                        Some((r, f)) => (*r, f),
                        None => (lr, &lex),
                    };
                    if r != Some(0) {
                        println!(
                            "  miss {name}: {:?} expected {:?} got {:?} (lexical {:?})",
                            bq.query,
                            bq.expected,
                            &top[..top.len().min(3)],
                            &lex[..lex.len().min(3)]
                        );
                        if explain {
                            for n in bq.expected.iter().take(1).chain(lex.first()) {
                                println!("   {n}:\n{}", index.explain(&bq.query, n).trim_end());
                            }
                        }
                    }
                }
            }
            let n = queries.len();
            let fl = if sem.is_some() { format!("  fused {f1:4} {f5:4}") } else { String::new() };
            let hv = if halves_out {
                let [[lo, le], [fo, fe]] = halves;
                format!("  halves lexical {lo} {le} fused {fo} {fe}")
            } else {
                String::new()
            };
            println!("{name:10} n={n:4}  lexical {l1:4} {l5:4}{fl}{hv}");
        }
    }
    if let Some(f) = scores_file {
        std::fs::write(f, score_rows)?;
    }
    if let Some(f) = features_file {
        std::fs::write(f, feature_rows)?;
    }
    if let Some(f) = ranks_file {
        std::fs::write(f, ranks)?;
    }
    qv.save()
}
