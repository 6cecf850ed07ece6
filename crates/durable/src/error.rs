//! One error type for the store; each variant says what the caller can do.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// SQLite refused or failed; the transaction was rolled back, nothing was written.
    #[error("durable store: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("durable store: {context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no {kind} with id '{id}'")]
    NotFound { kind: &'static str, id: String },
    /// The request is well-formed but not allowed in the record's current state.
    #[error("{0}")]
    Conflict(String),
    /// The caller's input is wrong (a cron pattern, a time zone, an id's shape).
    #[error("{0}")]
    Invalid(String),
    /// The database was written by a newer quiver: refuse rather than guess.
    #[error(
        "durable store at {path} has schema version {found}, newer than this quiver understands ({known}); upgrade quiver"
    )]
    TooNew { path: String, found: i64, known: i64 },
    #[error("durable store: corrupt record: {0}")]
    Corrupt(String),
}

impl StoreError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        StoreError::Io { context: context.into(), source }
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}
