//! Anthropic Messages request bodies and non-streamed responses.
//!
//! The system prompt is top-level; tool calls are `tool_use` blocks; tool
//! results are `tool_result` blocks, and consecutive ones (with any user text
//! that follows) share one user message, since roles must alternate. Two
//! `cache_control` breakpoints: on the last head tool, so the head is one
//! cached prefix any session with the same tools reads (tools loaded later
//! extend it without invalidating it), and on the last block of the
//! conversation, so each request reads everything the previous one sent
//! (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
//!
//! With `deferred_tools = "defer"` (the default) every tool the session may
//! load goes out with `defer_loading: true`, and a tool result that loaded
//! tools is made of `tool_reference` blocks only, its text following as a
//! sibling `text` block after the message's tool results (see
//! [`crate::deferred`]); the tool list never grows.

use serde_json::{Map, Value, json};

use crate::message::{FinishReason, Message, ModelRequest, ModelResponse, ToolCall, Usage};

/// Anthropic requires `max_tokens`; this is used when the config sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

pub fn request_body(req: &ModelRequest, vision: Option<bool>) -> Value {
    request_body_streamed(req, vision, req.stream)
}

/// The body, streamed or not whatever `req.stream` says.
pub fn request_body_streamed(req: &ModelRequest, vision: Option<bool>, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("max_tokens".into(), json!(req.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS)));
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    let mut messages = messages(req, crate::vision::sees_images(&req.model, vision));
    mark_conversation_end(&mut messages);
    body.insert("messages".into(), Value::Array(messages));
    let tools = crate::deferred::wire_tools(req);
    if !tools.is_empty() {
        let mut tools = tools;
        if let Some(Value::Object(last_head)) = req.head_len.checked_sub(1).and_then(|i| tools.get_mut(i)) {
            last_head.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

/// A breakpoint on the last block of the last message: the request writes
/// the whole conversation to the cache and the next one, which repeats it
/// and adds a turn (a few blocks, well inside the 20-block lookback), reads
/// it all. Without it only the tools up to the head's breakpoint are ever
/// served. The marker is not part of the cache key, so moving it forward
/// each turn costs nothing. Thinking blocks cannot carry one; a
/// conversation ending in one (never sent by the loop) goes unmarked.
fn mark_conversation_end(messages: &mut [Value]) {
    let last = messages.last_mut().and_then(|m| m.get_mut("content")).and_then(Value::as_array_mut);
    if let Some(Value::Object(block)) = last.and_then(|blocks| blocks.last_mut())
        && !matches!(block.get("type").and_then(Value::as_str), Some("thinking" | "redacted_thinking"))
    {
        block.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
}

fn messages(req: &ModelRequest, vision: bool) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    // The text of results that are `tool_reference`s: tool results must come
    // first in a user message, so these follow the run of tool results.
    let mut after_results: Vec<Value> = Vec::new();
    let mut push = |role: &'static str, block: Value| match out.last_mut() {
        Some((last, blocks)) if *last == role => blocks.push(block),
        _ => out.push((role, vec![block])),
    };
    for message in &req.messages {
        if !matches!(message, Message::Tool { .. }) {
            for text in after_results.drain(..) {
                push("user", text);
            }
        }
        match message {
            // No mid-conversation system role exists; the text goes in as user text.
            Message::System { text } | Message::User { text } => push("user", json!({"type": "text", "text": text})),
            Message::Assistant { text, reasoning, reasoning_signature, tool_calls } => {
                for block in super::thinking::replayed(reasoning.as_deref(), reasoning_signature.as_deref()) {
                    push("assistant", block);
                }
                if !text.is_empty() {
                    push("assistant", json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    push(
                        "assistant",
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input_of(call)}),
                    );
                }
            }
            Message::Tool { call_id, content, is_error, images, loaded } => {
                let references = crate::deferred::references(req, loaded);
                let content = if !references.is_empty() {
                    let note = crate::deferred::reference_note(content, loaded);
                    if !note.is_empty() {
                        after_results.push(json!({"type": "text", "text": note}));
                    }
                    Value::Array(references.iter().map(|n| json!({"type": "tool_reference", "tool_name": n})).collect())
                } else if vision && !images.is_empty() {
                    let mut parts = vec![json!({"type": "text", "text": content})];
                    parts.extend(images.iter().map(|i| {
                        json!({"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data}})
                    }));
                    Value::Array(parts)
                } else {
                    json!(content)
                };
                let mut block = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push("user", block);
            }
        }
    }
    for text in after_results {
        push("user", text);
    }
    out.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect()
}

/// `tool_use.input` must be an object. Arguments that are not a JSON object
/// (the model sent broken JSON, which it was told about in the tool result)
/// are replayed as an empty object rather than failing the whole request.
fn input_of(call: &ToolCall) -> Value {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

/// A non-streamed `message` object.
pub fn parse_response(value: &Value) -> Result<ModelResponse, String> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let message = value.pointer("/error/message").and_then(Value::as_str).unwrap_or("(no message)");
        return Err(format!("the provider returned an error: {message}"));
    }
    let content = value.get("content").and_then(Value::as_array).ok_or("the message has no content array")?;
    let usage = value.get("usage").filter(|u| u.is_object());
    let mut response = ModelResponse {
        text: String::new(),
        reasoning: None,
        reasoning_signature: None,
        tool_calls: Vec::new(),
        finish_reason: FinishReason::Stop,
        usage: usage.map(parse_usage).unwrap_or_default(),
        usage_reported: usage.is_some(),
    };
    let mut thinking = Vec::new();
    for (i, block) in content.iter().enumerate() {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        match block.get("type").and_then(Value::as_str) {
            Some("text") => response.text.push_str(&str_of("text")),
            Some("thinking") => {
                response.reasoning.get_or_insert_with(String::new).push_str(&str_of("thinking"));
                thinking.push(block.clone());
            }
            // Encrypted reasoning: not shown, but it must go back as it came.
            Some("redacted_thinking") => thinking.push(block.clone()),
            Some("tool_use") => {
                // A proxy may split one call over blocks that repeat its id, with
                // string fragments for `input`; see `crate::calls`.
                let arguments = match block.get("input") {
                    Some(Value::String(s)) => s.clone(),
                    Some(input) => quiver_engine::canonical::to_string(input),
                    None => String::new(),
                };
                let (id, name) = (str_of("id"), str_of("name"));
                let calls = &mut response.tool_calls;
                match calls.iter_mut().rev().find(|c| !id.is_empty() && c.id == id && c.name == name) {
                    Some(c) if c.arguments.is_empty() || c.arguments == "{}" => c.arguments = arguments,
                    Some(c) if crate::calls::continues(&c.arguments, &arguments) => c.arguments.push_str(&arguments),
                    _ => calls.push(ToolCall { id, name, arguments }),
                }
            }
            Some(_) => {} // server tools: not ours to interpret
            None => return Err(format!("content[{i}] has no type")),
        }
    }
    response.reasoning_signature = super::thinking::kept(&thinking);
    for call in &mut response.tool_calls {
        if call.arguments.trim().is_empty() {
            call.arguments = "{}".to_string();
        }
    }
    crate::calls::make_ids_unique(&mut response.tool_calls);
    if let Some(reason) = value.get("stop_reason").and_then(Value::as_str) {
        response.finish_reason = FinishReason::from_wire(reason);
    }
    Ok(response)
}

/// Anthropic counts uncached, cache-read and cache-written input separately;
/// `input_tokens` here is their sum, like the OpenAI wire's `prompt_tokens`.
pub fn parse_usage(usage: &Value) -> Usage {
    let n = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or_default();
    let uncached = n("input_tokens");
    let read = n("cache_read_input_tokens");
    let written = n("cache_creation_input_tokens");
    Usage {
        input_tokens: uncached + read + written,
        output_tokens: n("output_tokens"),
        cache_hit_tokens: read,
        cache_miss_tokens: uncached + written,
        cache_write_tokens: written,
    }
}
