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

/// Extended thinking as documented: a `redacted_thinking` block arrives whole
/// in its `content_block_start`; each `thinking` block streams its text and
/// then its own `signature_delta`. All of them go back unmodified, in order,
/// with the tool-use turn (a merged text under the last signature, or a
/// dropped redacted block, is refused by the API).
#[test]
fn thinking_blocks_are_kept_one_by_one_with_their_signatures() {
    let thinking = |index: u64, text: &str, signature: &str| {
        vec![
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "thinking_delta", "thinking": text}}),
            json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": signature}}),
            stop(index),
        ]
    };
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"}}),
        stop(0),
    ];
    events.extend(thinking(1, "First.", "S1=="));
    events.extend(thinking(2, "Second.", "S2=="));
    events.extend([
        start(3, "toolu_1", "read_file", json!({})),
        json!({"type": "content_block_delta", "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a\"}"}}),
        stop(3),
    ]);
    events.extend(end());
    let response = feed(&events).0.unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("First.Second."));
    let message = crate::message::Message::from_response(&response);
    let mut req = crate::message::ModelRequest::new("claude-sonnet-4-5");
    req.messages = vec![message];
    let body = super::super::request_body(&req, None);
    assert_eq!(
        body.pointer("/messages/0/content").unwrap().as_array().unwrap()[..3],
        [
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"}),
            json!({"type": "thinking", "thinking": "First.", "signature": "S1=="}),
            json!({"type": "thinking", "thinking": "Second.", "signature": "S2=="}),
        ]
    );

    // One block, as ever: its signature alone, replayed with the text.
    let mut events = thinking(0, "Only.", "S0==");
    events.extend(end());
    assert_eq!(feed(&events).0.unwrap().reasoning_signature.as_deref(), Some("S0=="));
}

/// An `error` event after the 200: the kinds Anthropic answers with 529, 500
/// or 429 before a stream starts are temporary (the request may go again);
/// any other is not.
#[test]
fn an_overload_mid_stream_is_transient_and_a_refusal_is_not() {
    for (kind, transient) in
        [("overloaded_error", true), ("api_error", true), ("invalid_request_error", false), ("weird", false)]
    {
        let mut sink = |_: StreamEvent| {};
        let mut assembler = MessagesStreamAssembler::default();
        let error = json!({"type": "error", "error": {"type": kind, "message": "Overloaded"}});
        let said = assembler.push(&error.to_string(), &mut sink).unwrap_err();
        assert!(said.contains(kind), "{said}");
        assert_eq!(assembler.transient(), transient, "{kind}");
    }
}
