//! Assembling Anthropic's streaming events into one response
//! (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
//! `message_start`, then per content block `content_block_start`,
//! `content_block_delta`s (`text_delta`, `thinking_delta`, `signature_delta`,
//! `input_json_delta`) and `content_block_stop`, then `message_delta` (stop
//! reason, final usage) and `message_stop`; `ping` anywhere, `error` anywhere.
//!
//! Proxies are looser: LiteLLM's adapter opens a new `tool_use` block with
//! the same id for every argument fragment, the fragment in an
//! `input_json_delta` or in the block's own `input` (a string, or an object).
//! Blocks that repeat an id while its JSON is unfinished are one call
//! (see [`crate::calls`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::body::parse_usage;
use crate::http::StreamAssembler;
use crate::message::{FinishReason, ModelResponse, StreamEvent, ToolCall};
use crate::provider::Sink;

#[derive(Debug)]
enum Block {
    Text,
    /// The position among the response's thinking blocks.
    Thinking(usize),
    /// `call` is the position among this response's tool calls; `tentative`:
    /// the block repeated the id of a whole call and brought no input yet, so
    /// its first fragment decides whether it continues that call or is a new one.
    ToolUse {
        call: usize,
        tentative: bool,
    },
    Other,
}

#[derive(Debug, Default)]
pub struct MessagesStreamAssembler {
    text: String,
    reasoning: String,
    /// `thinking` and `redacted_thinking` blocks as they are assembled (see
    /// [`super::thinking`]).
    thinking: Vec<Value>,
    blocks: BTreeMap<u64, Block>,
    /// Every call of the response, in the order it opened.
    calls: Vec<ToolCall>,
    stop_reason: Option<String>,
    /// Usage fields as last reported; `message_delta` overrides `message_start`.
    usage: Map<String, Value>,
    stopped: bool,
    /// The stream ended in an `error` event of a temporary kind.
    transient: bool,
    events: usize,
}

impl StreamAssembler for MessagesStreamAssembler {
    /// Feeds one event's `data`; returns `true` at `message_stop`.
    fn push(&mut self, data: &str, sink: Sink<'_>) -> Result<bool, String> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        self.events += 1;
        let event: Value = serde_json::from_str(data).map_err(|e| {
            let shown: String = data.chars().take(120).collect();
            format!("event {} is not JSON ({e}): {shown}", self.events)
        })?;
        let index = event.get("index").and_then(Value::as_u64);
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => self.merge_usage(event.pointer("/message/usage")),
            "content_block_start" => {
                let index = index.ok_or("content_block_start without an index")?;
                let block = event.get("content_block").ok_or("content_block_start without a content_block")?;
                let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                let kind = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        self.append_text(&s("text"), sink);
                        Block::Text
                    }
                    Some("thinking") => {
                        // Both start empty on the wire; the deltas fill them.
                        let (thinking, signature) = (s("thinking"), s("signature"));
                        self.append_reasoning(&thinking, sink);
                        self.thinking.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
                        Block::Thinking(self.thinking.len() - 1)
                    }
                    // Arrives whole (its encrypted `data`); it goes back as it came.
                    Some("redacted_thinking") => {
                        self.thinking.push(block.clone());
                        Block::Other
                    }
                    Some("tool_use") => self.open_tool_use(&s("id"), &s("name"), block.get("input"), sink),
                    _ => Block::Other,
                };
                self.blocks.insert(index, kind);
            }
            "content_block_delta" => {
                let index = index.ok_or("content_block_delta without an index")?;
                let delta = event.get("delta").ok_or("content_block_delta without a delta")?;
                self.delta(index, delta, sink)?;
            }
            "content_block_stop" => {
                let index = index.ok_or("content_block_stop without an index")?;
                self.blocks.remove(&index);
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                self.merge_usage(event.get("usage"));
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "ping" => {}
            "error" => {
                let kind = event.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
                // The kinds Anthropic answers with 529, 500 and 429 before a stream starts.
                self.transient = matches!(kind, "overloaded_error" | "api_error" | "rate_limit_error");
                let message = event.pointer("/error/message").and_then(Value::as_str).unwrap_or("(no message)");
                return Err(format!("the provider sent {kind} mid-stream: {message}"));
            }
            // New event types must not break old clients (the docs say so).
            _ => {}
        }
        Ok(false)
    }

    fn transient(&self) -> bool {
        self.transient
    }

    /// The response, or what was left open when the stream ended early.
    fn finish(self) -> Result<ModelResponse, String> {
        if !self.stopped {
            let open = self.blocks.values().find_map(|b| match b {
                Block::ToolUse { call, .. } => self
                    .calls
                    .get(*call)
                    .map(|c| format!("; tool_use `{}` was cut after {} bytes of input", c.name, c.arguments.len())),
                _ => None,
            });
            return Err(format!(
                "the stream ended after {} events without message_stop{}",
                self.events,
                open.unwrap_or_default()
            ));
        }
        if let Some((index, _)) = self.blocks.iter().find(|(_, b)| matches!(b, Block::ToolUse { .. })) {
            return Err(format!("message_stop arrived while tool_use block {index} was still open"));
        }
        let mut tool_calls = self.calls;
        for call in &mut tool_calls {
            // A tool with no arguments streams no JSON at all.
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".to_string();
            }
        }
        crate::calls::make_ids_unique(&mut tool_calls);
        let usage_reported = !self.usage.is_empty();
        Ok(ModelResponse {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            reasoning_signature: super::thinking::kept(&self.thinking),
            tool_calls,
            finish_reason: FinishReason::from_wire(self.stop_reason.as_deref().unwrap_or("end_turn")),
            usage: parse_usage(&Value::Object(self.usage)),
            usage_reported,
        })
    }
}

impl MessagesStreamAssembler {
    fn delta(&mut self, index: u64, delta: &Value, sink: Sink<'_>) -> Result<(), String> {
        let s = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text_delta" => self.append_text(s("text"), sink),
            "thinking_delta" => {
                self.append_reasoning(s("thinking"), sink);
                self.extend_thinking(index, "thinking", s("thinking"));
            }
            "signature_delta" => self.extend_thinking(index, "signature", s("signature")),
            "input_json_delta" => match self.blocks.get(&index) {
                Some(&Block::ToolUse { call, tentative }) => {
                    let fragment = s("partial_json");
                    let call = match tentative && !crate::calls::continues(&self.calls[call].arguments, fragment) {
                        true => self.new_call(call, sink),
                        false => call,
                    };
                    let tentative = tentative && fragment.is_empty();
                    self.blocks.insert(index, Block::ToolUse { call, tentative });
                    self.append_arguments(call, fragment, sink);
                }
                _ => return Err(format!("input_json_delta for block {index}, which is not an open tool_use")),
            },
            _ => {}
        }
        Ok(())
    }

    /// A `tool_use` block opens: a new call, or more of a call whose id it
    /// repeats. Its `input` is normally `{}`; a proxy may put a fragment there.
    fn open_tool_use(&mut self, id: &str, name: &str, input: Option<&Value>, sink: Sink<'_>) -> Block {
        let fragment = match input {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Object(o)) if !o.is_empty() => quiver_engine::canonical::to_string(&Value::Object(o.clone())),
            _ => String::new(),
        };
        let repeated = self.calls.iter().rposition(|c| !id.is_empty() && c.id == id && c.name == name);
        if let Some(call) = repeated.filter(|&c| crate::calls::continues(&self.calls[c].arguments, &fragment)) {
            let tentative = fragment.is_empty() && crate::calls::complete_json(&self.calls[call].arguments);
            self.append_arguments(call, &fragment, sink);
            return Block::ToolUse { call, tentative };
        }
        self.calls.push(ToolCall { id: id.to_string(), name: name.to_string(), arguments: String::new() });
        let call = self.calls.len() - 1;
        sink(StreamEvent::ToolCallBegin { index: call, id: id.to_string(), name: name.to_string() });
        self.append_arguments(call, &fragment, sink);
        Block::ToolUse { call, tentative: false }
    }

    /// A new call with the id and name of call `like` (a distinct call that reused its id).
    fn new_call(&mut self, like: usize, sink: Sink<'_>) -> usize {
        let (id, name) = (self.calls[like].id.clone(), self.calls[like].name.clone());
        self.calls.push(ToolCall { id: id.clone(), name: name.clone(), arguments: String::new() });
        let call = self.calls.len() - 1;
        sink(StreamEvent::ToolCallBegin { index: call, id, name });
        call
    }

    fn append_arguments(&mut self, call: usize, fragment: &str, sink: Sink<'_>) {
        if let Some(c) = self.calls.get_mut(call)
            && !fragment.is_empty()
        {
            c.arguments.push_str(fragment);
            sink(StreamEvent::ToolCallArgumentsDelta { index: call, fragment: fragment.to_string() });
        }
    }

    fn append_reasoning(&mut self, thinking: &str, sink: Sink<'_>) {
        if !thinking.is_empty() {
            self.reasoning.push_str(thinking);
            sink(StreamEvent::ReasoningDelta(thinking.to_string()));
        }
    }

    /// Appends to the `key` of the thinking block at `index`, opening one
    /// when a (lax) server sent no `content_block_start` for it.
    fn extend_thinking(&mut self, index: u64, key: &str, fragment: &str) {
        let at = match self.blocks.get(&index) {
            Some(&Block::Thinking(at)) => at,
            Some(_) => return,
            None => {
                self.thinking.push(json!({"type": "thinking", "thinking": "", "signature": ""}));
                self.blocks.insert(index, Block::Thinking(self.thinking.len() - 1));
                self.thinking.len() - 1
            }
        };
        if let Some(Value::String(field)) = self.thinking.get_mut(at).and_then(|b| b.get_mut(key)) {
            field.push_str(fragment);
        }
    }

    fn append_text(&mut self, text: &str, sink: Sink<'_>) {
        if !text.is_empty() {
            self.text.push_str(text);
            sink(StreamEvent::TextDelta(text.to_string()));
        }
    }

    fn merge_usage(&mut self, usage: Option<&Value>) {
        if let Some(Value::Object(fields)) = usage {
            for (k, v) in fields {
                if !v.is_null() {
                    self.usage.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
