//! The scripted server's Chat Completions answers, shaped like DeepSeek's and
//! OpenAI's: `chat.completion` objects, `chat.completion.chunk` streams whose
//! tool calls open with `{index, id, type, function: {name, arguments: ""}}`
//! and continue with argument fragments, a usage-only chunk, then `[DONE]`.

use serde_json::{Value, json};

use super::{Fault, Piece, ScriptedTurn, frame, split};
use crate::message::Usage;

const CREATED: u64 = 1_700_000_000;

fn finish_reason(turn: &ScriptedTurn) -> String {
    turn.finish_reason
        .clone()
        .unwrap_or_else(|| if turn.tool_calls.is_empty() { "stop".to_string() } else { "tool_calls".to_string() })
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

pub(super) fn completion_body(turn: &ScriptedTurn, usage: &Usage, model: &str) -> Value {
    let mut message = json!({"role": "assistant", "content": turn.text});
    if turn.text.is_empty() && !turn.tool_calls.is_empty() {
        message["content"] = Value::Null;
    }
    if let Some(reasoning) = &turn.reasoning {
        message["reasoning_content"] = json!(reasoning);
    }
    if !turn.tool_calls.is_empty() {
        message["tool_calls"] = turn
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
    }
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(turn)}],
        "usage": usage_json(usage),
    })
}

pub(super) fn fim_body(turn: &ScriptedTurn, usage: &Usage, model: &str) -> Value {
    json!({
        "id": "cmpl-scripted",
        "object": "text_completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "text": turn.text, "logprobs": null, "finish_reason": finish_reason(turn)}],
        "usage": usage_json(usage),
    })
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

pub(super) fn stream_pieces(turn: &ScriptedTurn, usage: &Usage, model: &str) -> Vec<Piece> {
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
    for (index, call) in turn.tool_calls.iter().enumerate() {
        let open = json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": ""}}]});
        events.push(chunk(model, open, None));
        let fragments = split(&call.arguments, 5);
        let keep = if cut { fragments.len() / 2 } else { fragments.len() };
        for fragment in fragments.into_iter().take(keep) {
            let delta = json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]});
            events.push(chunk(model, delta, None));
        }
        if cut {
            return frame(events, turn.fault.as_ref());
        }
    }
    events.push(chunk(model, json!({}), Some(&finish_reason(turn))));
    let usage_chunk = json!({
        "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": CREATED, "model": model,
        "choices": [], "usage": usage_json(usage),
    });
    events.push(format!("data: {usage_chunk}\n\n"));
    events.push("data: [DONE]\n\n".to_string());
    frame(events, turn.fault.as_ref())
}
