//! [`MeaningModel`] over a model directory: the model loads and each catalog's
//! vectors build on a background thread, so no search waits for them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::{Encoder, SemanticIndex};
use crate::SearchDoc;
use crate::fusion::{FusionParams, PriorScores};
use crate::meaning::{CatalogMeaning, MeaningModel, MeaningState};

/// The model once loaded, or why it could not be (kept, so a broken model is
/// reported once rather than re-read on every catalog).
type LoadedEncoder = Option<Result<Arc<Encoder>, String>>;

/// A model directory, loaded on first use by a background thread, and the
/// directory tool vectors are cached in.
pub struct BackgroundModel {
    dir: PathBuf,
    cache_dir: Option<PathBuf>,
    /// Loaded once, shared by every catalog (a host rebuilds its engine, and
    /// so its catalog, when MCP tool lists change).
    encoder: Arc<Mutex<LoadedEncoder>>,
    /// The last catalog built: a rebuilt catalog (one MCP server's list
    /// changed) reuses its vectors, even when no disk cache is writable.
    last: Arc<Mutex<Option<Arc<SemanticIndex>>>>,
}

impl BackgroundModel {
    /// Nothing is read yet: the first [`MeaningModel::index`] starts the load.
    pub fn new(dir: &Path, cache_dir: Option<&Path>) -> BackgroundModel {
        BackgroundModel {
            dir: dir.to_path_buf(),
            cache_dir: cache_dir.map(Path::to_path_buf),
            encoder: Arc::new(Mutex::new(None)),
            last: Arc::new(Mutex::new(None)),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn encoder_of(dir: &Path, slot: &Mutex<LoadedEncoder>) -> Result<Arc<Encoder>, String> {
    // Held across the load: a second catalog waits for the first load
    // instead of reading the weights again.
    let mut slot = slot.lock();
    slot.get_or_insert_with(|| Encoder::load(dir).map(Arc::new).map_err(|e| e.to_string())).clone()
}

struct Built {
    encoder: Arc<Encoder>,
    index: Arc<SemanticIndex>,
}

/// One catalog's vectors, filled in by the background thread.
struct BackgroundCatalog {
    built: OnceLock<Result<Built, String>>,
}

impl CatalogMeaning for BackgroundCatalog {
    fn scores(&self, query: &str) -> Option<Vec<f32>> {
        let built = self.built.get()?.as_ref().ok()?;
        let q = built.encoder.encode_query(query).ok()?;
        Some(built.index.scores(&q))
    }

    fn scores_and_prior(&self, query: &str) -> Option<(Vec<f32>, Option<PriorScores>)> {
        let built = self.built.get()?.as_ref().ok()?;
        let q = built.encoder.encode_query(query).ok()?;
        Some((built.index.scores(&q), built.index.prior(query, &q)))
    }

    fn fusion(&self) -> FusionParams {
        match self.built.get() {
            Some(Ok(b)) => b.encoder.fusion(),
            _ => FusionParams::default(),
        }
    }

    fn state(&self) -> MeaningState {
        match self.built.get() {
            None => MeaningState::Building,
            Some(Ok(_)) => MeaningState::Ready,
            Some(Err(e)) => MeaningState::Failed(e.clone()),
        }
    }
}

impl MeaningModel for BackgroundModel {
    fn index(&self, docs: &[SearchDoc]) -> Arc<dyn CatalogMeaning> {
        let catalog = Arc::new(BackgroundCatalog { built: OnceLock::new() });
        let (out, docs, dir, cache, slot, last) = (
            Arc::clone(&catalog),
            docs.to_vec(),
            self.dir.clone(),
            self.cache_dir.clone(),
            Arc::clone(&self.encoder),
            Arc::clone(&self.last),
        );
        let job = move || {
            let built = encoder_of(&dir, &slot).and_then(|encoder| {
                let previous = last.lock().clone();
                let index = SemanticIndex::build_reusing(&encoder, &docs, cache.as_deref(), previous.as_deref())
                    .map(Arc::new)
                    .map_err(|e| e.to_string())?;
                *last.lock() = Some(Arc::clone(&index));
                Ok(Built { encoder, index })
            });
            let _ = out.built.set(built);
        };
        if let Err(e) = std::thread::Builder::new().name("quiver-search-vectors".into()).spawn(job) {
            let _ = catalog.built.set(Err(format!("could not start the indexing thread: {e}")));
        }
        catalog
    }
}
