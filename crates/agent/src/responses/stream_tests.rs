use serde_json::{Value, json};

use super::*;
use crate::message::{FinishReason, StreamEvent};

fn run(events: &[Value]) -> (Result<ModelResponse, String>, Vec<StreamEvent>) {
    let mut assembler = ResponsesStreamAssembler::default();
    let mut seen = Vec::new();
    let mut sink = |e: StreamEvent| seen.push(e);
    for event in events {
        match assembler.push(&event.to_string(), &mut sink) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return (Err(e), seen),
        }
    }
    (assembler.finish(), seen)
}

fn completed(output: Value, usage: Value) -> Value {
    json!({"type": "response.completed", "sequence_number": 99, "response": {
        "id": "resp_1", "object": "response", "status": "completed", "output": output, "usage": usage}})
}

#[test]
fn text_reasoning_and_a_call_assemble_with_cached_tokens() {
    let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Plan."}],
        "encrypted_content": "gAAAA-opaque"});
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
        "arguments": "{\"path\":\"a.rs\"}", "status": "completed"});
    let message = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Reading.", "annotations": []}]});
    let events = vec![
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "Plan."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Read"}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "ing."}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": "fc_1",
            "call_id": "call_1", "name": "read_file", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"path\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\"a.rs\"}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": call}),
        completed(
            json!([]),
            json!({"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 896},
            "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 8}, "total_tokens": 1020}),
        ),
    ];
    let (response, seen) = run(&events);
    let response = response.unwrap();
    assert_eq!(response.text, "Reading.");
    assert_eq!(response.reasoning.as_deref(), Some("Plan."));
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].id, "call_1");
    assert_eq!(response.tool_calls[0].arguments, "{\"path\":\"a.rs\"}");
    assert_eq!(response.usage.cache_hit_tokens, 896);
    assert_eq!(response.usage.cache_miss_tokens, 104);
    assert!(response.usage_reported);
    // The reasoning item comes back verbatim, encrypted content and all.
    let kept: Value = serde_json::from_str(response.reasoning_signature.as_deref().unwrap()).unwrap();
    assert_eq!(kept, json!([reasoning]));
    assert!(seen.contains(&StreamEvent::ToolCallBegin { index: 0, id: "call_1".into(), name: "read_file".into() }));
    assert!(seen.contains(&StreamEvent::TextDelta("Read".into())));
}

#[test]
fn a_client_tool_search_call_is_a_tool_search_call_with_canonical_arguments() {
    let search = json!({"type": "tool_search_call", "id": "ts_1", "call_id": "call_s", "execution": "client",
        "status": "completed", "arguments": {"query": "git log", "limit": 3}});
    let events = vec![
        json!({"type": "response.output_item.added", "item": {"type": "tool_search_call", "id": "ts_1", "call_id": "call_s",
            "execution": "client", "status": "in_progress", "arguments": {}}}),
        json!({"type": "response.output_item.done", "item": search}),
        completed(json!([]), json!({"input_tokens": 10, "output_tokens": 5})),
    ];
    let (response, seen) = run(&events);
    let response = response.unwrap();
    assert_eq!(response.tool_calls[0].name, "tool_search");
    assert_eq!(response.tool_calls[0].arguments, r#"{"limit":3,"query":"git log"}"#);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert!(matches!(&seen[1], StreamEvent::ToolCallArgumentsDelta { index: 0, .. }));
}

#[test]
fn usage_missing_is_unknown_not_zero() {
    let events = vec![
        json!({"type": "response.output_text.delta", "delta": "hi"}),
        json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}]}}),
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    ];
    let response = run(&events).0.unwrap();
    assert!(!response.usage_reported);
    assert_eq!(response.finish_reason, FinishReason::Stop);
}

#[test]
fn incomplete_failed_error_and_cut_streams_say_what_happened() {
    let incomplete = json!({"type": "response.incomplete", "response": {"status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}, "output": [], "usage": {"input_tokens": 1, "output_tokens": 2}}});
    assert_eq!(run(&[incomplete]).0.unwrap().finish_reason, FinishReason::Length);

    let failed = json!({"type": "response.failed", "response": {"status": "failed",
        "error": {"code": "server_error", "message": "The model failed."}}});
    let err = run(&[failed]).0.unwrap_err();
    assert!(err.contains("server_error") && err.contains("The model failed."), "{err}");

    let error = json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "param": null});
    assert!(run(&[error]).0.unwrap_err().contains("Slow down."));

    let cut = vec![json!({"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_9",
        "call_id": "c9", "name": "x", "arguments": ""}})];
    let err = run(&cut).0.unwrap_err();
    assert!(err.contains("without response.completed") && err.contains("fc_9"), "{err}");
}

#[test]
fn a_non_streamed_response_reads_the_same() {
    let value = json!({"id": "resp_2", "object": "response", "status": "completed", "output": [
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "enc"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "grep", "arguments": "{}"},
    ], "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 3}});
    let response = parse_response(&value).unwrap();
    assert_eq!(response.tool_calls[0].id, "call_2");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert!(response.reasoning.is_none());
    assert!(response.reasoning_signature.unwrap().contains("\"encrypted_content\":\"enc\""));
    let failed = json!({"status": "failed", "error": {"code": "invalid_prompt", "message": "no"}, "output": []});
    assert!(parse_response(&failed).unwrap_err().contains("invalid_prompt"));
}

/// `response.failed` and `error` events: the codes the Responses API lists
/// as temporary (`server_error`, `rate_limit_exceeded`) may go again.
#[test]
fn a_failed_response_is_transient_only_for_a_server_error_or_a_rate_limit() {
    let failed = |code: &str| {
        json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed",
            "error": {"code": code, "message": "it broke"}}})
    };
    let error = |code: &str| json!({"type": "error", "code": code, "message": "it broke", "param": null});
    for (event, transient) in [
        (failed("server_error"), true),
        (failed("rate_limit_exceeded"), true),
        (failed("invalid_prompt"), false),
        (error("server_error"), true),
        (error("ERR_SOMETHING"), false),
    ] {
        let mut sink = |_: StreamEvent| {};
        let mut assembler = ResponsesStreamAssembler::default();
        let said = assembler.push(&event.to_string(), &mut sink).unwrap_err();
        assert!(said.contains("it broke"), "{said}");
        assert_eq!(assembler.transient(), transient, "{event}");
    }
}
