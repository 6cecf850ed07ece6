use super::ChatStreamAssembler;
use crate::http::StreamAssembler;
use crate::message::{FinishReason, StreamEvent};

fn feed(chunks: &[&str]) -> (Result<crate::message::ModelResponse, String>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let mut assembler = ChatStreamAssembler::default();
    for chunk in chunks {
        if let Err(e) = assembler.push(chunk, &mut sink) {
            return (Err(e), events);
        }
    }
    (assembler.finish(), events)
}

#[test]
fn calls_without_an_index_are_told_apart_by_their_ids() {
    let (response, _) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{\"x\""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"two","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]);
    let response = response.unwrap();
    let calls: Vec<(&str, &str, &str)> =
        response.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect();
    assert_eq!(calls, [("a", "one", r#"{"x":1}"#), ("b", "two", "{}")]);
}

#[test]
fn a_repeated_name_is_not_appended_and_begin_is_reported_once() {
    let (response, events) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read_file"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"read_file","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    assert_eq!(response.unwrap().tool_calls[0].name, "read_file");
    assert_eq!(events.iter().filter(|e| matches!(e, StreamEvent::ToolCallBegin { .. })).count(), 1);
}

#[test]
fn done_without_a_finish_reason_is_an_error() {
    let (response, _) = feed(&[r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#, "[DONE]"]);
    let err = response.unwrap_err();
    assert!(err.starts_with("[DONE] arrived after 1 chunks without a finish_reason"), "{err}");
}

#[test]
fn a_finish_reason_without_done_is_accepted() {
    // Some compatible servers close the stream without `[DONE]`.
    let (response, _) = feed(&[r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}"#]);
    let response = response.unwrap();
    assert_eq!((response.text.as_str(), response.finish_reason), ("hi", FinishReason::Stop));
}

#[test]
fn reasoning_is_kept_apart_from_the_text() {
    let (response, _) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think","content":null}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":null,"content":"answer"},"finish_reason":"stop"}]}"#,
    ]);
    let response = response.unwrap();
    assert_eq!((response.text.as_str(), response.reasoning.as_deref()), ("answer", Some("think")));
}
