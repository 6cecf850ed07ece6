//! The scripted server's Chat Completions answers, shaped like DeepSeek's and
//! OpenAI's: `chat.completion` objects, `chat.completion.chunk` streams whose
//! tool calls open with `{index, id, type, function: {name, arguments: ""}}`
//! and continue with argument fragments, a usage-only chunk, then `[DONE]`.
//! Quirks (see `quirks.rs`) bend that shape the way other servers do.

use serde_json::{Value, json};

use super::quirks::{Answer, Quirk};
use super::{Fault, Piece, frame, split};
use crate::message::Usage;

const CREATED: u64 = 1_700_000_000;

/// What a model reading this request would call: when `tools` declares the
/// `call_tool` dispatcher (`deferred_tools = "dispatch"`), a scripted call of
/// a function the request does not declare (a loaded tool, whose definition
/// is in a search's result) goes through `call_tool {name, arguments}`.
pub(super) fn through_dispatcher(calls: &mut [crate::message::ToolCall], request: &Value) {
    let tools = request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let declared: Vec<&str> =
        tools.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).collect();
    let dispatcher = crate::dispatch::CALL_TOOL;
    if !declared.contains(&dispatcher) {
        return;
    }
    for call in calls.iter_mut().filter(|c| !declared.contains(&c.name.as_str())) {
        let arguments = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!(call.arguments));
        call.arguments = json!({"name": call.name, "arguments": arguments}).to_string();
        call.name = dispatcher.to_string();
    }
}

fn finish_reason(answer: &Answer<'_>) -> String {
    let turn = answer.turn;
    turn.finish_reason.clone().unwrap_or_else(|| match (turn.tool_calls.is_empty(), legacy(answer)) {
        (true, _) => "stop".to_string(),
        (false, true) => "function_call".to_string(),
        (false, false) => "tool_calls".to_string(),
    })
}

fn legacy(answer: &Answer<'_>) -> bool {
    answer.quirks.has(Quirk::LegacyFunctionCall)
}

/// Both usage dialects at once: DeepSeek's cache counters and OpenAI's details.
fn usage_json(usage: &Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_cache_hit_tokens": usage.cache_hit_tokens,
        "prompt_cache_miss_tokens": usage.cache_miss_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_hit_tokens},
    })
}

pub(super) fn completion_body(answer: &Answer<'_>) -> Value {
    let turn = answer.turn;
    let mut message = json!({"role": "assistant", "content": turn.text});
    if turn.text.is_empty() && !turn.tool_calls.is_empty() {
        message["content"] = Value::Null;
    }
    if let Some(reasoning) = &turn.reasoning {
        message["reasoning_content"] = json!(reasoning);
    }
    match (turn.tool_calls.first(), legacy(answer)) {
        (Some(call), true) => message["function_call"] = json!({"name": call.name, "arguments": call.arguments}),
        (Some(_), false) => {
            message["tool_calls"] = turn
                .tool_calls
                .iter()
                .map(
                    |c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}),
                )
                .collect();
        }
        (None, _) => {}
    }
    let mut body = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": CREATED,
        "model": answer.model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(answer)}],
    });
    if let Some(usage) = answer.usage {
        body["usage"] = usage_json(usage);
    }
    body
}

pub(super) fn fim_body(answer: &Answer<'_>) -> Value {
    let mut body = json!({
        "id": "cmpl-scripted",
        "object": "text_completion",
        "created": CREATED,
        "model": answer.model,
        "choices": [{"index": 0, "text": answer.turn.text, "logprobs": null, "finish_reason": finish_reason(answer)}],
    });
    if let Some(usage) = answer.usage {
        body["usage"] = usage_json(usage);
    }
    body
}

fn chunk(model: &str, delta: Value, finish: Option<&str>) -> String {
    let value = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    format!("data: {value}\n\n")
}

/// One tool-call delta, as this server's quirks shape it.
fn call_delta(answer: &Answer<'_>, index: usize, call: &crate::message::ToolCall, fragment: &str, open: bool) -> Value {
    if legacy(answer) {
        let function =
            if open { json!({"name": call.name, "arguments": fragment}) } else { json!({"arguments": fragment}) };
        return json!({"function_call": function});
    }
    let mut delta = if open || answer.quirks.has(Quirk::RepeatCallHeader) {
        json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": fragment}})
    } else {
        json!({"function": {"arguments": fragment}})
    };
    if !answer.quirks.has(Quirk::NoCallIndex) {
        delta["index"] = json!(index);
    }
    json!({"tool_calls": [delta]})
}

pub(super) fn stream_pieces(answer: &Answer<'_>) -> Vec<Piece> {
    let (turn, model) = (answer.turn, answer.model);
    let mut events = vec![chunk(model, json!({"role": "assistant", "content": ""}), None)];
    if let Some(reasoning) = &turn.reasoning {
        for piece in split(reasoning, 7) {
            events.push(chunk(model, json!({"reasoning_content": piece}), None));
        }
    }
    for piece in split(&turn.text, 6) {
        events.push(chunk(model, json!({"content": piece}), None));
    }
    let cut = matches!(turn.fault, Some(Fault::CutMidToolCall));
    // Legacy function calling has room for one call only.
    let calls = if legacy(answer) { &turn.tool_calls[..turn.tool_calls.len().min(1)] } else { &turn.tool_calls[..] };
    for (index, call) in calls.iter().enumerate() {
        events.push(chunk(model, call_delta(answer, index, call, "", true), None));
        let fragments = split(&call.arguments, 5);
        let keep = if cut { fragments.len() / 2 } else { fragments.len() };
        for fragment in fragments.into_iter().take(keep) {
            events.push(chunk(model, call_delta(answer, index, call, &fragment, false), None));
        }
        if cut {
            return frame(events, turn.fault.as_ref());
        }
    }
    events.push(chunk(model, json!({}), Some(&finish_reason(answer))));
    if let Some(usage) = answer.usage {
        let usage_chunk = json!({
            "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": CREATED, "model": model,
            "choices": [], "usage": usage_json(usage),
        });
        events.push(format!("data: {usage_chunk}\n\n"));
    }
    events.push("data: [DONE]\n\n".to_string());
    frame(events, turn.fault.as_ref())
}
