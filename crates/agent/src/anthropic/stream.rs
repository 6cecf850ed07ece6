//! Assembling Anthropic's streaming events into one response
//! (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
//! `message_start`, then per content block `content_block_start`,
//! `content_block_delta`s (`text_delta`, `thinking_delta`, `signature_delta`,
//! `input_json_delta`) and `content_block_stop`, then `message_delta` (stop
//! reason, final usage) and `message_stop`; `ping` anywhere, `error` anywhere.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::body::parse_usage;
use crate::http::StreamAssembler;
use crate::message::{FinishReason, ModelResponse, StreamEvent, ToolCall};
use crate::provider::Sink;

#[derive(Debug)]
enum Block {
    Text,
    Thinking,
    /// `call` is the position among this response's tool calls.
    ToolUse {
        call: usize,
        id: String,
        name: String,
        json: String,
    },
    Other,
}

#[derive(Debug, Default)]
pub struct MessagesStreamAssembler {
    text: String,
    reasoning: String,
    signature: Option<String>,
    blocks: BTreeMap<u64, Block>,
    calls: usize,
    finished: Vec<ToolCall>,
    stop_reason: Option<String>,
    /// Usage fields as last reported; `message_delta` overrides `message_start`.
    usage: Map<String, Value>,
    stopped: bool,
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
                    Some("thinking") => Block::Thinking,
                    Some("tool_use") => {
                        let call = self.calls;
                        self.calls += 1;
                        sink(StreamEvent::ToolCallBegin { index: call, id: s("id"), name: s("name") });
                        Block::ToolUse { call, id: s("id"), name: s("name"), json: String::new() }
                    }
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
                if let Some(Block::ToolUse { id, name, json, .. }) = self.blocks.remove(&index) {
                    // A tool with no arguments streams no JSON at all.
                    let arguments = if json.trim().is_empty() { "{}".to_string() } else { json };
                    self.finished.push(ToolCall { id, name, arguments });
                }
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
                let message = event.pointer("/error/message").and_then(Value::as_str).unwrap_or("(no message)");
                return Err(format!("the provider sent {kind} mid-stream: {message}"));
            }
            // New event types must not break old clients (the docs say so).
            _ => {}
        }
        Ok(false)
    }

    /// The response, or what was left open when the stream ended early.
    fn finish(self) -> Result<ModelResponse, String> {
        if !self.stopped {
            let open = self.blocks.values().find_map(|b| match b {
                Block::ToolUse { name, json, .. } => {
                    Some(format!("; tool_use `{name}` was cut after {} bytes of input", json.len()))
                }
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
        Ok(ModelResponse {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            reasoning_signature: self.signature,
            tool_calls: self.finished,
            finish_reason: FinishReason::from_wire(self.stop_reason.as_deref().unwrap_or("end_turn")),
            usage: parse_usage(&Value::Object(self.usage)),
        })
    }
}

impl MessagesStreamAssembler {
    fn delta(&mut self, index: u64, delta: &Value, sink: Sink<'_>) -> Result<(), String> {
        let s = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text_delta" => self.append_text(s("text"), sink),
            "thinking_delta" => {
                self.reasoning.push_str(s("thinking"));
                sink(StreamEvent::ReasoningDelta(s("thinking").to_string()));
            }
            "signature_delta" => self.signature = Some(s("signature").to_string()),
            "input_json_delta" => match self.blocks.get_mut(&index) {
                Some(Block::ToolUse { call, json, .. }) => {
                    json.push_str(s("partial_json"));
                    if !s("partial_json").is_empty() {
                        sink(StreamEvent::ToolCallArgumentsDelta { index: *call, fragment: s("partial_json").into() });
                    }
                }
                _ => return Err(format!("input_json_delta for block {index}, which is not an open tool_use")),
            },
            _ => {}
        }
        Ok(())
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
