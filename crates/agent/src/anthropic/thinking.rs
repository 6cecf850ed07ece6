//! Keeping a response's thinking so that it can go back unmodified.
//!
//! A tool-use turn with extended thinking must be replayed with its
//! thinking blocks exactly as they came: each `thinking` block with its own
//! `signature`, and each `redacted_thinking` block (the encrypted `data` the
//! API sends instead when its safety systems flag the reasoning), in order
//! (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).
//! The usual answer has one `thinking` block: its signature alone is kept in
//! the assistant message's `reasoning_signature` (next to the text in
//! `reasoning`), as sessions have always been recorded. Anything else
//! (several blocks, a redacted one) is kept as the canonical JSON array of
//! the blocks, which a merged text and one signature could not rebuild.

use serde_json::{Value, json};

/// The block types replayed from a kept array (a Responses session's
/// reasoning items, kept the same way, are not Anthropic's to send).
const THINKING_TYPES: [&str; 2] = ["thinking", "redacted_thinking"];

/// What an assistant message keeps of the response's thinking `blocks` (in
/// their order, each as the API sent it): `None` without a signed block.
pub(super) fn kept(blocks: &[Value]) -> Option<String> {
    match blocks {
        [] => None,
        [only] if only.get("type").and_then(Value::as_str) == Some("thinking") => {
            only.get("signature").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
        }
        _ => Some(quiver_engine::canonical::to_string(&Value::Array(blocks.to_vec()))),
    }
}

/// The thinking blocks an assistant message is replayed with. Unsigned
/// thinking (e.g. from another provider) is dropped: it cannot be verified.
pub(super) fn replayed(reasoning: Option<&str>, kept: Option<&str>) -> Vec<Value> {
    let Some(kept) = kept else { return Vec::new() };
    if let Ok(Value::Array(blocks)) = serde_json::from_str::<Value>(kept) {
        return blocks
            .into_iter()
            .filter(|b| b.get("type").and_then(Value::as_str).is_some_and(|t| THINKING_TYPES.contains(&t)))
            .collect();
    }
    match reasoning {
        Some(thinking) => vec![json!({"type": "thinking", "thinking": thinking, "signature": kept})],
        None => Vec::new(),
    }
}

#[cfg(test)]
#[path = "thinking_tests.rs"]
mod tests;
