//! The static embedding compiled into the binary (`crates/search/static-model/`,
//! distilled from all-MiniLM-L6-v2; see its README), and a [`MeaningModel`]
//! over it. Its vectors take microseconds, so a catalog is indexed at once,
//! on the caller's thread: the first search already ranks by meaning, and the
//! same request ranks the same way in every run (no "still building" window).

use std::sync::{Arc, OnceLock};

use super::static_model::StaticModel;
use super::{Encoder, SemanticIndex};
use crate::SearchDoc;
use crate::fusion::{FusionParams, PriorScores};
use crate::meaning::{CatalogMeaning, MeaningModel, MeaningState};

const META: &[u8] = include_bytes!("../../static-model/static.json");
const TOKENIZER: &[u8] = include_bytes!("../../static-model/tokenizer.json");
const TABLE: &[u8] = include_bytes!("../../static-model/embeddings.q8");

/// The model compiled into the binary could not be read: a broken build,
/// since its bytes are fixed at compile time. Holds the loader's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the embedded search model: {0}")]
pub struct EmbeddedModelError(String);

fn load() -> Result<StaticModel, EmbeddedModelError> {
    StaticModel::from_static(META, TOKENIZER, TABLE).map_err(EmbeddedModelError)
}

impl Encoder {
    /// The static embedding compiled into this binary: search ranks by
    /// meaning with nothing downloaded. Loaded once.
    pub fn embedded() -> Result<Arc<Encoder>, EmbeddedModelError> {
        static EMBEDDED: OnceLock<Result<Arc<Encoder>, EmbeddedModelError>> = OnceLock::new();
        EMBEDDED.get_or_init(|| load().map(|m| Arc::new(Encoder::from_static(m)))).clone()
    }
}

/// Tool search's meaning with nothing downloaded: the embedded static model.
#[derive(Debug, Default, Clone, Copy)]
pub struct EmbeddedModel;

struct Indexed {
    encoder: Arc<Encoder>,
    index: SemanticIndex,
}

/// One catalog indexed with an already loaded encoder.
struct ReadyCatalog(Result<Indexed, String>);

impl CatalogMeaning for ReadyCatalog {
    fn scores(&self, query: &str) -> Option<Vec<f32>> {
        let built = self.0.as_ref().ok()?;
        Some(built.index.scores(&built.encoder.encode_query(query).ok()?))
    }

    fn scores_and_prior(&self, query: &str) -> Option<(Vec<f32>, Option<PriorScores>)> {
        let built = self.0.as_ref().ok()?;
        let q = built.encoder.encode_query(query).ok()?;
        Some((built.index.scores(&q), built.index.prior(query, &q)))
    }

    fn state(&self) -> MeaningState {
        match &self.0 {
            Ok(_) => MeaningState::Ready,
            Err(e) => MeaningState::Failed(e.clone()),
        }
    }

    fn fusion(&self) -> FusionParams {
        self.0.as_ref().map_or_else(|_| FusionParams::default(), |b| b.encoder.fusion())
    }

    fn model(&self) -> &'static str {
        "embedded"
    }
}

impl MeaningModel for EmbeddedModel {
    fn index(&self, docs: &[SearchDoc]) -> Arc<dyn CatalogMeaning> {
        let built = Encoder::embedded().map_err(|e| e.to_string()).and_then(|encoder| {
            let index = SemanticIndex::build(&encoder, docs, None).map_err(|e| e.to_string())?;
            Ok(Indexed { encoder, index })
        });
        Arc::new(ReadyCatalog(built))
    }
}
