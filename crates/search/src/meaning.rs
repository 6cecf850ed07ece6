//! The seam between a caller (the engine) and semantic ranking. The traits are
//! compiled without the `semantic` feature, so the engine can accept a model
//! without depending on candle; the implementation that runs one,
//! [`crate::semantic::BackgroundModel`], is behind the feature.

use std::sync::Arc;

use crate::SearchDoc;
use crate::fusion::{FusionParams, PriorScores};

/// Where a catalog's tool vectors are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeaningState {
    /// Still being computed (or read from the cache) off the request path.
    Building,
    Ready,
    /// The model could not load or encode; searches stay lexical.
    Failed(String),
}

/// Semantic scores over one catalog (the docs it was built from, in order).
pub trait CatalogMeaning: Send + Sync {
    /// One similarity per doc for `query`, or `None` while the vectors are
    /// not ready or the model failed: the caller ranks lexically then.
    fn scores(&self, query: &str) -> Option<Vec<f32>>;

    /// [`scores`](Self::scores) and, per doc, the built-in tools' intent
    /// prior when one applies to this model and catalog (one encode for both).
    fn scores_and_prior(&self, query: &str) -> Option<(Vec<f32>, Option<PriorScores>)> {
        self.scores(query).map(|s| (s, None))
    }

    fn state(&self) -> MeaningState;

    /// How this model's similarities are fused with the lexical ranking.
    fn fusion(&self) -> FusionParams {
        FusionParams::default()
    }

    /// Which model ranks, for a person reading the result: "embedded" (the
    /// static model in the binary) or "model" (an installed transformer).
    fn model(&self) -> &'static str {
        "model"
    }
}

/// A sentence-embedding model a catalog can be indexed with.
pub trait MeaningModel: Send + Sync {
    /// Starts indexing `docs` and returns at once; the handle answers
    /// `scores` once the vectors are ready.
    fn index(&self, docs: &[SearchDoc]) -> Arc<dyn CatalogMeaning>;
}
