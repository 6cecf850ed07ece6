//! Tool search: a BM25F-family lexical ranker for tool catalogs.
//!
//! Documents are indexed by field (name words, compound-name pieces, aliases,
//! domain, server, description, prompt snippet, parameter names and
//! descriptions), each with its own weight and length normalisation. Queries
//! are expanded with generic synonyms, abbreviations, compound joins/splits
//! and prefix variants at reduced weight; results get a bonus for covering
//! the tool's name. Ranking is deterministic: scores are summed in a fixed
//! order and ties are broken by name.

#[cfg(feature = "bench")]
pub mod bench;
mod command;
mod fusion;
mod index;
mod intent;
mod learned;
mod meaning;
mod objects;
mod params;
mod pasted;
#[cfg(test)]
#[cfg(feature = "bench")]
#[path = "quality_tests.rs"]
mod quality_tests;
mod query;
mod rank;
mod schema;
#[cfg(feature = "semantic")]
pub mod semantic;
mod several;
mod signals;
mod synonyms;
mod tokenize;
mod tool_asks;

pub use fusion::{
    FusionMethod, FusionParams, PriorScores, Ranking, SemanticScores, confident, confident_margin, fuse, fuse_scores,
    learned_candidates,
};
pub use index::{SearchDoc, SearchIndex};
pub use learned::{FEATURES as LEARNED_FEATURES, LearnedWeights};
pub use meaning::{CatalogMeaning, MeaningModel, MeaningState};
pub use params::{FIELD_NAMES, Field, NFIELDS, RankParams, UnknownParam};
pub use rank::Hit;
pub use schema::params_from_schema;
