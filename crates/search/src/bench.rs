//! Benchmark data for tool search (`quiver bench search`): catalog files
//! `{name, tools:[{name, description, inputSchema, server?}]}` and JSONL query
//! files `{query, expected:[names]}`, plus the hit rule and the metrics line.
//! Shared by `quiver bench search` and the criterion benchmark.

use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::{SearchDoc, params_from_schema};

/// Loads a catalog file as search documents; a tool with `server` is named
/// `mcp__<server>__<name>`.
pub fn load_catalog(path: &Path) -> anyhow::Result<Vec<SearchDoc>> {
    Ok(load_catalog_sized(path)?.into_iter().map(|(d, _)| d).collect())
}

/// [`load_catalog`], with each tool's size in bytes as compact JSON
/// `{name, description, inputSchema}`: what loading it adds to a catalog tail.
pub fn load_catalog_sized(path: &Path) -> anyhow::Result<Vec<(SearchDoc, usize)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading catalog {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("catalog {} is not JSON", path.display()))?;
    let Some(tools) = v.get("tools").and_then(Value::as_array) else {
        bail!("catalog {} has no `tools` array", path.display());
    };
    let mut docs = Vec::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            bail!("catalog {}: tools[{i}] has no name", path.display());
        };
        let server = t.get("server").and_then(Value::as_str).map(str::to_string);
        let bytes = tool_bytes(name, t.get("description").and_then(Value::as_str).unwrap_or(""), t.get("inputSchema"));
        let strings = |key: &str| -> Vec<String> {
            t.get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default()
        };
        // `params` as [name, description] pairs (an exported search document,
        // see `docs_json`) is taken as is; otherwise they come from the schema.
        let params = match t.get("params").and_then(Value::as_array) {
            Some(pairs) => pairs
                .iter()
                .filter_map(|p| Some((p.get(0)?.as_str()?.to_string(), p.get(1)?.as_str()?.to_string())))
                .collect(),
            None => t.get("inputSchema").map(params_from_schema).unwrap_or_default(),
        };
        docs.push((
            SearchDoc {
                name: match (&server, t.get("native").and_then(Value::as_bool)) {
                    (Some(s), None | Some(false)) => format!("mcp__{s}__{name}"),
                    _ => name.to_string(),
                },
                aliases: strings("aliases"),
                domain: t.get("domain").and_then(Value::as_str).unwrap_or("mcp").to_string(),
                description: t.get("description").and_then(Value::as_str).unwrap_or("").to_string(),
                prompt_snippet: t.get("prompt_snippet").and_then(Value::as_str).map(str::to_string),
                phrasings: strings("phrasings"),
                examples: strings("examples"),
                params,
                server,
            },
            bytes,
        ));
    }
    Ok(docs)
}

/// Search documents as a catalog `load_catalog` reads back unchanged (name,
/// aliases, domain, description, snippet, phrasings, examples, params): quiver's own
/// surface exported once by `quiver bench search --native --export-docs`, so
/// `examples/lab_eval.rs` ranks it without the engine.
pub fn docs_json(docs: &[SearchDoc]) -> Value {
    let tools: Vec<Value> = docs
        .iter()
        .map(|d| {
            serde_json::json!({
                "name": d.name,
                "native": true,
                "aliases": d.aliases,
                "domain": d.domain,
                "description": d.description,
                "prompt_snippet": d.prompt_snippet,
                "phrasings": d.phrasings,
                "examples": d.examples,
                "params": d.params,
                "server": d.server,
            })
        })
        .collect();
    serde_json::json!({ "tools": tools })
}

/// Bytes of a tool definition as compact JSON `{name, description, inputSchema}`.
pub fn tool_bytes(name: &str, description: &str, schema: Option<&Value>) -> usize {
    let v = serde_json::json!({"name": name, "description": description, "inputSchema": schema.cloned().unwrap_or(Value::Null)});
    v.to_string().len()
}

#[derive(Debug, Clone)]
pub struct BenchQuery {
    pub query: String,
    pub expected: Vec<String>,
}

pub fn load_queries(path: &Path) -> anyhow::Result<Vec<BenchQuery>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading queries {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).with_context(|| format!("{}:{}: not JSON", path.display(), i + 1))?;
        let Some(query) = v.get("query").and_then(Value::as_str) else {
            bail!("{}:{}: no `query` string", path.display(), i + 1);
        };
        let expected = v
            .get("expected")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        out.push(BenchQuery { query: query.to_string(), expected });
    }
    Ok(out)
}

/// A returned name hits when it equals an expected name or ends in `__<expected>`.
pub fn is_hit(name: &str, expected: &[String]) -> bool {
    expected.iter().any(|e| name == e || name.strip_suffix(e.as_str()).is_some_and(|p| p.ends_with("__")))
}

/// Quality and latency over a query set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    pub top1: f64,
    pub topk: f64,
    pub mrr: f64,
    pub p50_us: u128,
    pub p99_us: u128,
    pub n: usize,
    pub tools: usize,
}

impl Metrics {
    /// `ranks[i]` is the 0-based rank of the first hit of query i within the
    /// returned list, if any; `latencies_us` per query.
    pub fn from_ranks(ranks: &[Option<usize>], mut latencies_us: Vec<u128>, tools: usize) -> Metrics {
        let n = ranks.len();
        let denom = n.max(1) as f64;
        latencies_us.sort_unstable();
        Metrics {
            top1: ranks.iter().filter(|r| **r == Some(0)).count() as f64 / denom,
            topk: ranks.iter().filter(|r| r.is_some()).count() as f64 / denom,
            mrr: ranks.iter().map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0))).sum::<f64>() / denom,
            p50_us: percentile(&latencies_us, 0.50),
            p99_us: percentile(&latencies_us, 0.99),
            n,
            tools,
        }
    }

    /// `top1=0.000 top5=0.000 mrr=0.000 p50_us=0 p99_us=0 n=0 tools=0`
    pub fn line(&self) -> String {
        format!(
            "top1={:.3} top5={:.3} mrr={:.3} p50_us={} p99_us={} n={} tools={}",
            self.top1, self.topk, self.mrr, self.p50_us, self.p99_us, self.n, self.tools
        )
    }
}

/// Ranks every query with the lexical ranker and scores the results
/// (latencies left at zero: quality only).
pub fn evaluate(index: &crate::SearchIndex, queries: &[BenchQuery], limit: usize) -> Metrics {
    let ranks: Vec<Option<usize>> = queries
        .iter()
        .map(|q| {
            let hits = index.search(&q.query, limit, &|_| true);
            hits.iter().position(|h| is_hit(&index.docs()[h.doc].name, &q.expected))
        })
        .collect();
    Metrics::from_ranks(&ranks, vec![0; queries.len()], index.docs().len())
}

/// The query lines a split keeps: odd lines are 1, 3, … (1-based).
pub fn split(queries: Vec<BenchQuery>, odd: bool) -> Vec<BenchQuery> {
    queries.into_iter().enumerate().filter(|(i, _)| (i % 2 == 0) == odd).map(|(_, q)| q).collect()
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    if sorted.is_empty() {
        return 0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_rule_and_metrics_line() {
        assert!(is_hit("mcp__gh__create_issue", &["create_issue".into()]));
        assert!(is_hit("create_issue", &["create_issue".into()]));
        assert!(!is_hit("mcp__gh__xcreate_issue", &["create_issue".into()]));
        let m = Metrics::from_ranks(&[Some(0), Some(2), None, Some(0)], vec![5, 1, 9, 3], 10);
        assert_eq!(m.line(), "top1=0.500 top5=0.750 mrr=0.583 p50_us=5 p99_us=9 n=4 tools=10");
    }

    #[test]
    fn exported_docs_read_back_unchanged() {
        let docs = vec![SearchDoc {
            name: "read_file".into(),
            aliases: vec!["cat".into()],
            domain: "file".into(),
            description: "Read a file.".into(),
            prompt_snippet: Some("read one file".into()),
            phrasings: vec!["what's in Cargo.toml".into()],
            examples: vec!["cat pyproject.toml".into()],
            params: vec![("path".into(), "File path.".into())],
            server: None,
        }];
        let path = std::env::temp_dir().join(format!("quiver-docs-{}.json", std::process::id()));
        std::fs::write(&path, docs_json(&docs).to_string()).unwrap();
        let back = load_catalog(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back, docs);
    }
}
