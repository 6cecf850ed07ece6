//! The static table tuned on text like the text it will rank (Model2Vec's
//! "tokenlearn"): for each sentence of a corpus, the teacher's sentence
//! vector (projected the way the table was) is the target, and the table's
//! rows are moved so that the mean of a sentence's token rows points where
//! the teacher's vector does.
//!
//! Why: a distilled row is what the teacher makes of a token *alone*. In a
//! sentence the teacher reads a token in its context ("kill the build",
//! "kill switch"), so a mean of lone-token rows agrees with the teacher's
//! sentence cosines only roughly. Tuning on requests and tool texts moves
//! the rows of the words those texts use towards their meaning in such
//! texts. The targets are the teacher's vectors, never a label: nothing here
//! knows which tool a request wants, so no query set's answers are learned.
//!
//! Rows are pulled back towards their distilled values (`l2`), so a tuned
//! row stays comparable with the rows no corpus sentence touched.
//! Deterministic: a fixed shuffle, sequential updates, f64 accumulators.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, bail};

/// How the table is tuned.
pub struct TuneOptions {
    pub epochs: usize,
    pub lr: f64,
    pub l2: f64,
}

/// A corpus: deduplicated sentences, in first-seen order.
pub fn read_corpus(files: &[impl AsRef<Path>]) -> anyhow::Result<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for file in files {
        let file = file.as_ref();
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let name = file.display().to_string();
        let mut add = |s: &str| {
            let s = s.trim();
            if !s.is_empty() && seen.insert(s.to_string()) {
                out.push(s.to_string());
            }
        };
        if name.ends_with(".jsonl") {
            // A query set: each line's request.
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(line).with_context(|| format!("{name}: {line}"))?;
                add(v["query"].as_str().with_context(|| format!("{name}: a line without \"query\""))?);
            }
        } else if name.ends_with(".json") {
            // A catalog: each tool's description and its parameters'.
            let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("parsing {name}"))?;
            let tools = v["tools"].as_array().with_context(|| format!("{name}: no \"tools\" array"))?;
            for tool in tools {
                for s in tool_texts(tool) {
                    add(&s);
                }
            }
        } else if name.ends_with(".toml") {
            // Example requests: every string in every array.
            let v: toml::Value = toml::from_str(&text).with_context(|| format!("parsing {name}"))?;
            strings_in_arrays(&v, &mut add);
        } else {
            bail!("{name}: a corpus file is .jsonl (queries), .json (a catalog) or .toml (examples)");
        }
    }
    Ok(out)
}

/// A catalog tool's description and the descriptions of its parameters; in
/// `--export-docs`'s form, also its phrasings and example requests.
fn tool_texts(tool: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = tool["description"].as_str().map(str::to_string).into_iter().collect();
    let schema = tool.get("inputSchema").or_else(|| tool.get("input_schema")).or_else(|| tool.get("parameters"));
    if let Some(props) = schema.and_then(|s| s["properties"].as_object()) {
        out.extend(props.values().filter_map(|p| p["description"].as_str()).map(str::to_string));
    }
    for list in ["phrasings", "examples"] {
        out.extend(tool[list].as_array().into_iter().flatten().filter_map(|s| s.as_str()).map(str::to_string));
    }
    // `params`: [name, description] pairs.
    out.extend(tool["params"].as_array().into_iter().flatten().filter_map(|p| p[1].as_str()).map(str::to_string));
    out
}

fn strings_in_arrays(v: &toml::Value, add: &mut impl FnMut(&str)) {
    match v {
        toml::Value::Array(items) => {
            for item in items {
                match item {
                    toml::Value::String(s) => add(s),
                    other => strings_in_arrays(other, add),
                }
            }
        }
        toml::Value::Table(t) => t.values().for_each(|x| strings_in_arrays(x, add)),
        _ => {}
    }
}

/// Tunes `table` (`vocab x dim`, row-major) so that the mean of each
/// sentence's rows (`ids[k]`) points along `targets[k]` (unit, `dim`).
/// Adam per row, only on rows a sentence uses; returns the mean cosine
/// before and after.
pub fn tune(table: &mut [f32], dim: usize, ids: &[Vec<u32>], targets: &[Vec<f64>], o: &TuneOptions) -> (f64, f64) {
    let start: Vec<f32> = table.to_vec();
    let (mut m, mut v) = (vec![0f64; table.len()], vec![0f64; table.len()]);
    let mut steps = vec![0i32; table.len() / dim];
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let before = mean_cosine(table, dim, ids, targets);
    let mut order: Vec<usize> = (0..ids.len()).collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..o.epochs {
        // Fisher-Yates with a fixed generator: the same order on every run.
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        for &k in &order {
            let tokens = &ids[k];
            if tokens.is_empty() {
                continue;
            }
            let u = mean_row(table, dim, tokens);
            let norm = u.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
            let cos: f64 = u.iter().zip(&targets[k]).map(|(a, b)| a * b).sum::<f64>() / norm;
            // d(1 - cos)/du = -(t/|u| - cos * u/|u|^2); each token's row
            // gets 1/n of it (the mean).
            let n = tokens.len() as f64;
            let grad: Vec<f64> =
                u.iter().zip(&targets[k]).map(|(a, t)| -(t / norm - cos * a / (norm * norm)) / n).collect();
            let unique: BTreeSet<u32> = tokens.iter().copied().collect();
            for &t in &unique {
                let count = tokens.iter().filter(|&&x| x == t).count() as f64;
                let row = t as usize * dim;
                steps[t as usize] += 1;
                let step = steps[t as usize];
                for (d, grad_d) in grad.iter().enumerate() {
                    let i = row + d;
                    let g = count * grad_d + o.l2 * f64::from(table[i] - start[i]);
                    m[i] = b1 * m[i] + (1.0 - b1) * g;
                    v[i] = b2 * v[i] + (1.0 - b2) * g * g;
                    let mh = m[i] / (1.0 - b1.powi(step));
                    let vh = v[i] / (1.0 - b2.powi(step));
                    table[i] -= (o.lr * mh / (vh.sqrt() + eps)) as f32;
                }
            }
        }
    }
    (before, mean_cosine(table, dim, ids, targets))
}

fn mean_row(table: &[f32], dim: usize, tokens: &[u32]) -> Vec<f64> {
    let mut u = vec![0f64; dim];
    for &t in tokens {
        let row = &table[t as usize * dim..(t as usize + 1) * dim];
        u.iter_mut().zip(row).for_each(|(a, x)| *a += f64::from(*x));
    }
    let n = tokens.len().max(1) as f64;
    u.iter_mut().for_each(|a| *a /= n);
    u
}

/// The mean cosine between each sentence's mean row and its target.
pub fn mean_cosine(table: &[f32], dim: usize, ids: &[Vec<u32>], targets: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    let mut n = 0usize;
    for (tokens, target) in ids.iter().zip(targets) {
        if tokens.is_empty() {
            continue;
        }
        let u = mean_row(table, dim, tokens);
        let norm = u.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
        total += u.iter().zip(target).map(|(a, b)| a * b).sum::<f64>() / norm;
        n += 1;
    }
    total / n.max(1) as f64
}
