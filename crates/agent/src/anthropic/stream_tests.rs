use serde_json::json;

use super::MessagesStreamAssembler;
use crate::http::StreamAssembler;
use crate::message::{ModelResponse, StreamEvent};

fn feed(events: &[serde_json::Value]) -> (Result<ModelResponse, String>, Vec<StreamEvent>) {
    let mut seen = Vec::new();
    let mut sink = |e: StreamEvent| seen.push(e);
    let mut assembler = MessagesStreamAssembler::default();
    for event in events {
        if let Err(e) = assembler.push(&event.to_string(), &mut sink) {
            return (Err(e), seen);
        }
    }
    (assembler.finish(), seen)
}

fn start(index: u64, id: &str, name: &str, input: serde_json::Value) -> serde_json::Value {
    json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": id, "name": name, "input": input}})
}

fn stop(index: u64) -> serde_json::Value {
    json!({"type": "content_block_stop", "index": index})
}

fn end() -> Vec<serde_json::Value> {
    vec![json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}), json!({"type": "message_stop"})]
}

#[test]
fn blocks_repeating_an_id_with_string_inputs_are_one_call() {
    let mut events = vec![];
    for (i, piece) in ["{\"pa", "th\": \"a", ".rs\"}"].iter().enumerate() {
        events.push(start(i as u64, "toolu_1", "read_file", json!(piece)));
        events.push(stop(i as u64));
    }
    events.extend(end());
    let (response, seen) = feed(&events);
    let response = response.unwrap();
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].arguments, "{\"path\": \"a.rs\"}");
    assert!(!response.usage_reported, "no usage in the stream");
    assert_eq!(seen.iter().filter(|e| matches!(e, StreamEvent::ToolCallBegin { .. })).count(), 1);
}

#[test]
fn a_repeated_id_after_a_whole_call_is_a_distinct_call_with_its_own_id() {
    let mut events = vec![
        start(0, "toolu_1", "read_file", json!({})),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"a\"}"}}),
        stop(0),
        start(1, "toolu_1", "read_file", json!({})),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{\"path\":\"b\"}"}}),
        stop(1),
    ];
    events.extend(end());
    let response = feed(&events).0.unwrap();
    let calls: Vec<(&str, &str)> = response.tool_calls.iter().map(|c| (c.id.as_str(), c.arguments.as_str())).collect();
    assert_eq!(calls, [("toolu_1", "{\"path\":\"a\"}"), ("toolu_1_1", "{\"path\":\"b\"}")]);
}
