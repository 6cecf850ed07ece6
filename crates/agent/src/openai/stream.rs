//! Assembling a streamed `chat.completion.chunk` sequence into one response.
//!
//! Tool calls arrive as deltas keyed by `index`: the first carries `id` and
//! `function.name`, later ones only argument fragments (split anywhere, even
//! inside a JSON string), and several calls may be open at once. Usage comes
//! in a final chunk with empty `choices` when `include_usage` was asked for.

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
}

#[derive(Debug, Default)]
pub struct ChatStreamAssembler {
    text: String,
    reasoning: String,
    calls: BTreeMap<usize, PartialCall>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
    chunks: usize,
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
            return Err(format!("the provider sent an error mid-stream: {message}"));
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
    fn finish(self) -> Result<ModelResponse, String> {
        let Some(finish_reason) = self.finish_reason else {
            let open = self
                .calls
                .values()
                .last()
                .map(|c| format!("; tool call `{}` was cut after {} bytes of arguments", c.name, c.arguments.len()))
                .unwrap_or_default();
            let end = if self.done { "[DONE] arrived" } else { "the stream ended" };
            return Err(format!("{end} after {} chunks without a finish_reason{open}", self.chunks));
        };
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(format!("tool call {index} never received a function name"));
            }
            let id = if call.id.is_empty() { format!("call_{index}") } else { call.id };
            tool_calls.push(ToolCall { id, name: call.name, arguments: call.arguments });
        }
        Ok(ModelResponse {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            reasoning_signature: None,
            tool_calls,
            finish_reason,
            usage: self.usage.unwrap_or_default(),
        })
    }
}

impl ChatStreamAssembler {
    fn delta(&mut self, delta: &Value, sink: Sink<'_>) -> Result<(), String> {
        if let Some(r) = delta.get("reasoning_content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            self.reasoning.push_str(r);
            sink(StreamEvent::ReasoningDelta(r.to_string()));
        }
        if let Some(t) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            self.text.push_str(t);
            sink(StreamEvent::TextDelta(t.to_string()));
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
            // A server that omits `index` streams calls one after another: a new
            // id opens the next call, anything else continues the last.
            let index = match call.get("index").and_then(Value::as_u64) {
                Some(i) => usize::try_from(i).map_err(|_| format!("tool call index {i} out of range"))?,
                None => {
                    let last = self.calls.keys().next_back().copied();
                    match (id, last) {
                        (Some(_), Some(last)) => last + 1,
                        (_, last) => last.unwrap_or(0),
                    }
                }
            };
            let function = call.get("function");
            let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|s| !s.is_empty());
            let fragment = function.and_then(|f| f.get("arguments")).and_then(Value::as_str).unwrap_or_default();
            let entry = self.calls.entry(index).or_default();
            let begun = !entry.name.is_empty();
            if let Some(id) = id {
                entry.id = id.to_string();
            }
            if let Some(name) = name.filter(|_| entry.name.is_empty()) {
                entry.name = name.to_string();
            }
            if !begun && !entry.name.is_empty() {
                sink(StreamEvent::ToolCallBegin { index, id: entry.id.clone(), name: entry.name.clone() });
            }
            if !fragment.is_empty() {
                entry.arguments.push_str(fragment);
                sink(StreamEvent::ToolCallArgumentsDelta { index, fragment: fragment.to_string() });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
