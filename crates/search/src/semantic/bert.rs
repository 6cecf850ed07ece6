//! A BERT encoder (embeddings, self-attention, feed-forward, layer norms) on
//! `candle-nn`'s layers. It replaces `candle-transformers`, whose hundreds of
//! model families cost about eight CPU-minutes per build for the one we run.
//! Inference only: no dropout, no pooler, absolute positions.

use candle_core::{DType, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, Module, VarBuilder, embedding, layer_norm, linear};
use serde_json::Value;

/// The `config.json` fields a BERT forward pass needs.
#[derive(Debug, Clone, PartialEq)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    pub pad_token_id: u32,
    pub gelu_exact: bool,
}

impl BertConfig {
    /// Reads a Hugging Face BERT `config.json`; the error names the field.
    pub fn from_json(v: &Value) -> std::result::Result<BertConfig, String> {
        let num = |k: &str| -> std::result::Result<usize, String> {
            v.get(k).and_then(Value::as_u64).map(|n| n as usize).ok_or_else(|| format!("missing field `{k}`"))
        };
        let gelu_exact = match v.get("hidden_act").and_then(Value::as_str).unwrap_or("gelu") {
            "gelu" => true,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_approximate" => false,
            other => return Err(format!("hidden_act {other:?} is not supported (gelu only)")),
        };
        let config = BertConfig {
            vocab_size: num("vocab_size")?,
            hidden_size: num("hidden_size")?,
            num_hidden_layers: num("num_hidden_layers")?,
            num_attention_heads: num("num_attention_heads")?,
            intermediate_size: num("intermediate_size")?,
            max_position_embeddings: num("max_position_embeddings")?,
            type_vocab_size: v.get("type_vocab_size").and_then(Value::as_u64).unwrap_or(2) as usize,
            layer_norm_eps: v.get("layer_norm_eps").and_then(Value::as_f64).unwrap_or(1e-12),
            pad_token_id: v.get("pad_token_id").and_then(Value::as_u64).unwrap_or(0) as u32,
            gelu_exact,
        };
        if config.num_attention_heads == 0 || config.hidden_size % config.num_attention_heads != 0 {
            return Err("hidden_size is not a multiple of num_attention_heads".into());
        }
        Ok(config)
    }
}

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    norm: LayerNorm,
}

impl Embeddings {
    fn load(vb: VarBuilder, c: &BertConfig) -> Result<Self> {
        Ok(Embeddings {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(c.max_position_embeddings, c.hidden_size, vb.pp("position_embeddings"))?,
            token_types: embedding(c.type_vocab_size, c.hidden_size, vb.pp("token_type_embeddings"))?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        // one segment: every token type is 0, so its embedding is one row
        let segment = self.token_types.embeddings().narrow(0, 0, 1)?;
        let x =
            self.words.forward(ids)?.broadcast_add(&self.positions.forward(&positions)?)?.broadcast_add(&segment)?;
        self.norm.forward(&x)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    inter: Linear,
    out: Linear,
    out_norm: LayerNorm,
    heads: usize,
    head_dim: usize,
    gelu_exact: bool,
}

impl Layer {
    fn load(vb: VarBuilder, c: &BertConfig) -> Result<Self> {
        let h = c.hidden_size;
        let att = vb.pp("attention");
        Ok(Layer {
            query: linear(h, h, att.pp("self").pp("query"))?,
            key: linear(h, h, att.pp("self").pp("key"))?,
            value: linear(h, h, att.pp("self").pp("value"))?,
            attn_out: linear(h, h, att.pp("output").pp("dense"))?,
            attn_norm: layer_norm(h, c.layer_norm_eps, att.pp("output").pp("LayerNorm"))?,
            inter: linear(h, c.intermediate_size, vb.pp("intermediate").pp("dense"))?,
            out: linear(c.intermediate_size, h, vb.pp("output").pp("dense"))?,
            out_norm: layer_norm(h, c.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
            heads: c.num_attention_heads,
            head_dim: h / c.num_attention_heads,
            gelu_exact: c.gelu_exact,
        })
    }

    /// `x`: (batch, len, hidden); `mask`: additive, (batch, 1, 1, len) or none.
    fn forward(&self, x: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        let (b, len, hidden) = x.dims3()?;
        let split = |t: Tensor| t.reshape((b, len, self.heads, self.head_dim))?.transpose(1, 2)?.contiguous();
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;
        let mut scores = (q.matmul(&k.t()?)? / (self.head_dim as f64).sqrt())?;
        if let Some(m) = mask {
            scores = scores.broadcast_add(m)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((b, len, hidden))?;
        let attended = self.attn_norm.forward(&(self.attn_out.forward(&context)? + x)?)?;
        let inner = self.inter.forward(&attended)?;
        let inner = if self.gelu_exact { inner.gelu_erf()? } else { inner.gelu()? };
        self.out_norm.forward(&(self.out.forward(&inner)? + attended)?)
    }
}

pub struct Bert {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl Bert {
    /// Weights under `embeddings.` / `encoder.layer.N.`, or the same under
    /// `bert.` (checkpoints saved from a task head keep that prefix).
    pub fn load(vb: VarBuilder, c: &BertConfig) -> Result<Self> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") { vb.pp("bert") } else { vb };
        let embeddings = Embeddings::load(vb.pp("embeddings"), c)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(vb.pp("encoder").pp("layer").pp(i.to_string()), c))
            .collect::<Result<Vec<_>>>()?;
        Ok(Bert { embeddings, layers })
    }

    /// Token vectors (batch, len, hidden) for `ids` (batch, len). `mask` is 1
    /// for real tokens, 0 for padding; `None` when nothing is padded (a
    /// single text), which skips the mask arithmetic.
    pub fn forward(&self, ids: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        let additive = match mask {
            Some(m) => {
                let m = m.to_dtype(DType::F32)?.unsqueeze(1)?.unsqueeze(1)?;
                // 0 where attended, a large negative number where padded
                Some(((m.ones_like()? - &m)? * f64::from(f32::MIN))?)
            }
            None => None,
        };
        let mut x = self.embeddings.forward(ids)?;
        for layer in &self.layers {
            x = layer.forward(&x, additive.as_ref())?;
        }
        Ok(x)
    }
}
