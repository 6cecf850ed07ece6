//! Lab helper: embeds texts (one JSON string a line on stdin) with a model and
//! appends `[text, vector]` lines to a query-vector cache file, the format
//! `lab_eval --qcache` reads; texts already in the file are skipped.
//! `cargo run -p quiver-search --features semantic,bench --example embed_texts -- MODEL_DIR CACHE < texts.jsonl`
use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use quiver_search::semantic::Encoder;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, cache] = args.as_slice() else { anyhow::bail!("usage: embed_texts MODEL_DIR CACHE < texts.jsonl") };
    let enc = Encoder::load(&PathBuf::from(model))?;
    let mut known = HashSet::new();
    if let Ok(text) = std::fs::read_to_string(cache) {
        for line in text.lines() {
            if let Ok((q, _)) = serde_json::from_str::<(String, Vec<f32>)>(line) {
                known.insert(q);
            }
        }
    }
    let mut out = std::fs::OpenOptions::new().create(true).append(true).open(cache)?;
    for line in std::io::stdin().lock().lines() {
        let t: String = serde_json::from_str(&line?)?;
        if known.insert(t.clone()) {
            let v = enc.encode_query(&t)?;
            writeln!(out, "{}", serde_json::to_string(&(t, v))?)?;
        }
    }
    Ok(())
}
