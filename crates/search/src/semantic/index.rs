//! Tool vectors for one catalog: built in batches, cached on disk, ranked by
//! cosine similarity to a query vector.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::SemanticError;
use super::model::Encoder;
use super::prior::IntentPrior;
use crate::{Hit, PriorScores, SearchDoc};

/// Tools per forward pass: large enough to keep the matrix kernels busy,
/// small enough that padding to the batch's longest text stays cheap.
const BATCH: usize = 32;

const MAGIC: &[u8; 8] = b"QVEC0002";

/// Most vectors one model's store keeps (about 15 MB at 384 dimensions):
/// room for several large catalogs; the least recently written go first.
const STORE_CAP: usize = 10_000;

/// How much a tool's synthetic example requests count against its
/// description's and phrasings' cosines (1: alike; 0: not at all).
pub const EXAMPLE_WEIGHT: f32 = 1.0;

/// A tool's example requests count by the mean cosine of its this many
/// closest ones, not the closest alone: one example that shares a request's
/// incidental words (a product name, a file) is weak evidence, several
/// alike are strong (3 against 1 gained on the blind dev sets, see the
/// example requests in bench/search/README.md).
pub const EXAMPLE_TOP: usize = 3;

/// A text's identity in the store: the first 16 bytes of its SHA-256.
pub type TextKey = [u8; 16];

/// Tool vectors (unit length when the model normalizes): one row per
/// embedded text, each tool's description row first, then one row per
/// search-only phrasing and example request.
#[derive(Debug, Clone)]
pub struct SemanticIndex {
    dim: usize,
    vectors: Vec<f32>,
    /// The doc each row belongs to.
    owner: Vec<u32>,
    /// Whether each row is a synthetic example request (`SearchDoc::examples`).
    example: Vec<bool>,
    /// Factor on an example row's cosine; 0 leaves example rows out.
    example_weight: f32,
    /// Example rows count by the mean of a tool's this many best cosines.
    example_top: usize,
    /// The text key of each row, so a later build can reuse the vector.
    keys: Vec<TextKey>,
    /// Rank of each doc's name in name order, for deterministic ties.
    name_rank: Vec<u32>,
    model_id: String,
    /// How many distinct texts this build had to encode (0: all reused).
    encoded: usize,
    /// The built-in tools' intent prior, when the catalog holds tools it
    /// knows: read through this model when it was trained on it, else
    /// through the embedded static model (see [`IntentPrior`], `prior_of`).
    prior: Option<CatalogPrior>,
}

/// An intent prior matched to one catalog's docs.
#[derive(Clone)]
struct CatalogPrior {
    prior: &'static IntentPrior,
    /// The model that reads a request for the prior when the weights were
    /// trained on another model than this index's: the static embedding
    /// compiled in. `None`: the index's own query vector serves.
    reader: Option<Arc<Encoder>>,
    doc_of_class: Vec<Option<u32>>,
}

impl std::fmt::Debug for CatalogPrior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogPrior")
            .field("classes", &self.prior.classes().len())
            .field("reader", &self.reader.as_ref().map(|r| r.id()))
            .field("doc_of_class", &self.doc_of_class)
            .finish()
    }
}

/// A prior and the model it reads requests through.
type PriorReader = (&'static IntentPrior, Option<Arc<Encoder>>);

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

/// Every text embedded for `docs`, with the doc it belongs to: each tool's
/// [`doc_text`], then its phrasings, then its example requests (a request is
/// compared with each alone, the closest counts: an everyday request
/// resembles one way of asking more than the description of everything the
/// tool does).
pub fn embedded_texts(docs: &[SearchDoc]) -> (Vec<String>, Vec<u32>) {
    let (texts, owner, _) = embedded_rows(docs);
    (texts, owner)
}

/// [`embedded_texts`], with whether each row is an example request.
fn embedded_rows(docs: &[SearchDoc]) -> (Vec<String>, Vec<u32>, Vec<bool>) {
    let mut texts = Vec::with_capacity(docs.len());
    let mut owner = Vec::with_capacity(docs.len());
    let mut example = Vec::with_capacity(docs.len());
    for (d, doc) in docs.iter().enumerate() {
        texts.push(doc_text(doc));
        owner.push(d as u32);
        example.push(false);
        let extra = doc.phrasings.iter().map(|p| (p, false)).chain(doc.examples.iter().map(|e| (e, true)));
        for (p, is_example) in extra {
            let p = p.trim();
            if !p.is_empty() {
                texts.push(p.to_string());
                owner.push(d as u32);
                example.push(is_example);
            }
        }
    }
    (texts, owner, example)
}

/// The committed prior for `encoder`, read through the model it was trained
/// on: the static embedding compiled in. Why a transformer borrows the
/// static model's prior: trained on the same rows, it ranked MiniLM's fusion
/// better under leave-one-set-out than a prior trained on MiniLM's vectors
/// (bench/search/runs/2026-12-05/one-prior.txt), and a model no prior was
/// trained on (bge, e5) gets one too. Asked once per model, since it
/// encodes the probe sentences.
fn prior_of(encoder: &Encoder) -> Option<PriorReader> {
    type Known = Vec<(String, Option<PriorReader>)>;
    static FITS: parking_lot::Mutex<Known> = parking_lot::Mutex::new(Vec::new());
    let mut fits = FITS.lock();
    if let Some((_, p)) = fits.iter().find(|(id, _)| id == encoder.id()) {
        return p.clone();
    }
    let p = IntentPrior::embedded().and_then(|p| reader_of(p, encoder));
    fits.push((encoder.id().to_string(), p.clone()));
    p
}

/// How `prior` reads requests beside `encoder`: through `encoder` itself
/// when it was trained on that model, else through the embedded static
/// model when it was trained on that one; `None` when neither fits.
fn reader_of(prior: &'static IntentPrior, encoder: &Encoder) -> Option<PriorReader> {
    if prior.fits(encoder) {
        return Some((prior, None));
    }
    let embedded = Encoder::embedded().ok()?;
    (embedded.id() != encoder.id() && prior.fits(&embedded)).then_some((prior, Some(embedded)))
}

/// A dot product in eight independent lanes: a single running sum is a
/// chain the compiler may not reorder (float addition is not associative),
/// so it runs one multiply-add at a time; eight lanes vectorize. Catalogs of
/// a thousand tools with example rows score ten thousand rows a query.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ac.zip(bc) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The store key of one text under one model.
pub fn text_key(model_id: &str, text: &str) -> TextKey {
    let mut h = Sha256::new();
    h.update((model_id.len() as u64).to_le_bytes());
    h.update(model_id.as_bytes());
    h.update(text.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&h.finalize()[..16]);
    key
}

/// The store file of one model in a cache directory.
fn store_path(dir: &Path, model_id: &str) -> PathBuf {
    let digest = Sha256::digest(model_id.as_bytes());
    dir.join(format!("{}.qvec", hex::encode(&digest[..12])))
}

impl SemanticIndex {
    /// Vectors for `docs`: each text's vector is read from the model's store
    /// in `cache_dir` when it is there, else encoded (and the store updated,
    /// best effort: an unwritable cache only costs the next start its time).
    /// Tools are cached one by one, so a catalog that changes by one MCP
    /// server's tools re-encodes only those.
    pub fn build(encoder: &Encoder, docs: &[SearchDoc], cache_dir: Option<&Path>) -> Result<Self, SemanticError> {
        Self::build_reusing(encoder, docs, cache_dir, None)
    }

    /// [`build`](Self::build), first reusing the vectors of `previous` (an
    /// earlier catalog of the same model, kept in memory).
    pub fn build_reusing(
        encoder: &Encoder,
        docs: &[SearchDoc],
        cache_dir: Option<&Path>,
        previous: Option<&SemanticIndex>,
    ) -> Result<Self, SemanticError> {
        let dim = encoder.dim();
        let (texts, owner, example) = embedded_rows(docs);
        let keys: Vec<TextKey> = texts.iter().map(|t| text_key(encoder.id(), t)).collect();
        let mut known: HashMap<TextKey, &[f32]> = HashMap::new();
        if let Some(prev) = previous.filter(|p| p.model_id == encoder.id() && p.dim == dim) {
            for (k, v) in prev.keys.iter().zip(prev.vectors.chunks_exact(dim)) {
                known.insert(*k, v);
            }
        }
        let file = cache_dir.map(|d| store_path(d, encoder.id()));
        let stored = match &file {
            Some(f) if keys.iter().any(|k| !known.contains_key(k)) => read_store(f, encoder.id(), dim),
            _ => Vec::new(),
        };
        for (k, v) in &stored {
            known.entry(*k).or_insert(v.as_slice());
        }
        let mut missing: Vec<usize> = Vec::new();
        let mut queued: HashSet<TextKey> = HashSet::new();
        for (i, k) in keys.iter().enumerate() {
            if !known.contains_key(k) && queued.insert(*k) {
                missing.push(i);
            }
        }
        let fresh_texts: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
        let fresh = if fresh_texts.is_empty() { Vec::new() } else { encoder.encode_passages(&fresh_texts, BATCH)? };
        let fresh: HashMap<TextKey, Vec<f32>> = missing.iter().map(|&i| keys[i]).zip(fresh).collect();
        let mut vectors = Vec::with_capacity(keys.len() * dim);
        for k in &keys {
            let v = fresh.get(k).map(Vec::as_slice).or_else(|| known.get(k).copied()).unwrap_or(&[]);
            if v.len() != dim {
                return Err(SemanticError::Inference(format!("a vector of {} values, expected {dim}", v.len())));
            }
            vectors.extend_from_slice(v);
        }
        if !missing.is_empty()
            && let Some(f) = &file
        {
            // Entries of other catalogs stay (oldest first); this catalog's
            // go last, so the cap drops what no recent build used.
            let current: HashSet<TextKey> = keys.iter().copied().collect();
            let mut entries: Vec<(TextKey, &[f32])> =
                stored.iter().filter(|(k, _)| !current.contains(k)).map(|(k, v)| (*k, v.as_slice())).collect();
            let mut written: HashSet<TextKey> = HashSet::new();
            for (k, v) in keys.iter().zip(vectors.chunks_exact(dim)) {
                if written.insert(*k) {
                    entries.push((*k, v));
                }
            }
            let skip = entries.len().saturating_sub(STORE_CAP);
            let _ = write_store(f, encoder.id(), dim, &entries[skip..]);
        }
        Ok(SemanticIndex {
            dim,
            vectors,
            owner,
            example,
            example_weight: EXAMPLE_WEIGHT,
            example_top: EXAMPLE_TOP,
            keys,
            name_rank: name_ranks(docs),
            model_id: encoder.id().into(),
            encoded: missing.len(),
            prior: None,
        }
        .matched_prior(prior_of(encoder), docs))
    }

    /// The same vectors with `prior` (or none) matched to `docs`, the docs
    /// this index was built from, read through `encoder` (this index's
    /// model) or the embedded one, whichever it was trained on. For
    /// measuring another prior's weights.
    pub fn with_prior(self, prior: Option<&'static IntentPrior>, encoder: &Encoder, docs: &[SearchDoc]) -> Self {
        self.matched_prior(prior.and_then(|p| reader_of(p, encoder)), docs)
    }

    fn matched_prior(mut self, prior: Option<PriorReader>, docs: &[SearchDoc]) -> Self {
        self.prior = prior.and_then(|(prior, reader)| {
            Some(CatalogPrior { prior, reader, doc_of_class: prior.docs_of_classes(docs)? })
        });
        self
    }

    /// Per doc, the intent prior's probability for a request (`None` for
    /// tools it does not know); `None` when no prior applies, or when the
    /// embedded model that reads for it fails on the request (a broken
    /// build: the ranking then goes on without the prior). `vector` is
    /// the request's vector under this index's model, which serves when the
    /// prior was trained on that model.
    pub fn prior(&self, query: &str, vector: &[f32]) -> Option<PriorScores> {
        let p = self.prior.as_ref()?;
        let read;
        let vector = match &p.reader {
            None => vector,
            Some(reader) => {
                read = reader.encode_query(query).ok()?;
                &read
            }
        };
        Some(p.prior.doc_probabilities(vector, &p.doc_of_class, self.len()))
    }

    pub fn len(&self) -> usize {
        self.name_rank.len()
    }

    /// The same vectors with example rows counting `weight` of their cosine
    /// (0: left out). For measuring; the default is [`EXAMPLE_WEIGHT`].
    pub fn with_example_weight(mut self, weight: f32) -> Self {
        self.example_weight = weight;
        self
    }

    pub fn is_empty(&self) -> bool {
        self.name_rank.is_empty()
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Whether every vector was reused (from the disk store or an earlier
    /// catalog), none encoded.
    pub fn from_cache(&self) -> bool {
        self.encoded == 0
    }

    /// How many distinct texts this build encoded.
    pub fn encoded(&self) -> usize {
        self.encoded
    }

    /// Cosine similarity of every doc to a (unit) query vector: the best of
    /// its rows (description, phrasings, and examples at their weight).
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dim {
            return vec![0.0; self.len()];
        }
        let mut best = vec![f32::MIN; self.len()];
        let k = self.example_top.max(1);
        // per doc, its k best example cosines (unsorted)
        let mut top: Vec<Vec<f32>> = vec![Vec::new(); self.len()];
        for (row, v) in self.vectors.chunks_exact(self.dim).enumerate() {
            let example = self.example.get(row).copied().unwrap_or(false);
            if example && self.example_weight <= 0.0 {
                continue;
            }
            let s = dot(v, query);
            let d = self.owner[row] as usize;
            if example {
                let t = &mut top[d];
                if t.len() < k {
                    t.push(s);
                } else if let Some(min) = t.iter_mut().min_by(|a, b| a.total_cmp(b)).filter(|m| **m < s) {
                    *min = s;
                }
            } else if s > best[d] {
                best[d] = s;
            }
        }
        for (b, t) in best.iter_mut().zip(&top) {
            if !t.is_empty() {
                let s = self.example_weight * t.iter().sum::<f32>() / t.len() as f32;
                if s > *b {
                    *b = s;
                }
            }
        }
        best
    }

    /// Example rows count by the mean of a tool's `k` best (1: the best;
    /// the default is [`EXAMPLE_TOP`]). For measuring.
    pub fn with_example_top(mut self, k: usize) -> Self {
        self.example_top = k.max(1);
        self
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

/// Layout: magic, model id length (u32) and id, dim (u32), count (u32), then
/// count x (16-byte text key, dim little-endian f32). Anything that does not
/// match reads as an empty store.
fn read_store(path: &Path, model_id: &str, dim: usize) -> Vec<(TextKey, Vec<f32>)> {
    read_store_checked(path, model_id, dim).unwrap_or_default()
}

fn read_store_checked(path: &Path, model_id: &str, dim: usize) -> Option<Vec<(TextKey, Vec<f32>)>> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let u32_at = |b: &[u8], at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let id_len = u32_at(rest, 0)?;
    if rest.get(4..4 + id_len)? != model_id.as_bytes() {
        return None;
    }
    let rest = &rest[4 + id_len..];
    if u32_at(rest, 0)? != dim {
        return None;
    }
    let n = u32_at(rest, 4)?;
    let body = &rest[8..];
    let row = 16 + dim * 4;
    if body.len() != n.checked_mul(row)? {
        return None;
    }
    Some(
        body.chunks_exact(row)
            .map(|r| {
                let mut key = [0u8; 16];
                key.copy_from_slice(&r[..16]);
                let v = r[16..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                (key, v)
            })
            .collect(),
    )
}

fn write_store(path: &Path, model_id: &str, dim: usize, entries: &[(TextKey, &[f32])]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(MAGIC.len() + 12 + model_id.len() + entries.len() * (16 + dim * 4));
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&(model_id.len() as u32).to_le_bytes());
    buf.extend_from_slice(model_id.as_bytes());
    buf.extend_from_slice(&(dim as u32).to_le_bytes());
    buf.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for (key, v) in entries {
        buf.extend_from_slice(key);
        for x in *v {
            buf.extend_from_slice(&x.to_le_bytes());
        }
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
