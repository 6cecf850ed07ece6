//! Chat Completions request bodies and non-streamed responses.
//!
//! The body is a `serde_json::Value` the caller serializes with the engine's
//! canonical writer (sorted keys), so an identical conversation gives identical
//! bytes and each request's `messages` array extends the previous one's.

use serde_json::{Map, Value, json};

use super::OpenAiDialect;
use crate::message::{FinishReason, Message, ModelRequest, ModelResponse, ToolCall, Usage};

pub use crate::learned::ToolTurnContent;

pub fn request_body(req: &ModelRequest, dialect: &OpenAiDialect) -> Value {
    request_body_with(req, dialect, ToolTurnContent::default(), req.stream)
}

/// The body with a chosen shape for tool-only assistant turns, streamed or
/// not whatever `req.stream` says.
pub fn request_body_with(
    req: &ModelRequest,
    dialect: &OpenAiDialect,
    tool_turns: ToolTurnContent,
    stream: bool,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let vision = crate::vision::sees_images(&req.model, dialect.vision);
    body.insert("messages".into(), Value::Array(messages(req, vision, tool_turns)));
    if !req.tool_list().is_empty() {
        body.insert("tools".into(), req.tools.clone());
        if let Some(choice) = &dialect.tool_choice {
            body.insert("tool_choice".into(), json!(choice));
        }
    }
    if let Some(max) = req.max_output_tokens {
        let key = if dialect.max_completion_tokens { "max_completion_tokens" } else { "max_tokens" };
        body.insert(key.into(), json!(max));
    }
    if let Some(effort) = req.effort {
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    body.insert("stream".into(), json!(stream));
    if stream {
        // Without this the usage (and DeepSeek's cache counters) never arrive.
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

fn messages(req: &ModelRequest, vision: bool, tool_turns: ToolTurnContent) -> Vec<Value> {
    let mut out = Vec::with_capacity(req.messages.len() + 1);
    // Images of the current run of tool results: `tool` messages take text
    // only, so they follow the run as one user message. Emitted when the run
    // ends (the next message or the end of the list), which is the same place
    // in this request and the next: the prefix still only grows.
    let mut images: Vec<Value> = Vec::new();
    if !req.system.is_empty() {
        out.push(json!({"role": "system", "content": req.system}));
    }
    // Whether the current user turn (the messages since the last user message)
    // has made a tool call yet. See `assistant` for why this matters.
    let mut tool_span = false;
    for message in &req.messages {
        if !matches!(message, Message::Tool { .. }) {
            flush_images(&mut out, &mut images);
        }
        match message {
            Message::System { text } => out.push(json!({"role": "system", "content": text})),
            Message::User { text } => {
                tool_span = false;
                out.push(json!({"role": "user", "content": text}));
            }
            Message::Assistant { text, reasoning, tool_calls, .. } => {
                tool_span |= !tool_calls.is_empty();
                out.push(assistant(text, reasoning.as_deref(), tool_calls, tool_span, tool_turns));
            }
            Message::Tool { call_id, content, images: shown, .. } => {
                out.push(json!({"role": "tool", "tool_call_id": call_id, "content": content}));
                if vision && !shown.is_empty() {
                    images.push(json!({"type": "text", "text": format!("Images returned by tool call {call_id}:")}));
                    for image in shown {
                        let url = crate::vision::data_url(&image.mime_type, &image.data);
                        images.push(json!({"type": "image_url", "image_url": {"url": url}}));
                    }
                }
            }
        }
    }
    flush_images(&mut out, &mut images);
    out
}

/// The pending tool images as one user message. It does not reset the
/// DeepSeek tool span: it is part of the tool results, not a new user turn.
fn flush_images(out: &mut Vec<Value>, images: &mut Vec<Value>) {
    if !images.is_empty() {
        out.push(json!({"role": "user", "content": std::mem::take(images)}));
    }
}

/// DeepSeek's rule for `reasoning_content` in history
/// (https://api-docs.deepseek.com/guides/thinking_mode, "Tool Calls" and
/// "Multi-turn Conversation"; thinking mode of deepseek-v3.2 and later):
/// between two user messages, if the model made a tool call, the
/// `reasoning_content` of every assistant message in that stretch must be sent
/// back in all later requests (omitting it is a 400); in a stretch without tool
/// calls it is not needed and is ignored. The older `deepseek-reasoner` (R1,
/// https://api-docs.deepseek.com/guides/reasoning_model) answered 400 to any
/// `reasoning_content` in the input, and never made tool calls, so sending it
/// only in tool stretches satisfies both.
///
/// `tool_span` is computed forward only (a message's rendering never depends
/// on what comes after it), so a request's messages stay a byte prefix of the
/// next request's.
fn assistant(
    text: &str,
    reasoning: Option<&str>,
    tool_calls: &[ToolCall],
    tool_span: bool,
    tool_turns: ToolTurnContent,
) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    // See `ToolTurnContent` for why a tool-only turn leaves `content` out.
    let content = match (text.is_empty() && !tool_calls.is_empty(), tool_turns) {
        (false, _) => Some(json!(text)),
        (true, ToolTurnContent::Omit) => None,
        (true, ToolTurnContent::Empty) => Some(json!("")),
        (true, ToolTurnContent::Null) => Some(Value::Null),
    };
    if let Some(content) = content {
        message.insert("content".into(), content);
    }
    if !tool_calls.is_empty() {
        let calls: Vec<Value> = tool_calls
            .iter()
            .map(|c| {
                let arguments = crate::calls::replayed_arguments(&c.arguments);
                json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    if let (true, Some(reasoning)) = (tool_span, reasoning) {
        message.insert("reasoning_content".into(), json!(reasoning));
    }
    Value::Object(message)
}

/// A non-streamed `chat.completion` object.
pub fn parse_response(value: &Value) -> Result<ModelResponse, String> {
    if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
        let message = err.get("message").and_then(Value::as_str).unwrap_or("(no message)");
        return Err(format!("the provider returned an error: {message}"));
    }
    let choice = value.pointer("/choices/0").ok_or("no choices[0] in the response")?;
    let message = choice.get("message").ok_or("choices[0] has no message")?;
    // A refusal is `message.refusal` with `content: null`: the model's answer all the same.
    let text =
        ["content", "refusal"].iter().filter_map(|key| message.get(*key).and_then(Value::as_str)).collect::<String>();
    let reasoning =
        message.get("reasoning_content").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let mut tool_calls: Vec<ToolCall> = Vec::new();
    for (i, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let function = call.get("function").ok_or_else(|| format!("tool_calls[{i}] has no function"))?;
        let name =
            function.get("name").and_then(Value::as_str).ok_or_else(|| format!("tool_calls[{i}] has no name"))?;
        let arguments = arguments_text(function.get("arguments"));
        let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
        // An entry repeating an earlier id while that call's JSON is unfinished is a fragment of it.
        if let Some(earlier) = tool_calls.iter_mut().rev().find(|c| !id.is_empty() && c.id == id)
            && crate::calls::continues(&earlier.arguments, &arguments)
        {
            earlier.arguments.push_str(&arguments);
            continue;
        }
        tool_calls.push(ToolCall { id: id.to_string(), name: name.to_string(), arguments });
    }
    // The legacy (pre-`tools`) form: one `function_call` and no id. Next to
    // `tool_calls` it is the same call mirrored (llama-cpp-python), not another.
    if let Some(function) = message.get("function_call").filter(|f| f.is_object() && tool_calls.is_empty()) {
        let name = function.get("name").and_then(Value::as_str).ok_or("function_call has no name")?;
        let arguments = arguments_text(function.get("arguments"));
        tool_calls.push(ToolCall { id: String::new(), name: name.to_string(), arguments });
    }
    crate::calls::make_ids_unique(&mut tool_calls);
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some(reason) => FinishReason::from_wire(reason),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    let usage = value.get("usage").filter(|u| u.is_object());
    Ok(ModelResponse {
        text,
        reasoning,
        reasoning_signature: None,
        tool_calls,
        finish_reason,
        usage: usage.map(parse_usage).unwrap_or_default(),
        usage_reported: usage.is_some(),
    })
}

/// Some compatible servers send arguments as an object; keep its canonical text.
fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => quiver_engine::canonical::to_string(other),
    }
}

/// `usage` from either DeepSeek (`prompt_cache_hit_tokens`/`_miss_tokens`) or
/// OpenAI (`prompt_tokens_details.cached_tokens`).
pub fn parse_usage(usage: &Value) -> Usage {
    let n = |ptr: &str| usage.pointer(ptr).and_then(Value::as_u64);
    let input = n("/prompt_tokens").unwrap_or_default();
    let hit = n("/prompt_cache_hit_tokens").or_else(|| n("/prompt_tokens_details/cached_tokens")).unwrap_or_default();
    let miss = n("/prompt_cache_miss_tokens").unwrap_or_else(|| input.saturating_sub(hit));
    Usage {
        input_tokens: input,
        output_tokens: n("/completion_tokens").unwrap_or_default(),
        cache_hit_tokens: hit,
        cache_miss_tokens: miss,
        cache_write_tokens: 0,
    }
}
