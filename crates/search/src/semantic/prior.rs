//! The built-in tools' intent prior: a softmax classifier over quiver's own
//! tools, on the query's sentence vector, trained offline
//! (`bench/search/prior/train_prior.py`) on their descriptions, phrasings,
//! two blind batches of example requests and the native dev sets' requests,
//! with requests for third-party tools as one more class ("not one of ours").
//!
//! Why: cosine similarity ranks each tool by its nearest text alone, so a
//! request that shares one striking word with a sibling's example ("read
//! issue 77 with its comments" and `github_comment`) goes to the sibling. A
//! classifier trained on every tool's examples at once learns which words
//! tell siblings apart. Two classifiers are trained on the same rows, softmax
//! regression and a network with one hidden layer, and their probabilities
//! averaged. The result adds to the fused score of the built-in tools it
//! knows, as a probability or its log (`FusionParams::w_prior`,
//! `w_prior_log`, `PriorScores::gain`); an MCP server's tools get nothing
//! from it, and a request the classifier reads as one for a third-party tool
//! leaves the built-in ones little to gain.
//!
//! The weights mean something only for the model they were trained on, so
//! they carry that model's vectors of a few probe sentences: the committed
//! weights are the static embedding's, and a request is read for them
//! through that model whichever model ranks by meaning.

use std::sync::OnceLock;

use serde::Deserialize;

use super::model::Encoder;
use crate::{PriorScores, SearchDoc};

/// The committed weights, trained on the static embedding compiled into the
/// binary (`bench/search/prior/retrain.sh`). One prior serves every model:
/// a transformer's ranking reads the request through the static model for
/// it (`SemanticIndex`), which ranked MiniLM's fusion better than a prior
/// trained on MiniLM's own vectors (bench/search/runs/2026-12-05/one-prior.txt).
const EMBEDDED: &str = include_str!("static_prior.json");

/// How close a probe's vector must come to the trained one (cosine): the
/// same model in another precision or runtime lands above 0.999; another
/// model is far below.
const PROBE_MATCH: f32 = 0.995;

#[derive(Debug, Deserialize)]
struct Probe {
    text: String,
    vector: Vec<f32>,
}

#[derive(Debug, Deserialize)]
struct PriorFile {
    model_probes: Vec<Probe>,
    classes: Vec<String>,
    other: Option<String>,
    dim: usize,
    weights: Vec<Vec<f32>>,
    bias: Vec<f32>,
    #[serde(default)]
    hidden: Option<HiddenFile>,
}

#[derive(Debug, Deserialize)]
struct HiddenFile {
    weights_in: Vec<Vec<f32>>,
    bias_in: Vec<f32>,
    weights_out: Vec<Vec<f32>>,
    bias_out: Vec<f32>,
}

/// The second classifier of a prior that has one: a hidden layer of ReLU
/// units over the query vector, then one logit per class. Softmax
/// regression weighs each word apart; the hidden layer can weigh words
/// together.
#[derive(Debug)]
struct Hidden {
    /// units x dim, row-major.
    weights_in: Vec<f32>,
    bias_in: Vec<f32>,
    /// classes x units, row-major.
    weights_out: Vec<f32>,
    bias_out: Vec<f32>,
}

/// A trained prior: one weight row and bias per class, and optionally a
/// hidden-layer network whose probabilities are averaged with them.
#[derive(Debug)]
pub struct IntentPrior {
    probes: Vec<Probe>,
    classes: Vec<String>,
    /// The class of third-party requests, if the weights have one.
    other: Option<String>,
    dim: usize,
    /// classes x dim, row-major.
    weights: Vec<f32>,
    bias: Vec<f32>,
    hidden: Option<Hidden>,
}

impl IntentPrior {
    /// Reads a weights file; an inconsistent one is an error, not a prior.
    pub fn parse(text: &str) -> Result<IntentPrior, String> {
        let f: PriorFile = serde_json::from_str(text).map_err(|e| format!("intent prior: {e}"))?;
        let c = f.classes.len();
        if c == 0 || f.bias.len() != c || f.weights.len() != c || f.weights.iter().any(|w| w.len() != f.dim) {
            return Err(format!("intent prior: {c} classes, {} biases, {} weight rows", f.bias.len(), f.weights.len()));
        }
        if f.model_probes.is_empty() || f.model_probes.iter().any(|p| p.vector.len() != f.dim) {
            return Err("intent prior: no model probes of the weights' dimension".into());
        }
        if let Some(o) = &f.other
            && !f.classes.contains(o)
        {
            return Err(format!("intent prior: the other class {o:?} is not a class"));
        }
        let hidden = f.hidden.map(|h| Hidden::check(h, f.dim, c)).transpose()?;
        Ok(IntentPrior {
            probes: f.model_probes,
            classes: f.classes,
            other: f.other,
            dim: f.dim,
            weights: f.weights.concat(),
            bias: f.bias,
            hidden,
        })
    }

    /// The committed prior (parsed once; a unit test keeps it parsing).
    pub fn embedded() -> Option<&'static IntentPrior> {
        static PRIOR: OnceLock<Option<IntentPrior>> = OnceLock::new();
        PRIOR.get_or_init(|| IntentPrior::parse(EMBEDDED).ok()).as_ref()
    }

    /// The tools (and the other class) the prior knows, in weight order.
    pub fn classes(&self) -> &[String] {
        &self.classes
    }

    /// The built-in tools the prior knows: its classes but the other class.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.classes.iter().map(String::as_str).filter(|c| Some(*c) != self.other.as_deref())
    }

    /// Whether `encoder` is the model the weights were trained on: its
    /// vectors of the probe sentences match the stored ones.
    pub fn fits(&self, encoder: &Encoder) -> bool {
        encoder.dim() == self.dim
            && self
                .probes
                .iter()
                .all(|p| encoder.encode_query(&p.text).is_ok_and(|v| cosine(&v, &p.vector) >= PROBE_MATCH))
    }

    /// Class probabilities for a query vector: the regression's, averaged
    /// with the hidden layer's when the prior has one.
    pub fn probabilities(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dim {
            return vec![0.0; self.classes.len()];
        }
        let mut p = softmax(&affine(&self.weights, &self.bias, query));
        if let Some(h) = &self.hidden {
            let units: Vec<f32> = affine(&h.weights_in, &h.bias_in, query).into_iter().map(|u| u.max(0.0)).collect();
            for (a, b) in p.iter_mut().zip(softmax(&affine(&h.weights_out, &h.bias_out, &units))) {
                *a = 0.5 * (*a + b);
            }
        }
        p
    }

    /// For each class, the doc it is in `docs`: a built-in tool of the same
    /// name. `None` when no doc is one the prior knows. Built-in means no
    /// server and the manifest's example requests, which only quiver's own
    /// tools carry: a catalog file's third-party tool has no server either,
    /// and its `read_file` is not the one the prior was trained on.
    pub fn docs_of_classes(&self, docs: &[SearchDoc]) -> Option<Vec<Option<u32>>> {
        let built_in = |d: &SearchDoc| d.server.is_none() && !d.examples.is_empty();
        let of: Vec<Option<u32>> = self
            .classes
            .iter()
            .map(|c| docs.iter().position(|d| built_in(d) && &d.name == c).map(|d| d as u32))
            .collect();
        of.iter().any(Option::is_some).then_some(of)
    }

    /// Per doc of a catalog, the probability of the built-in tool it is
    /// (`None` for every other doc), given
    /// [`docs_of_classes`](Self::docs_of_classes).
    pub fn doc_probabilities(&self, query: &[f32], doc_of_class: &[Option<u32>], n_docs: usize) -> PriorScores {
        let mut out = PriorScores { per_doc: vec![None; n_docs] };
        for (p, d) in self.probabilities(query).into_iter().zip(doc_of_class) {
            if let Some(slot) = d.and_then(|d| out.per_doc.get_mut(d as usize)) {
                *slot = Some(p);
            }
        }
        out
    }
}

impl Hidden {
    fn check(h: HiddenFile, dim: usize, classes: usize) -> Result<Hidden, String> {
        let units = h.bias_in.len();
        if units == 0
            || h.weights_in.len() != units
            || h.weights_in.iter().any(|w| w.len() != dim)
            || h.weights_out.len() != classes
            || h.bias_out.len() != classes
            || h.weights_out.iter().any(|w| w.len() != units)
        {
            return Err(format!(
                "intent prior: a hidden layer of {units} units with {} input rows and {} output rows for {classes} classes",
                h.weights_in.len(),
                h.weights_out.len()
            ));
        }
        Ok(Hidden {
            weights_in: h.weights_in.concat(),
            bias_in: h.bias_in,
            weights_out: h.weights_out.concat(),
            bias_out: h.bias_out,
        })
    }
}

/// `W x + b` for a row-major `W` with one row per entry of `b`.
fn affine(weights: &[f32], bias: &[f32], x: &[f32]) -> Vec<f32> {
    weights.chunks_exact(x.len()).zip(bias).map(|(w, b)| b + w.iter().zip(x).map(|(a, q)| a * q).sum::<f32>()).collect()
}

fn softmax(logits: &[f32]) -> Vec<f32> {
    let top = logits.iter().copied().fold(f32::MIN, f32::max);
    let exp: Vec<f32> = logits.iter().map(|z| (z - top).exp()).collect();
    let sum: f32 = exp.iter().sum();
    exp.iter().map(|e| e / sum).collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na > 0.0 && nb > 0.0 { dot / (na * nb) } else { 0.0 }
}

#[cfg(test)]
#[path = "prior_tests.rs"]
mod tests;
