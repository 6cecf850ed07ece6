//! A sentence-transformers model directory run with candle on the CPU:
//! `config.json` (a BERT-family encoder), `tokenizer.json`, `model.safetensors`,
//! and the pooling / normalization modules (`modules.json`, `1_Pooling/config.json`).
//!
//! Weights are read into memory (`from_buffered_safetensors`), not mapped: the
//! workspace denies `unsafe`, and 90 MB read once costs well under a second.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use super::SemanticError;
use super::bert::{Bert, BertConfig};
use super::static_model::StaticModel;
use crate::fusion::FusionParams;

/// How token vectors become one sentence vector (from `1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The first (`[CLS]`) token: bge.
    Cls,
    /// The mean over real (unpadded) tokens: MiniLM, e5.
    Mean,
}

/// What the model card asks to put before a query and before a passage
/// (e5: `query: ` / `passage: `; bge: an instruction before queries only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefixes {
    pub query: String,
    pub passage: String,
}

/// A loaded encoder: a transformer run with candle, or a static embedding.
pub struct Encoder {
    kind: Kind,
    pooling: Pooling,
    normalize: bool,
    prefixes: Prefixes,
    dim: usize,
    id: String,
}

enum Kind {
    Transformer(Box<Transformer>),
    Static(Box<StaticModel>),
}

/// A BERT-family sentence model and where its passes run.
struct Transformer {
    model: Bert,
    tokenizer: Tokenizer,
    pad_id: u32,
    device: Device,
    /// Where a query's forward pass runs (one thread).
    query_pool: rayon::ThreadPool,
    /// Where passage batches run (one thread a core).
    batch_pool: rayon::ThreadPool,
}

/// Longest input in tokens: tool descriptions past this add little meaning
/// and cost quadratic attention time on the cold build.
const MAX_TOKENS_CAP: usize = 256;

fn model_err(dir: &Path, reason: impl std::fmt::Display) -> SemanticError {
    SemanticError::Model { dir: dir.to_path_buf(), reason: reason.to_string() }
}

fn read_json(dir: &Path, rel: &str) -> Result<Option<Value>, SemanticError> {
    let path = dir.join(rel);
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| model_err(dir, format!("{rel}: {e}")))?;
    serde_json::from_str(&text).map(Some).map_err(|e| model_err(dir, format!("{rel} is not JSON: {e}")))
}

impl Encoder {
    /// Loads a model directory; every missing or malformed piece is a
    /// [`SemanticError::Model`] naming the file, so a caller can fall back to
    /// lexical ranking and tell the user why.
    /// A directory with `static.json` is a static embedding
    /// ([`StaticModel`]); any other is a sentence-transformers model.
    pub fn load(dir: &Path) -> Result<Encoder, SemanticError> {
        if !dir.is_dir() {
            return Err(model_err(dir, "not a directory"));
        }
        if dir.join("static.json").is_file() {
            return Ok(Encoder::from_static(StaticModel::load(dir)?));
        }
        let config_json = read_json(dir, "config.json")?.ok_or_else(|| model_err(dir, "config.json is missing"))?;
        let config = BertConfig::from_json(&config_json)
            .map_err(|e| model_err(dir, format!("config.json is not a BERT config: {e}")))?;
        let arch = config_json.get("model_type").and_then(Value::as_str).unwrap_or("bert");
        if !matches!(arch, "bert") {
            return Err(model_err(dir, format!("model_type {arch:?} is not supported (BERT-family encoders only)")));
        }
        let (pooling, normalize) = pooling_of(dir)?;
        let max_tokens = read_json(dir, "sentence_bert_config.json")?
            .and_then(|v| v.get("max_seq_length").and_then(Value::as_u64))
            .map_or(MAX_TOKENS_CAP, |n| (n as usize).min(MAX_TOKENS_CAP))
            .min(config.max_position_embeddings);
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| model_err(dir, format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: max_tokens, ..Default::default() }))
            .map_err(|e| model_err(dir, format!("tokenizer truncation: {e}")))?;
        let weights = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights).map_err(|e| model_err(dir, format!("model.safetensors: {e}")))?;
        let prefixes = prefixes_of(dir, &config_json)?;
        let id = model_id(&config_json, &bytes, pooling, normalize, &prefixes, max_tokens);
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .map_err(|e| model_err(dir, format!("model.safetensors: {e}")))?;
        let model =
            Bert::load(vb, &config).map_err(|e| model_err(dir, format!("weights do not fit config.json: {e}")))?;
        // A query is a dozen token rows: split across threads, each matmul
        // would wait for a second core that the host is usually busy with.
        // One thread of its own runs the whole pass, and candle's row ops
        // (softmax, per-op rayon jobs) stay on it instead of waking the global
        // pool for every op. Cold builds (thousands of rows a pass) use every
        // core.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool = |n: usize, name: &'static str| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(move |i| format!("{name}-{i}"))
                .build()
                .map_err(|e| model_err(dir, format!("encoder threads: {e}")))
        };
        let query_pool = pool(1, "quiver-encode-query")?;
        let batch_pool = pool(cores, "quiver-encode")?;
        let transformer = Transformer { query_pool, batch_pool, model, tokenizer, pad_id: config.pad_token_id, device };
        Ok(Encoder {
            kind: Kind::Transformer(Box::new(transformer)),
            pooling,
            normalize,
            prefixes,
            dim: config.hidden_size,
            id,
        })
    }

    /// A static embedding as an encoder (mean of unit-normalized token rows,
    /// no prefixes).
    pub fn from_static(model: StaticModel) -> Encoder {
        Encoder {
            pooling: Pooling::Mean,
            normalize: true,
            prefixes: Prefixes::default(),
            dim: model.dim(),
            id: model.id().to_string(),
            kind: Kind::Static(Box::new(model)),
        }
    }

    #[cfg(test)]
    fn transformer(&self) -> &Transformer {
        match &self.kind {
            Kind::Transformer(t) => t,
            Kind::Static(_) => panic!("a static model has no transformer"),
        }
    }

    /// How this model's similarities are fused with the lexical ranking (a
    /// static embedding's count less: [`FusionParams::for_static`]).
    pub fn fusion(&self) -> FusionParams {
        if self.is_static() { FusionParams::for_static() } else { FusionParams::default() }
    }

    /// Whether this is a static embedding (no forward pass).
    pub fn is_static(&self) -> bool {
        matches!(self.kind, Kind::Static(_))
    }

    /// Stable identity of the model and of everything that changes its vectors.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    pub fn prefixes(&self) -> &Prefixes {
        &self.prefixes
    }

    /// One query vector (with the model's query prefix), of the request with
    /// its objects named by kind (`objects.rs`).
    pub fn encode_query(&self, query: &str) -> Result<Vec<f32>, SemanticError> {
        // the request's identifiers, paths and URLs as the words for their kinds
        let masked = crate::objects::mask_objects(query);
        let query = masked.as_ref();
        let t = match &self.kind {
            Kind::Static(m) => return m.encode(query),
            Kind::Transformer(t) => t,
        };
        let ids = t.tokenize(&format!("{}{}", self.prefixes.query, query))?;
        let mut out = t.query_pool.install(|| self.encode_ids(t, &[&ids]))?;
        out.pop().ok_or_else(|| SemanticError::Inference("empty batch".into()))
    }

    /// Passage vectors (with the model's passage prefix), in input order,
    /// `batch` texts per forward pass. Texts are batched by token count so
    /// that texts of like length share a pass.
    pub fn encode_passages(&self, texts: &[String], batch: usize) -> Result<Vec<Vec<f32>>, SemanticError> {
        match &self.kind {
            Kind::Static(m) => texts.iter().map(|t| m.encode(t)).collect(),
            Kind::Transformer(t) => t.batch_pool.install(|| self.encode_passages_here(t, texts, batch)),
        }
    }

    /// The pooled output for raw token-id sequences (each with its own
    /// `[CLS]`/`[SEP]`), on every core: how a static embedding is distilled
    /// from this model. `None` for a static model.
    #[doc(hidden)]
    pub fn encode_token_ids(&self, texts: &[&[u32]]) -> Option<Result<Vec<Vec<f32>>, SemanticError>> {
        match &self.kind {
            Kind::Static(_) => None,
            Kind::Transformer(t) => Some(t.batch_pool.install(|| self.encode_ids(t, texts))),
        }
    }

    fn encode_passages_here(
        &self,
        t: &Transformer,
        texts: &[String],
        batch: usize,
    ) -> Result<Vec<Vec<f32>>, SemanticError> {
        let ids: Vec<Vec<u32>> =
            texts.iter().map(|x| t.tokenize(&format!("{}{}", self.prefixes.passage, x))).collect::<Result<_, _>>()?;
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| (ids[i].len(), i));
        let mut out = vec![Vec::new(); ids.len()];
        for chunk in order.chunks(batch.max(1)) {
            let batch_ids: Vec<&[u32]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
            for (&i, v) in chunk.iter().zip(self.encode_ids(t, &batch_ids)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One forward pass over several texts' token ids, then pooling (and
    /// normalization when the model asks for it).
    fn encode_ids(&self, t: &Transformer, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, SemanticError> {
        let inf = |e: candle_core::Error| SemanticError::Inference(e.to_string());
        let (hidden, spans) = t.model.forward(texts, &t.device).map_err(inf)?;
        let dim = self.dim;
        let mut rows = Vec::with_capacity(spans.len());
        for s in spans {
            let tokens = &hidden[s.start * dim..(s.start + s.len) * dim];
            let mut r = match self.pooling {
                Pooling::Cls => tokens[..dim].to_vec(),
                Pooling::Mean => {
                    let mut sum = vec![0f32; dim];
                    for t in tokens.chunks_exact(dim) {
                        sum.iter_mut().zip(t).for_each(|(a, x)| *a += x);
                    }
                    let n = s.len.max(1) as f32;
                    sum.iter_mut().for_each(|a| *a /= n);
                    sum
                }
            };
            if self.normalize {
                let norm = r.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                r.iter_mut().for_each(|x| *x /= norm);
            }
            rows.push(r);
        }
        Ok(rows)
    }
}

impl Transformer {
    /// Token ids of one text, `[CLS]` ... `[SEP]`, truncated to the model's limit.
    fn tokenize(&self, text: &str) -> Result<Vec<u32>, SemanticError> {
        let encoding = self.tokenizer.encode(text, true).map_err(|e| SemanticError::Inference(e.to_string()))?;
        let mut ids = encoding.get_ids().to_vec();
        if ids.is_empty() {
            // never the case with [CLS]/[SEP]; a tokenizer without them still needs a row
            ids.push(self.pad_id);
        }
        Ok(ids)
    }
}

/// Pooling mode and whether a Normalize module follows. Without a pooling
/// config the sentence-transformers default is mean pooling.
fn pooling_of(dir: &Path) -> Result<(Pooling, bool), SemanticError> {
    let modules = read_json(dir, "modules.json")?;
    let module_path = |kind: &str| -> Option<PathBuf> {
        modules.as_ref()?.as_array()?.iter().find_map(|m| {
            let t = m.get("type").and_then(Value::as_str)?;
            t.ends_with(kind).then(|| PathBuf::from(m.get("path").and_then(Value::as_str).unwrap_or("")))
        })
    };
    let normalize = module_path(".Normalize").is_some();
    let pool_dir = module_path(".Pooling").unwrap_or_else(|| PathBuf::from("1_Pooling"));
    let rel = pool_dir.join("config.json");
    let pooling = match read_json(dir, &rel.to_string_lossy())? {
        None => Pooling::Mean,
        Some(cfg) => {
            let on = |k: &str| cfg.get(k).and_then(Value::as_bool).unwrap_or(false);
            if on("pooling_mode_cls_token") {
                Pooling::Cls
            } else if on("pooling_mode_mean_tokens") {
                Pooling::Mean
            } else {
                return Err(model_err(dir, format!("{}: only CLS or mean pooling is supported", rel.display())));
            }
        }
    };
    Ok((pooling, normalize))
}

/// Query / passage prefixes: the `prompts` of `config_sentence_transformers.json`
/// when the model ships them, else what the e5 and bge model cards prescribe,
/// recognised by the model's name.
fn prefixes_of(dir: &Path, config: &Value) -> Result<Prefixes, SemanticError> {
    if let Some(st) = read_json(dir, "config_sentence_transformers.json")?
        && let Some(prompts) = st.get("prompts").and_then(Value::as_object)
        && !prompts.is_empty()
    {
        let get = |k: &str| prompts.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let passage = if prompts.contains_key("passage") { get("passage") } else { get("document") };
        return Ok(Prefixes { query: get("query"), passage });
    }
    let name = format!(
        "{} {}",
        dir.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default(),
        config.get("_name_or_path").and_then(Value::as_str).unwrap_or("").to_lowercase()
    );
    Ok(if name.contains("e5") {
        Prefixes { query: "query: ".into(), passage: "passage: ".into() }
    } else if name.contains("bge") && name.contains("en") {
        Prefixes { query: "Represent this sentence for searching relevant passages: ".into(), passage: String::new() }
    } else {
        Prefixes::default()
    })
}

/// Model identity for the vector cache: config, pooling, prefixes, length
/// limit, and the weights' size, header and samples across the file. Hashing
/// all 90 MB on every load would cost more than the cache saves; a fine-tune
/// changes every weight, so samples spread over the file tell models apart.
fn model_id(config: &Value, weights: &[u8], pooling: Pooling, normalize: bool, p: &Prefixes, max: usize) -> String {
    let mut h = Sha256::new();
    h.update(config.to_string().as_bytes());
    h.update(format!("{pooling:?}|{normalize}|{}|{}|{max}|{}", p.query, p.passage, weights.len()).as_bytes());
    h.update(&weights[..weights.len().min(1 << 16)]);
    const SAMPLES: usize = 64;
    for i in 0..SAMPLES {
        let at = weights.len() * i / SAMPLES;
        h.update(&weights[at..(at + 4096).min(weights.len())]);
    }
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
