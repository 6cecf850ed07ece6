//! Reading Responses API answers: the streamed events
//! (`response.output_item.added` / `.done`, `response.output_text.delta`,
//! `response.function_call_arguments.delta`, `response.completed` /
//! `.incomplete` / `.failed`, `error`) and the non-streamed `response` object.
//! Both end in the same [`Output`], built from whole output items: the
//! deltas are only shown as they come, the `.done` item is what is kept.

use std::collections::BTreeMap;

use serde_json::Value;

use super::body::TOOL_SEARCH;
use crate::http::StreamAssembler;
use crate::message::{FinishReason, ModelResponse, StreamEvent, ToolCall, Usage};
use crate::provider::Sink;

/// The model's output items, collected.
#[derive(Debug, Default)]
struct Output {
    text: String,
    reasoning: String,
    /// Reasoning items as the API sent them: they go back verbatim.
    reasoning_items: Vec<Value>,
    calls: Vec<ToolCall>,
}

impl Output {
    /// One whole output item.
    fn item(&mut self, item: &Value) -> Result<(), String> {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |v: &Value| v.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
        match kind {
            "message" => {
                for part in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => self.text.push_str(&text(part)),
                        Some("refusal") => {
                            self.text.push_str(part.get("refusal").and_then(Value::as_str).unwrap_or_default())
                        }
                        _ => {}
                    }
                }
            }
            "reasoning" => {
                let summary = item.get("summary").and_then(Value::as_array);
                let summary: Vec<String> = summary.into_iter().flatten().map(text).collect();
                if !summary.is_empty() {
                    if !self.reasoning.is_empty() {
                        self.reasoning.push('\n');
                    }
                    self.reasoning.push_str(&summary.join("\n"));
                }
                self.reasoning_items.push(item.clone());
            }
            "function_call" => {
                // A function inside a namespace (an MCP server's) is quiver's `namespace__name`.
                let name = super::loads::qualified_name(item).ok_or("a function_call item has no name")?;
                self.calls.push(ToolCall {
                    id: call_id(item)?,
                    name,
                    arguments: item.get("arguments").and_then(Value::as_str).unwrap_or_default().to_string(),
                });
            }
            // Server-executed searches (`call_id: null`) are the API's own business.
            "tool_search_call" if item.get("execution").and_then(Value::as_str) == Some("client") => {
                let arguments = match item.get("arguments").cloned().unwrap_or(Value::Null) {
                    Value::String(s) => s,
                    Value::Null => "{}".to_string(),
                    other => quiver_engine::canonical::to_string(&other),
                };
                self.calls.push(ToolCall { id: call_id(item)?, name: TOOL_SEARCH.into(), arguments });
            }
            _ => {}
        }
        Ok(())
    }

    fn into_response(self, finish: FinishReason, usage: Option<Usage>) -> ModelResponse {
        let finish_reason = match finish {
            FinishReason::Stop if !self.calls.is_empty() => FinishReason::ToolCalls,
            other => other,
        };
        let kept = (!self.reasoning_items.is_empty())
            .then(|| quiver_engine::canonical::to_string(&Value::Array(self.reasoning_items)));
        let mut calls = self.calls;
        crate::calls::make_ids_unique(&mut calls);
        ModelResponse {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            reasoning_signature: kept,
            tool_calls: calls,
            finish_reason,
            usage: usage.unwrap_or_default(),
            usage_reported: usage.is_some(),
        }
    }
}

fn call_id(item: &Value) -> Result<String, String> {
    item.get("call_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("a {} item has no call_id", item.get("type").and_then(Value::as_str).unwrap_or("?")))
}

/// `usage` of a response: `input_tokens` with
/// `input_tokens_details.cached_tokens`, `output_tokens`.
pub fn parse_usage(usage: &Value) -> Usage {
    let n = |ptr: &str| usage.pointer(ptr).and_then(Value::as_u64);
    let input = n("/input_tokens").unwrap_or_default();
    let hit = n("/input_tokens_details/cached_tokens").unwrap_or_default();
    Usage {
        input_tokens: input,
        output_tokens: n("/output_tokens").unwrap_or_default(),
        cache_hit_tokens: hit,
        cache_miss_tokens: input.saturating_sub(hit),
        cache_write_tokens: 0,
    }
}

/// How a finished response ended: `completed`, or `incomplete` with a reason.
fn finish_of(response: &Value) -> Result<FinishReason, String> {
    match response.get("status").and_then(Value::as_str) {
        Some("completed") | None => Ok(FinishReason::Stop),
        Some("incomplete") => {
            let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
            Ok(match reason {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_string()),
                None => FinishReason::Other("incomplete".into()),
            })
        }
        Some("failed") => Err(failure(response.get("error"))),
        Some(other) => Err(format!("the response ended with status `{other}`")),
    }
}

fn failure(error: Option<&Value>) -> String {
    let error = error.filter(|e| !e.is_null());
    let message = error.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or("(no message)");
    match error.and_then(|e| e.get("code")).and_then(Value::as_str) {
        Some(code) => format!("the response failed ({code}): {message}"),
        None => format!("the response failed: {message}"),
    }
}

/// A non-streamed `response` object.
pub fn parse_response(value: &Value) -> Result<ModelResponse, String> {
    if let Some(err) = value.get("error").filter(|e| !e.is_null())
        && value.get("status").and_then(Value::as_str) != Some("failed")
    {
        return Err(failure(Some(err)));
    }
    let finish = finish_of(value)?;
    let mut output = Output::default();
    let items = value.get("output").and_then(Value::as_array).ok_or("the response has no `output` array")?;
    for item in items {
        output.item(item)?;
    }
    let usage = value.get("usage").filter(|u| u.is_object()).map(parse_usage);
    Ok(output.into_response(finish, usage))
}

/// A call being streamed: its position among this response's calls.
#[derive(Debug)]
struct OpenCall {
    index: usize,
    /// Whether argument deltas were shown (the `.done` item then adds nothing).
    shown: bool,
}

#[derive(Debug, Default)]
pub struct ResponsesStreamAssembler {
    output: Output,
    /// Output items being streamed, by `item_id`.
    open: BTreeMap<String, OpenCall>,
    calls_begun: usize,
    finished: Option<(FinishReason, Option<Usage>)>,
    events: usize,
    /// The error `push` last returned is one OpenAI calls temporary.
    transient: bool,
}

impl StreamAssembler for ResponsesStreamAssembler {
    fn push(&mut self, data: &str, sink: Sink<'_>) -> Result<bool, String> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(data == "[DONE]" && self.finished.is_some());
        }
        self.events += 1;
        let event: Value = serde_json::from_str(data).map_err(|e| {
            let shown: String = data.chars().take(120).collect();
            format!("event {} is not JSON ({e}): {shown}", self.events)
        })?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        match kind {
            "response.output_text.delta" => {
                let delta = text("delta");
                if !delta.is_empty() {
                    sink(StreamEvent::TextDelta(delta));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = text("delta");
                if !delta.is_empty() {
                    sink(StreamEvent::ReasoningDelta(delta));
                }
            }
            "response.output_item.added" => self.added(event.get("item").unwrap_or(&Value::Null), sink),
            "response.function_call_arguments.delta" => {
                let fragment = text("delta");
                if let Some(call) = self.open.get_mut(&text("item_id"))
                    && !fragment.is_empty()
                {
                    call.shown = true;
                    sink(StreamEvent::ToolCallArgumentsDelta { index: call.index, fragment });
                }
            }
            "response.output_item.done" => self.done(event.get("item").unwrap_or(&Value::Null), sink)?,
            "response.completed" | "response.incomplete" => {
                let response = event.get("response").unwrap_or(&Value::Null);
                let usage = response.get("usage").filter(|u| u.is_object()).map(parse_usage);
                self.finished = Some((finish_of(response)?, usage));
                return Ok(true);
            }
            "response.failed" => {
                let error = event.pointer("/response/error").unwrap_or(&Value::Null);
                self.transient = crate::openai::temporary(error);
                return Err(failure(Some(error)));
            }
            "error" => {
                let message = event.get("message").and_then(Value::as_str).unwrap_or("(no message)");
                self.transient = crate::openai::temporary(&event);
                return Err(crate::openai::mid_stream_error(event.get("code").and_then(Value::as_str), message));
            }
            _ => {}
        }
        Ok(false)
    }

    fn transient(&self) -> bool {
        self.transient
    }

    fn finish(self) -> Result<ModelResponse, String> {
        let Some((finish, usage)) = self.finished else {
            let open =
                self.open.keys().next().map(|id| format!("; item `{id}` was never finished")).unwrap_or_default();
            return Err(format!("the stream ended after {} events without response.completed{open}", self.events));
        };
        Ok(self.output.into_response(finish, usage))
    }
}

impl ResponsesStreamAssembler {
    fn added(&mut self, item: &Value, sink: Sink<'_>) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let client_search =
            kind == "tool_search_call" && item.get("execution").and_then(Value::as_str) == Some("client");
        if kind != "function_call" && !client_search {
            return;
        }
        let name = if client_search {
            TOOL_SEARCH.to_string()
        } else {
            super::loads::qualified_name(item).unwrap_or_default()
        };
        let index = self.calls_begun;
        self.calls_begun += 1;
        let id = item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
        sink(StreamEvent::ToolCallBegin { index, id, name });
        if let Some(item_id) = item.get("id").and_then(Value::as_str) {
            self.open.insert(item_id.to_string(), OpenCall { index, shown: false });
        }
    }

    fn done(&mut self, item: &Value, sink: Sink<'_>) -> Result<(), String> {
        let before = self.output.calls.len();
        self.output.item(item)?;
        let open = item.get("id").and_then(Value::as_str).and_then(|id| self.open.remove(id));
        // A call whose arguments were not streamed shows them whole now.
        if let (Some(call), Some(open)) = (self.output.calls.get(before), open)
            && !open.shown
            && !call.arguments.is_empty()
        {
            sink(StreamEvent::ToolCallArgumentsDelta { index: open.index, fragment: call.arguments.clone() });
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
