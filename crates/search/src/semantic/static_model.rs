//! A static embedding: one vector per vocabulary token, a sentence's vector
//! the mean of its tokens' vectors (Model2Vec's idea). It is distilled from a
//! sentence model (`examples/distill_static.rs`: every token through the
//! teacher, centred, projected on the top principal directions, weighted down
//! by how common the token is) and needs no forward pass, so it ships inside
//! the binary: a newcomer's search ranks by meaning with nothing downloaded,
//! at microseconds a query.
//!
//! A directory (or the embedded copy) holds three files:
//! - `static.json`: what it is (`kind = "static"`, `dim`, the teacher, the
//!   distillation's settings, the table's digest, which names the model);
//! - `tokenizer.json`: the teacher's tokenizer;
//! - `embeddings.q8`: the table, int8 with one scale per row (see [`Table`]).

use std::path::Path;

use serde::Deserialize;
use tokenizers::Tokenizer;

use super::SemanticError;

/// First bytes of `embeddings.q8`.
pub const TABLE_MAGIC: &[u8; 8] = b"QVSTAT01";

/// `static.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct StaticMeta {
    pub kind: String,
    pub dim: usize,
    /// The table's sha256 (hex): the model's identity in vector caches and priors.
    pub table_sha256: String,
}

/// The table in `embeddings.q8`: magic, vocabulary size and dimension
/// (u32 LE), one f32 LE scale per row, then the rows as i8. Row `t` is
/// `scale[t] * q[t][..]`. Kept quantized in memory (a 30k x 256 table is
/// 7.8 MB as i8, 31 MB as f32); a query touches a dozen rows.
struct Table<'a> {
    vocab: usize,
    dim: usize,
    scales: &'a [u8],
    rows: &'a [u8],
}

impl<'a> Table<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Table<'a>, String> {
        let header = 16;
        if bytes.len() < header || &bytes[..8] != TABLE_MAGIC {
            return Err("embeddings.q8 is not a quiver static table".into());
        }
        let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
        let (vocab, dim) = (word(8), word(12));
        let want = vocab.checked_mul(dim).and_then(|n| n.checked_add(header + 4 * vocab));
        if dim == 0 || want != Some(bytes.len()) {
            return Err(format!("embeddings.q8: {} bytes for {vocab} rows of {dim}", bytes.len()));
        }
        let (scales, rows) = bytes[header..].split_at(4 * vocab);
        Ok(Table { vocab, dim, scales, rows })
    }

    fn add_row(&self, token: usize, into: &mut [f32]) {
        let at = 4 * token;
        let scale =
            f32::from_le_bytes([self.scales[at], self.scales[at + 1], self.scales[at + 2], self.scales[at + 3]]);
        let row = &self.rows[token * self.dim..(token + 1) * self.dim];
        into.iter_mut().zip(row).for_each(|(a, &q)| *a += scale * f32::from(q as i8));
    }
}

/// The table's bytes: borrowed from the binary, or read from a directory.
enum Bytes {
    Embedded(&'static [u8]),
    Owned(Vec<u8>),
}

impl Bytes {
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Embedded(b) => b,
            Bytes::Owned(b) => b,
        }
    }
}

/// A loaded static embedding.
pub struct StaticModel {
    tokenizer: Tokenizer,
    table: Bytes,
    dim: usize,
    /// Tokens left out of the mean: the tokenizer's specials.
    skip: Vec<u32>,
    id: String,
}

impl StaticModel {
    /// A static model directory (`static.json`, `tokenizer.json`, `embeddings.q8`).
    pub fn load(dir: &Path) -> Result<StaticModel, SemanticError> {
        let err = |reason: String| SemanticError::Model { dir: dir.to_path_buf(), reason };
        let read = |name: &str| std::fs::read(dir.join(name)).map_err(|e| err(format!("{name}: {e}")));
        let meta = read("static.json")?;
        let tokenizer = read("tokenizer.json")?;
        let table = read("embeddings.q8")?;
        Self::from_parts(&meta, &tokenizer, Bytes::Owned(table)).map_err(err)
    }

    /// The copy compiled into the binary.
    pub fn from_static(meta: &[u8], tokenizer: &[u8], table: &'static [u8]) -> Result<StaticModel, String> {
        Self::from_parts(meta, tokenizer, Bytes::Embedded(table))
    }

    fn from_parts(meta: &[u8], tokenizer: &[u8], table: Bytes) -> Result<StaticModel, String> {
        let meta: StaticMeta = serde_json::from_slice(meta).map_err(|e| format!("static.json: {e}"))?;
        if meta.kind != "static" {
            return Err(format!("static.json: kind {:?} is not \"static\"", meta.kind));
        }
        let mut tokenizer = Tokenizer::from_bytes(tokenizer).map_err(|e| format!("tokenizer.json: {e}"))?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| format!("tokenizer: {e}"))?;
        let parsed = Table::parse(table.get())?;
        if parsed.dim != meta.dim {
            return Err(format!("embeddings.q8 has {} dimensions, static.json says {}", parsed.dim, meta.dim));
        }
        if parsed.vocab < tokenizer.get_vocab_size(true) {
            return Err(format!(
                "embeddings.q8 has {} rows for {} tokens",
                parsed.vocab,
                tokenizer.get_vocab_size(true)
            ));
        }
        let skip = ["[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>"]
            .iter()
            .filter_map(|t| tokenizer.token_to_id(t))
            .collect();
        let dim = meta.dim;
        Ok(StaticModel { tokenizer, table, dim, skip, id: format!("static-{}", meta.table_sha256) })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The unit mean of the text's token vectors (all zeros for a text with
    /// no tokens: it then matches nothing).
    pub fn encode(&self, text: &str) -> Result<Vec<f32>, SemanticError> {
        let enc = self.tokenizer.encode(text, false).map_err(|e| SemanticError::Inference(e.to_string()))?;
        let table = Table::parse(self.table.get()).map_err(SemanticError::Inference)?;
        let mut sum = vec![0f32; self.dim];
        for &id in enc.get_ids() {
            if (id as usize) < table.vocab && !self.skip.contains(&id) {
                table.add_row(id as usize, &mut sum);
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(sum)
    }
}

/// Writes a table (`rows`: vocab x dim, row-major) as `embeddings.q8`: each
/// row scaled so its largest magnitude is 127.
pub fn write_table(rows: &[f32], dim: usize) -> Vec<u8> {
    let vocab = rows.len() / dim;
    let mut out = Vec::with_capacity(16 + 4 * vocab + rows.len());
    out.extend_from_slice(TABLE_MAGIC);
    out.extend_from_slice(&(vocab as u32).to_le_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    let scales: Vec<f32> = rows.chunks_exact(dim).map(|r| r.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0).collect();
    for s in &scales {
        out.extend_from_slice(&s.to_le_bytes());
    }
    for (r, s) in rows.chunks_exact(dim).zip(&scales) {
        for x in r {
            let q = if *s > 0.0 { (x / s).round().clamp(-127.0, 127.0) } else { 0.0 };
            out.push(q as i8 as u8);
        }
    }
    out
}

#[cfg(test)]
#[path = "static_model_tests.rs"]
mod tests;
