//! What a provider's prefix cache sees of a request, so every request can be
//! recorded with its size and the bytes it shares with the previous one.
//!
//! The linearization follows the order providers cache in (tools, then the
//! system prompt, then the messages; the scripted server keys its cache-hit
//! accounting the same way), each part as canonical JSON so the same content
//! always gives the same bytes.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::message::{ModelRequest, Usage};

/// One model request as the transcript records it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    pub turn: u32,
    pub request_hash: String,
    pub bytes: u64,
    /// `None` for the first request of a run (nothing to compare with).
    pub shared_prefix_bytes: Option<u64>,
    pub head_hash: String,
    pub tools: u64,
    pub tail: Vec<String>,
    /// `None` when the provider failed before answering.
    pub usage: Option<Usage>,
}

/// The request's bytes in cache order.
pub fn linearize(request: &ModelRequest) -> String {
    let messages = serde_json::to_value(&request.messages).unwrap_or(Value::Null);
    let mut out = quiver_engine::canonical::to_string(&request.tools);
    out.push_str(&quiver_engine::canonical::to_string(&Value::String(request.system.clone())));
    out.push_str(&quiver_engine::canonical::to_string(&messages));
    out
}

pub fn sha256(bytes: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes.as_bytes())))
}

pub fn shared_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// Tokens for `bytes` at about four bytes a token (English text and JSON in
/// common tokenizers); used only to decide when to compact, never billed.
pub fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}
