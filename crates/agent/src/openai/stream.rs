//! Assembling a streamed `chat.completion.chunk` sequence into one response.
//!
//! Tool calls arrive as deltas keyed by `index`: the first carries `id` and
//! `function.name`, later ones only argument fragments (split anywhere, even
//! inside a JSON string), and several calls may be open at once. Usage comes
//! in a final chunk with empty `choices` when `include_usage` was asked for.
//!
//! A refusal comes as `delta.refusal` fragments instead of `content`; it is
//! kept as the answer's text (as the non-streamed `message.refusal` is).
//!
//! Compatible servers vary: some repeat `id` and `name` on every delta, some
//! leave `index` out, some send every call at index 0; a delta is matched to
//! its call by id first, then by index (see [`crate::calls`]). The legacy
//! `function_call` delta (function calling before `tools`) is one more call,
//! unless the same delta has `tool_calls` (llama-cpp-python sends both, the
//! same call twice).

use std::collections::BTreeMap;

use serde_json::Value;

use super::body::parse_usage;
use crate::http::StreamAssembler;
use crate::message::{FinishReason, ModelResponse, StreamEvent, ToolCall, Usage};
use crate::provider::Sink;

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    /// The wire `index` it opened under.
    index: Option<u64>,
}

#[derive(Debug, Default)]
pub struct ChatStreamAssembler {
    text: String,
    reasoning: String,
    /// Calls in the order they opened; the position is the events' `index`.
    calls: Vec<PartialCall>,
    /// The wire's `index` → position in `calls`.
    by_index: BTreeMap<u64, usize>,
    /// The position of the legacy `function_call`, once one arrived.
    legacy: Option<usize>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
    chunks: usize,
    /// The error `push` last returned is one OpenAI calls temporary.
    transient: bool,
}

/// Whether an OpenAI error object (`{"type", "code", "message"}`) names a
/// kind OpenAI documents as temporary: `server_error` (what a 500 says) and
/// `rate_limit_exceeded` (a 429's), as the Responses API's `error.code`
/// lists them and Chat Completions' errors spell them in `type` or `code`.
/// Anything else (an invalid prompt, a policy refusal) would fail again.
pub(crate) fn temporary(error: &Value) -> bool {
    ["type", "code"]
        .iter()
        .filter_map(|key| error.get(*key).and_then(Value::as_str))
        .any(|kind| matches!(kind, "server_error" | "rate_limit_exceeded"))
}

/// What an error event after the 200 says, with its kind when it names one.
pub(crate) fn mid_stream_error(kind: Option<&str>, message: &str) -> String {
    match kind {
        Some(kind) => format!("the provider sent an error mid-stream ({kind}): {message}"),
        None => format!("the provider sent an error mid-stream: {message}"),
    }
}

impl StreamAssembler for ChatStreamAssembler {
    /// Feeds one SSE `data` payload; returns `true` at `[DONE]`. An `Err` is a
    /// description of what broke (the caller adds the provider's name).
    fn push(&mut self, data: &str, sink: Sink<'_>) -> Result<bool, String> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        self.chunks += 1;
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            let shown: String = data.chars().take(120).collect();
            format!("chunk {} is not JSON ({e}): {shown}", self.chunks)
        })?;
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = err.get("message").and_then(Value::as_str).unwrap_or("(no message)");
            self.transient = temporary(err);
            let kind = ["type", "code"].iter().find_map(|key| err.get(*key).and_then(Value::as_str));
            return Err(mid_stream_error(kind, message));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        for choice in chunk.get("choices").and_then(Value::as_array).into_iter().flatten() {
            // Only the first choice is ours (we never ask for `n > 1`).
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, sink)?;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(FinishReason::from_wire(reason));
            }
        }
        Ok(false)
    }

    /// The response, or what is missing when the stream ended early.
    fn transient(&self) -> bool {
        self.transient
    }

    fn finish(self) -> Result<ModelResponse, String> {
        // llama-cpp-python 0.3.36 ends a stream whose stop sequence matched at
        // once with `[DONE]` and no finish_reason: a clean end, so a stop (or
        // tool calls) unless a call's arguments are still unfinished.
        let inferred = (self.done && self.calls.iter().all(|c| crate::calls::complete_json(&c.arguments)))
            .then_some(if self.calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls });
        let Some(finish_reason) = self.finish_reason.or(inferred) else {
            let open = self
                .calls
                .last()
                .map(|c| format!("; tool call `{}` was cut after {} bytes of arguments", c.name, c.arguments.len()))
                .unwrap_or_default();
            let end = if self.done { "[DONE] arrived" } else { "the stream ended" };
            return Err(format!("{end} after {} chunks without a finish_reason{open}", self.chunks));
        };
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(format!("tool call {index} never received a function name"));
            }
            tool_calls.push(ToolCall { id: call.id, name: call.name, arguments: call.arguments });
        }
        crate::calls::make_ids_unique(&mut tool_calls);
        Ok(ModelResponse {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            reasoning_signature: None,
            tool_calls,
            finish_reason,
            usage: self.usage.unwrap_or_default(),
            usage_reported: self.usage.is_some(),
        })
    }
}

impl ChatStreamAssembler {
    fn delta(&mut self, delta: &Value, sink: Sink<'_>) -> Result<(), String> {
        if let Some(r) = delta.get("reasoning_content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            self.reasoning.push_str(r);
            sink(StreamEvent::ReasoningDelta(r.to_string()));
        }
        // A refusal streams in its own field (`delta.refusal`, `content`
        // staying null): it is the model's answer, so it is the text.
        for key in ["content", "refusal"] {
            if let Some(t) = delta.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                self.text.push_str(t);
                sink(StreamEvent::TextDelta(t.to_string()));
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty());
        for call in calls.into_iter().flatten() {
            let id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
            let index = call.get("index").and_then(Value::as_u64);
            let function = call.get("function");
            let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|s| !s.is_empty());
            let fragment = function.and_then(|f| f.get("arguments")).and_then(Value::as_str).unwrap_or_default();
            let slot = self.slot(id, index, fragment);
            self.feed(slot, id, name, fragment, sink);
        }
        // llama-cpp-python mirrors each `tool_calls` delta in a `function_call`
        // of the same call: the legacy field is a call of its own only alone.
        if let Some(function) = delta.get("function_call").filter(|f| f.is_object() && calls.is_none()) {
            let name = function.get("name").and_then(Value::as_str).filter(|s| !s.is_empty());
            let fragment = function.get("arguments").and_then(Value::as_str).unwrap_or_default();
            let slot = match self.legacy {
                Some(slot) => slot,
                None => {
                    self.calls.push(PartialCall::default());
                    *self.legacy.insert(self.calls.len() - 1)
                }
            };
            self.feed(slot, None, name, fragment, sink);
        }
        Ok(())
    }

    /// Which call a delta belongs to, opening a new one when it starts one.
    fn slot(&mut self, id: Option<&str>, index: Option<u64>, fragment: &str) -> usize {
        let by_id = id.and_then(|id| self.calls.iter().rposition(|c| c.id == id));
        let by_index = index.and_then(|i| self.by_index.get(&i).copied());
        let found = match (by_id, by_index) {
            // The id decides: a repeated id continues its call until that call's
            // JSON is whole; a whole call's id under a new index opens a new call.
            (Some(slot), _) => {
                let call = &self.calls[slot];
                let moved = index.is_some() && call.index.is_some() && index != call.index;
                let whole = crate::calls::complete_json(&call.arguments);
                (crate::calls::continues(&call.arguments, fragment) && !(moved && whole)).then_some(slot)
            }
            // A known index under a different id is a new call (servers that send every call at index 0).
            (None, Some(slot)) => (id.is_none() || self.calls[slot].id.is_empty()).then_some(slot),
            // No index at all: a new id opens a call, anything else continues the last.
            (None, None) if index.is_none() && id.is_none() => self.calls.len().checked_sub(1),
            (None, None) => None,
        };
        let slot = found.unwrap_or_else(|| {
            self.calls.push(PartialCall { index, ..PartialCall::default() });
            self.calls.len() - 1
        });
        if let Some(i) = index {
            self.by_index.insert(i, slot);
        }
        slot
    }

    fn feed(&mut self, slot: usize, id: Option<&str>, name: Option<&str>, fragment: &str, sink: Sink<'_>) {
        let entry = &mut self.calls[slot];
        let begun = !entry.name.is_empty();
        if let (Some(id), true) = (id, entry.id.is_empty()) {
            entry.id = id.to_string();
        }
        if let Some(name) = name.filter(|_| entry.name.is_empty()) {
            entry.name = name.to_string();
        }
        if !begun && !entry.name.is_empty() {
            sink(StreamEvent::ToolCallBegin { index: slot, id: entry.id.clone(), name: entry.name.clone() });
        }
        if !fragment.is_empty() {
            entry.arguments.push_str(fragment);
            sink(StreamEvent::ToolCallArgumentsDelta { index: slot, fragment: fragment.to_string() });
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
