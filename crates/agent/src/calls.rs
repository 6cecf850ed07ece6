//! Tool calls as messy servers send them, made into calls the loop can run.
//!
//! Two rules both wires share:
//! - A fragment that repeats a call's id continues that call while the call's
//!   arguments are still incomplete JSON (LiteLLM's Anthropic adapter opens a
//!   new `tool_use` block with the same id for every fragment; some
//!   OpenAI-compatible servers repeat `id` and `name` on every delta). Once a
//!   call's arguments are a complete JSON value, a further call with the same
//!   id is a distinct call that reused the id.
//! - Within one response every call has its own id: an empty id becomes
//!   `call_{position}`, a repeated one `{id}_{position}`. Deterministic, so a
//!   replayed response gets the same ids, and never sent back duplicated (the
//!   provider pairs each tool result with its call by id).

use crate::message::ToolCall;

/// Whether `arguments` already holds a whole JSON value (so more text after
/// it cannot belong to the same call).
pub(crate) fn complete_json(arguments: &str) -> bool {
    !arguments.trim().is_empty() && serde_json::from_str::<serde_json::Value>(arguments).is_ok()
}

/// Whether a fragment arriving under an id already seen continues that call
/// (`true`) or starts a distinct call that reuses the id (`false`).
pub(crate) fn continues(arguments_so_far: &str, fragment: &str) -> bool {
    fragment.is_empty() || !complete_json(arguments_so_far)
}

/// A call's arguments as they go back to the model in the history: a call
/// that took none (the model sent an empty string) goes back as `{}`, the
/// JSON object every provider's own models write. Servers that read the
/// history's arguments as JSON (vLLM's and some llama.cpp chat templates)
/// refuse an empty string with a 400, and the run would end there. The same
/// text on every turn, so the request's prefix only grows.
pub fn replayed_arguments(arguments: &str) -> &str {
    if arguments.trim().is_empty() { "{}" } else { arguments }
}

/// Gives every call of one response a distinct, non-empty id (see the module
/// doc). Returns how many ids were changed.
pub fn make_ids_unique(calls: &mut [ToolCall]) -> usize {
    let mut changed = 0;
    for i in 0..calls.len() {
        let taken = |id: &str, calls: &[ToolCall]| calls[..i].iter().any(|c| c.id == id);
        if !calls[i].id.is_empty() && !taken(&calls[i].id, calls) {
            continue;
        }
        let base = if calls[i].id.is_empty() { "call".to_string() } else { calls[i].id.clone() };
        let mut id = format!("{base}_{i}");
        while taken(&id, calls) || calls[i + 1..].iter().any(|c| c.id == id) {
            id.push('_');
        }
        tracing::warn!(given = %calls[i].id, assigned = %id, name = %calls[i].name, "tool call id missing or repeated; assigned a unique one");
        calls[i].id = id;
        changed += 1;
    }
    changed
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
