//! A BERT encoder (embeddings, self-attention, feed-forward, layer norms) on
//! `candle-nn`'s layers. It replaces `candle-transformers`, whose hundreds of
//! model families cost about eight CPU-minutes per build for the one we run.
//! Inference only: no dropout, no pooler, absolute positions.

use candle_core::{Device, Result, Tensor};
use candle_nn::{Embedding, Module, VarBuilder, embedding};
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
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err("hidden_size is not a multiple of num_attention_heads".into());
        }
        Ok(config)
    }
}

/// One text's tokens in a batch: rows `start..start + len` of the (tokens,
/// hidden) activations. Texts are laid end to end with no padding, so the
/// dense layers (nearly all the arithmetic) never compute a padded row and
/// attention needs no mask: each text attends over its own rows only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub len: usize,
}

/// `x·Wᵀ` with `Wᵀ` stored contiguous, transposed once at load, and the bias
/// kept apart for the fused row pass that follows each product.
/// `candle_nn::Linear` multiplies by the transposed *view* of the (out, in)
/// checkpoint weight; gemm then copies (packs) the whole weight into its
/// preferred layout on every call, which for a ten-token query cost more than
/// the arithmetic. With `Wᵀ` row-major the kernel reads it in place.
struct Dense {
    wt: Tensor,
    bias: Vec<f32>,
}

impl Dense {
    /// From checkpoint parts: `w` is (out, in), `bias` is (out).
    fn new(w: &Tensor, bias: &Tensor) -> Result<Self> {
        Ok(Dense { wt: w.t()?.contiguous()?, bias: bias.to_vec1()? })
    }

    fn load(vb: VarBuilder, inputs: usize, outputs: usize) -> Result<Self> {
        Dense::new(&vb.get((outputs, inputs), "weight")?, &vb.get(outputs, "bias")?)
    }

    /// `x`: (tokens, in) -> `x·Wᵀ` as rows of `out` values, bias not added.
    fn product(&self, x: &Tensor) -> Result<Vec<f32>> {
        x.matmul(&self.wt)?.flatten_all()?.to_vec1()
    }
}

/// Layer norm parameters, applied by [`add_norm`].
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(vb: VarBuilder, size: usize, eps: f64) -> Result<Self> {
        // checkpoints name them weight/bias or (older) gamma/beta
        let get = |new: &str, old: &str| -> Result<Vec<f32>> {
            let name = if vb.contains_tensor(new) { new } else { old };
            vb.get(size, name)?.to_vec1()
        };
        Ok(Norm { gamma: get("weight", "gamma")?, beta: get("bias", "beta")?, eps: eps as f32 })
    }
}

/// `rows <- LayerNorm(rows + bias + residual)`, row by row: the bias add, the
/// residual add and the norm in one pass over memory instead of three tensor
/// ops (each of which allocates its result and, past 64k values, wakes
/// candle's worker threads).
fn add_norm(rows: &mut [f32], bias: &[f32], residual: &[f32], norm: &Norm) {
    let n = norm.gamma.len();
    for (row, res) in rows.chunks_exact_mut(n).zip(residual.chunks_exact(n)) {
        for ((v, b), r) in row.iter_mut().zip(bias).zip(res) {
            *v += b + r;
        }
        let mean = row.iter().sum::<f32>() / n as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
        let inv_std = 1.0 / (var + norm.eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = (*v - mean) * inv_std * g + b;
        }
    }
}

/// `rows <- gelu(rows + bias)`.
fn bias_gelu(rows: &mut [f32], bias: &[f32], exact: bool) {
    for row in rows.chunks_exact_mut(bias.len()) {
        for (v, b) in row.iter_mut().zip(bias) {
            let x = *v + b;
            *v = if exact { 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2)) } else { gelu_tanh(x) };
        }
    }
}

/// erf as a rational function of x² on [-4, 4] (erf(±4) is ±1 in f32), the
/// approximation XLA and Eigen use for f32: within 4e-7 of erf, against libm's
/// scalar `erff` which took a seventh of a cold build. No branches and no
/// `exp`, so the loop above vectorizes.
fn erf(x: f32) -> f32 {
    const P: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const Q: [f32; 5] = [-1.456_607_2e-5, -2.133_740_6e-4, -1.682_827e-3, -7.373_329e-3, -1.426_474e-2];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = P.iter().fold(0.0, |acc, c| acc * x2 + c);
    let q = Q.iter().fold(0.0, |acc, c| acc * x2 + c);
    x * p / q
}

/// The tanh form of gelu (`gelu_new`), as candle computes it.
fn gelu_tanh(x: f32) -> f32 {
    0.5 * x * (1.0 + ((2.0f32 / std::f32::consts::PI).sqrt() * (x + 0.044_715 * x * x * x)).tanh())
}

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    /// The token-type-0 row: one segment, so every token adds the same row.
    segment: Vec<f32>,
    norm: Norm,
}

impl Embeddings {
    fn load(vb: VarBuilder, c: &BertConfig) -> Result<Self> {
        let token_types = embedding(c.type_vocab_size, c.hidden_size, vb.pp("token_type_embeddings"))?;
        Ok(Embeddings {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(c.max_position_embeddings, c.hidden_size, vb.pp("position_embeddings"))?,
            segment: token_types.embeddings().get(0)?.to_vec1()?,
            norm: Norm::load(vb.pp("LayerNorm"), c.hidden_size, c.layer_norm_eps)?,
        })
    }

    /// `ids`, `positions`: (tokens) -> rows of hidden values.
    fn forward(&self, ids: &Tensor, positions: &Tensor) -> Result<Vec<f32>> {
        let mut x: Vec<f32> = self.words.forward(ids)?.flatten_all()?.to_vec1()?;
        let p: Vec<f32> = self.positions.forward(positions)?.flatten_all()?.to_vec1()?;
        add_norm(&mut x, &self.segment, &p, &self.norm);
        Ok(x)
    }
}

struct Layer {
    /// Query, key and value in one matmul (hidden -> 3 x hidden): one pass
    /// over the activations instead of three. The query third is pre-scaled
    /// by 1/sqrt(head_dim), so the scores need no separate scaling pass.
    qkv: Dense,
    attn_out: Dense,
    attn_norm: Norm,
    inter: Dense,
    out: Dense,
    out_norm: Norm,
    heads: usize,
    head_dim: usize,
    gelu_exact: bool,
}

impl Layer {
    fn load(vb: VarBuilder, c: &BertConfig) -> Result<Self> {
        let h = c.hidden_size;
        let heads = c.num_attention_heads;
        let head_dim = h / heads;
        let att = vb.pp("attention");
        let part = |name: &str| -> Result<(Tensor, Tensor)> {
            let vb = att.pp("self").pp(name);
            Ok((vb.get((h, h), "weight")?, vb.get(h, "bias")?))
        };
        let ((wq, bq), (wk, bk), (wv, bv)) = (part("query")?, part("key")?, part("value")?);
        let scale = 1.0 / (head_dim as f64).sqrt();
        let (wq, bq) = ((wq * scale)?, (bq * scale)?);
        let qkv = Dense::new(&Tensor::cat(&[&wq, &wk, &wv], 0)?, &Tensor::cat(&[&bq, &bk, &bv], 0)?)?;
        Ok(Layer {
            qkv,
            attn_out: Dense::load(att.pp("output").pp("dense"), h, h)?,
            attn_norm: Norm::load(att.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
            inter: Dense::load(vb.pp("intermediate").pp("dense"), h, c.intermediate_size)?,
            out: Dense::load(vb.pp("output").pp("dense"), c.intermediate_size, h)?,
            out_norm: Norm::load(vb.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
            heads,
            head_dim,
            gelu_exact: c.gelu_exact,
        })
    }

    /// `x`: rows of hidden values, the texts of `spans` end to end.
    fn forward(&self, x: Vec<f32>, spans: &[Span], dev: &Device) -> Result<Vec<f32>> {
        let hidden = self.heads * self.head_dim;
        let tokens = x.len() / hidden;
        let input = Tensor::from_slice(&x, (tokens, hidden), dev)?;
        let mut qkv = self.qkv.product(&input)?;
        for row in qkv.chunks_exact_mut(3 * hidden) {
            row.iter_mut().zip(&self.qkv.bias).for_each(|(v, b)| *v += b);
        }
        let mut context = vec![0f32; tokens * hidden];
        // the product as a tensor, made only when some text is long enough for gemm
        let mut qkv_tensor = None;
        for s in spans {
            let rows = &mut context[s.start * hidden..(s.start + s.len) * hidden];
            if s.len <= SHORT_TEXT {
                self.attend_short(&qkv[s.start * 3 * hidden..(s.start + s.len) * 3 * hidden], rows);
                continue;
            }
            let qkv = match &qkv_tensor {
                Some(t) => t,
                None => qkv_tensor.insert(Tensor::from_slice(&qkv, (tokens, 3 * hidden), dev)?),
            };
            // (len, 3 x hidden) -> (3, heads, len, head_dim): one copy for q, k and v
            let t = qkv.narrow(0, s.start, s.len)?.reshape((s.len, 3, self.heads, self.head_dim))?;
            let t = t.permute((1, 2, 0, 3))?.contiguous()?;
            let (q, k, v) = (t.get(0)?, t.get(1)?, t.get(2)?);
            let probs = candle_nn::ops::softmax_last_dim(&q.matmul(&k.t()?)?)?;
            // (heads, len, head_dim) -> (len, hidden)
            let c: Vec<f32> = probs.matmul(&v)?.transpose(0, 1)?.flatten_all()?.to_vec1()?;
            rows.copy_from_slice(&c);
        }
        let context = Tensor::from_vec(context, (tokens, hidden), dev)?;
        let mut attended = self.attn_out.product(&context)?;
        add_norm(&mut attended, &self.attn_out.bias, &x, &self.attn_norm);
        let mut inner = self.inter.product(&Tensor::from_slice(&attended, (tokens, hidden), dev)?)?;
        bias_gelu(&mut inner, &self.inter.bias, self.gelu_exact);
        let inner_len = self.inter.bias.len();
        let mut out = self.out.product(&Tensor::from_vec(inner, (tokens, inner_len), dev)?)?;
        add_norm(&mut out, &self.out.bias, &attended, &self.out_norm);
        Ok(out)
    }

    /// Attention of one short text in plain loops: `qkv` is its rows of
    /// (query, key, value), `context` receives its rows of hidden values.
    /// A dozen-token query's scores are a few thousand multiply-adds a head;
    /// the tensor route costs more than that in reshapes, copies and matmul
    /// set-up (candle reads /proc/cpuinfo on every matmul to size its threads).
    fn attend_short(&self, qkv: &[f32], context: &mut [f32]) {
        let (hidden, d) = (self.heads * self.head_dim, self.head_dim);
        let len = qkv.len() / (3 * hidden);
        let mut probs = [0f32; SHORT_TEXT];
        for h in 0..self.heads {
            let at = |row: usize, part: usize| &qkv[row * 3 * hidden + part * hidden + h * d..][..d];
            for i in 0..len {
                let q = at(i, 0);
                for (j, p) in probs[..len].iter_mut().enumerate() {
                    *p = dot(q, at(j, 1));
                }
                let max = probs[..len].iter().fold(f32::NEG_INFINITY, |m, &p| m.max(p));
                let mut sum = 0.0;
                for p in &mut probs[..len] {
                    *p = (*p - max).exp();
                    sum += *p;
                }
                let out = &mut context[i * hidden + h * d..][..d];
                for (j, p) in probs[..len].iter().enumerate() {
                    let w = p / sum;
                    out.iter_mut().zip(at(j, 2)).for_each(|(o, v)| *o += w * v);
                }
            }
        }
    }
}

/// Longest text whose attention runs in [`Layer::attend_short`]: past about
/// this many tokens gemm's kernels win over the plain loops.
const SHORT_TEXT: usize = 32;

/// A dot product in eight lanes, so the compiler can keep it in SIMD registers.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ac.zip(bc) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
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

    /// Token vectors, rows of hidden values, for texts laid end to end:
    /// `texts[i]` is the token ids of text i, whose rows are `spans[i]`.
    pub fn forward(&self, texts: &[&[u32]], device: &Device) -> Result<(Vec<f32>, Vec<Span>)> {
        let total: usize = texts.iter().map(|t| t.len()).sum();
        let (mut ids, mut positions, mut spans) =
            (Vec::with_capacity(total), Vec::with_capacity(total), Vec::with_capacity(texts.len()));
        for t in texts {
            spans.push(Span { start: ids.len(), len: t.len() });
            ids.extend_from_slice(t);
            positions.extend(0..t.len() as u32);
        }
        let ids = Tensor::from_vec(ids, total, device)?;
        let positions = Tensor::from_vec(positions, total, device)?;
        let mut x = self.embeddings.forward(&ids, &positions)?;
        for layer in &self.layers {
            x = layer.forward(x, &spans, device)?;
        }
        Ok((x, spans))
    }
}

#[cfg(test)]
#[path = "bert_reference.rs"]
pub(super) mod reference;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fused_row_ops_match_candles_ops() {
        let dev = Device::Cpu;
        // gelu over [-12, 12): the fast erf against candle's (libm) erf
        let xs: Vec<f32> = (0..24_000).map(|i| i as f32 / 1000.0 - 12.0).collect();
        let want: Vec<f32> = Tensor::new(xs.as_slice(), &dev).unwrap().gelu_erf().unwrap().to_vec1().unwrap();
        let mut got = xs.clone();
        bias_gelu(&mut got, &[0.0], true);
        let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst < 2e-6, "gelu differs by {worst}");
        let want: Vec<f32> = Tensor::new(xs.as_slice(), &dev).unwrap().gelu().unwrap().to_vec1().unwrap();
        let mut got = xs.clone();
        bias_gelu(&mut got, &[0.0], false);
        let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst < 1e-5, "tanh gelu differs by {worst}");

        // layer norm of x + bias + residual against candle_nn's fused layer norm
        let n = 8;
        let x: Vec<f32> = (0..3 * n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.1).collect();
        let res: Vec<f32> = (0..3 * n).map(|i| (i % 5) as f32 * 0.3).collect();
        let norm = Norm { gamma: (0..n).map(|i| 1.0 + i as f32 * 0.05).collect(), beta: vec![0.25; n], eps: 1e-12 };
        let summed: Vec<f32> = x.iter().zip(&res).enumerate().map(|(i, (a, r))| a + bias[i % n] + r).collect();
        let t = Tensor::from_vec(summed, (3, n), &dev).unwrap();
        let want: Vec<f32> = candle_nn::ops::layer_norm(
            &t,
            &Tensor::new(norm.gamma.as_slice(), &dev).unwrap(),
            &Tensor::new(norm.beta.as_slice(), &dev).unwrap(),
            norm.eps,
        )
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
        let mut got = x;
        add_norm(&mut got, &bias, &res, &norm);
        let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst < 1e-5, "layer norm differs by {worst}");
    }
}
