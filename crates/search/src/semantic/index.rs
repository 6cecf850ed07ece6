//! Tool vectors for one catalog: built in batches, cached on disk, ranked by
//! cosine similarity to a query vector.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::SemanticError;
use super::model::Encoder;
use crate::{Hit, SearchDoc};

/// Tools per forward pass: large enough to keep the matrix kernels busy,
/// small enough that padding to the batch's longest text stays cheap.
const BATCH: usize = 32;

const MAGIC: &[u8; 8] = b"QVEC0001";

/// Tool vectors (unit length when the model normalizes) in document order.
#[derive(Debug, Clone)]
pub struct SemanticIndex {
    dim: usize,
    vectors: Vec<f32>,
    /// Rank of each doc's name in name order, for deterministic ties.
    name_rank: Vec<u32>,
    model_id: String,
    from_cache: bool,
}

/// The text a tool is embedded as: its name in words (`mcp__gh__create_issue`
/// -> `create issue`), then its description. Server prefixes are left out:
/// they name where a tool lives, not what it does.
pub fn doc_text(doc: &SearchDoc) -> String {
    let short = doc.name.rsplit("__").next().unwrap_or(&doc.name);
    let mut words = String::new();
    let mut prev_lower = false;
    for c in short.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' {
            words.push(' ');
            prev_lower = false;
        } else {
            if c.is_uppercase() && prev_lower {
                words.push(' ');
            }
            prev_lower = c.is_lowercase();
            words.extend(c.to_lowercase());
        }
    }
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    let desc = doc.description.trim();
    if desc.is_empty() { words } else { format!("{words}: {desc}") }
}

/// Cache key: the model identity and every text that will be embedded, in order.
pub fn cache_key(model_id: &str, texts: &[String]) -> String {
    let mut h = Sha256::new();
    h.update(model_id.as_bytes());
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    hex::encode(&h.finalize()[..16])
}

impl SemanticIndex {
    /// Vectors for `docs`: read from `cache_dir` when a file for this model
    /// and catalog exists, else encoded and written there (best effort: an
    /// unwritable cache only costs the next start its time).
    pub fn build(encoder: &Encoder, docs: &[SearchDoc], cache_dir: Option<&Path>) -> Result<Self, SemanticError> {
        let texts: Vec<String> = docs.iter().map(doc_text).collect();
        let key = cache_key(encoder.id(), &texts);
        let name_rank = name_ranks(docs);
        let file = cache_dir.map(|d| d.join(format!("{key}.qvec")));
        if let Some(f) = &file
            && let Some(vectors) = read_cache(f, &key, encoder.dim(), docs.len())
        {
            return Ok(SemanticIndex {
                dim: encoder.dim(),
                vectors,
                name_rank,
                model_id: encoder.id().into(),
                from_cache: true,
            });
        }
        let rows = encoder.encode_passages(&texts, BATCH)?;
        let vectors: Vec<f32> = rows.into_iter().flatten().collect();
        if let Some(f) = &file {
            let _ = write_cache(f, &key, encoder.dim(), docs.len(), &vectors);
        }
        Ok(SemanticIndex { dim: encoder.dim(), vectors, name_rank, model_id: encoder.id().into(), from_cache: false })
    }

    pub fn len(&self) -> usize {
        self.name_rank.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name_rank.is_empty()
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Whether the vectors came from the disk cache.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Cosine similarity of every doc to a (unit) query vector.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dim {
            return vec![0.0; self.len()];
        }
        self.vectors.chunks_exact(self.dim).map(|v| v.iter().zip(query).map(|(a, b)| a * b).sum()).collect()
    }

    /// The `limit` most similar docs passing `keep`, ties broken by name.
    pub fn rank(&self, scores: &[f32], limit: usize, keep: &dyn Fn(usize) -> bool) -> Vec<Hit> {
        let mut hits: Vec<Hit> =
            scores.iter().enumerate().filter(|(d, _)| keep(*d)).map(|(doc, &score)| Hit { doc, score }).collect();
        let cmp = |a: &Hit, b: &Hit| {
            b.score.total_cmp(&a.score).then_with(|| self.name_rank[a.doc].cmp(&self.name_rank[b.doc]))
        };
        if hits.len() > limit && limit > 0 {
            hits.select_nth_unstable_by(limit - 1, cmp);
        }
        hits.truncate(limit);
        hits.sort_by(cmp);
        hits
    }
}

fn name_ranks(docs: &[SearchDoc]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by(|&a, &b| docs[a].name.cmp(&docs[b].name).then(a.cmp(&b)));
    let mut rank = vec![0u32; docs.len()];
    for (r, d) in order.into_iter().enumerate() {
        rank[d] = r as u32;
    }
    rank
}

/// Layout: magic, key length (u32) and key, dim (u32), count (u32), then
/// count*dim little-endian f32. Anything that does not match is a miss.
fn read_cache(path: &Path, key: &str, dim: usize, n: usize) -> Option<Vec<f32>> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let u32_at = |b: &[u8], at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let klen = u32_at(rest, 0)?;
    if rest.get(4..4 + klen)? != key.as_bytes() {
        return None;
    }
    let rest = &rest[4 + klen..];
    if u32_at(rest, 0)? != dim || u32_at(rest, 4)? != n {
        return None;
    }
    let body = &rest[8..];
    if body.len() != dim * n * 4 {
        return None;
    }
    Some(body.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn write_cache(path: &Path, key: &str, dim: usize, n: usize, vectors: &[f32]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(MAGIC.len() + 12 + key.len() + vectors.len() * 4);
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&(key.len() as u32).to_le_bytes());
    buf.extend_from_slice(key.as_bytes());
    buf.extend_from_slice(&(dim as u32).to_le_bytes());
    buf.extend_from_slice(&(n as u32).to_le_bytes());
    for v in vectors {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // write then rename: a reader never sees half a file
    let tmp: PathBuf = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &buf)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
