//! Test only: the encoder as it was before the speed work (commit bcf7bf1),
//! the straightforward forward pass on `candle_nn` layers with padded batches
//! and an attention mask. The equivalence test in `model_tests.rs` holds the
//! fast path in `bert.rs` to this one's vectors.

use candle_core::{DType, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, Module, VarBuilder, embedding, layer_norm, linear};

use super::BertConfig;

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

pub struct ReferenceBert {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl ReferenceBert {
    /// Weights under `embeddings.` / `encoder.layer.N.`, or the same under
    /// `bert.` (checkpoints saved from a task head keep that prefix).
    pub fn load(vb: VarBuilder, c: &BertConfig) -> Result<Self> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") { vb.pp("bert") } else { vb };
        let embeddings = Embeddings::load(vb.pp("embeddings"), c)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(vb.pp("encoder").pp("layer").pp(i.to_string()), c))
            .collect::<Result<Vec<_>>>()?;
        Ok(ReferenceBert { embeddings, layers })
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
