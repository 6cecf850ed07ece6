//! The scripted server's Messages answers, shaped like Anthropic's: `message`
//! objects, and `event:`/`data:` streams with `message_start`, a `ping`,
//! thinking/text/tool_use blocks (tool input as `input_json_delta` fragments),
//! `message_delta` and `message_stop`. Quirks (see `quirks.rs`): no usage,
//! and LiteLLM's one `tool_use` block per argument fragment.

use serde_json::{Value, json};

use super::quirks::{Answer, Quirk};
use super::{Fault, Piece, ScriptedTurn, frame, split};
use crate::message::Usage;

const SIGNATURE: &str = "scripted-signature";

fn stop_reason(turn: &ScriptedTurn) -> String {
    turn.finish_reason
        .clone()
        .unwrap_or_else(|| if turn.tool_calls.is_empty() { "end_turn".to_string() } else { "tool_use".to_string() })
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens.saturating_sub(usage.cache_hit_tokens + usage.cache_write_tokens),
        "cache_read_input_tokens": usage.cache_hit_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "output_tokens": usage.output_tokens,
    })
}

fn input_of(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| json!({}))
}

pub(super) fn message_body(answer: &Answer<'_>) -> Value {
    let (turn, model) = (answer.turn, answer.model);
    let mut content = Vec::new();
    if let Some(thinking) = &turn.reasoning {
        let signature = turn.signature.as_deref().unwrap_or(SIGNATURE);
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
    }
    if !turn.text.is_empty() {
        content.push(json!({"type": "text", "text": turn.text}));
    }
    for call in &turn.tool_calls {
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input_of(&call.arguments)}));
    }
    let mut body = json!({
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop_reason(turn), "stop_sequence": null,
    });
    if let Some(usage) = answer.usage {
        body["usage"] = usage_json(usage);
    }
    body
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

pub(super) fn stream_pieces(answer: &Answer<'_>) -> Vec<Piece> {
    let (turn, model) = (answer.turn, answer.model);
    let mut message = json!({"id": "msg_scripted", "type": "message", "role": "assistant",
        "model": model, "content": [], "stop_reason": null, "stop_sequence": null});
    if let Some(usage) = answer.usage {
        message["usage"] = usage_json(usage);
        message["usage"]["output_tokens"] = json!(1);
    }
    let mut events = vec![
        event("message_start", json!({"type": "message_start", "message": message})),
        event("ping", json!({"type": "ping"})),
    ];
    let mut index = 0;
    if let Some(thinking) = &turn.reasoning {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        for piece in split(thinking, 7) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
            ));
        }
        let signature = turn.signature.as_deref().unwrap_or(SIGNATURE);
        events.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}}),
        ));
        events.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    if !turn.text.is_empty() {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in split(&turn.text, 6) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        events.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    let cut = matches!(turn.fault, Some(Fault::CutMidToolCall));
    let start = |index: usize, call: &crate::message::ToolCall| {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        )
    };
    let split_blocks = answer.quirks.has(Quirk::SplitToolUseBlocks);
    for call in &turn.tool_calls {
        events.push(start(index, call));
        let fragments = split(&call.arguments, 5);
        let keep = if cut { fragments.len() / 2 } else { fragments.len() };
        for (i, fragment) in fragments.into_iter().take(keep).enumerate() {
            if split_blocks && i > 0 {
                // LiteLLM: every fragment closes the block and opens another with the same id.
                events.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
                index += 1;
                events.push(start(index, call));
            }
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": fragment}}),
            ));
        }
        if cut {
            return frame(events, turn.fault.as_ref());
        }
        events.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    let mut delta =
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null}});
    if let Some(usage) = answer.usage {
        delta["usage"] = json!({"output_tokens": usage.output_tokens});
    }
    events.push(event("message_delta", delta));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    frame(events, turn.fault.as_ref())
}
