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

/// llama-cpp-python 0.3.36 (a stop sequence matching at once): `[DONE]`
/// without a finish_reason is a clean end; with a call still unfinished it
/// is not.
#[test]
fn done_without_a_finish_reason_is_a_stop_unless_a_call_is_unfinished() {
    let (response, _) = feed(&[r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#, "[DONE]"]);
    let response = response.unwrap();
    assert_eq!((response.text.as_str(), response.finish_reason), ("", FinishReason::Stop));
    let (response, _) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}"#,
        "[DONE]",
    ]);
    assert_eq!(response.unwrap().finish_reason, FinishReason::ToolCalls);
    let (response, _) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}"#,
        "[DONE]",
    ]);
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

fn calls_of(response: &crate::message::ModelResponse) -> Vec<(&str, &str, &str)> {
    response.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect()
}

#[test]
fn deltas_repeating_id_and_name_continue_their_call_with_or_without_an_index() {
    for index in [r#""index":0,"#, ""] {
        let chunk = |args: &str| {
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{{index}"id":"a","type":"function","function":{{"name":"read_file","arguments":"{args}"}}}}]}}}}]}}"#
            )
        };
        let (response, events) = feed(&[
            &chunk(""),
            &chunk(r#"{\"pa"#),
            &chunk(r#"th\":\"x\"}"#),
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        let response = response.unwrap();
        assert_eq!(calls_of(&response), [("a", "read_file", r#"{"path":"x"}"#)], "{index}");
        assert_eq!(events.iter().filter(|e| matches!(e, StreamEvent::ToolCallBegin { .. })).count(), 1);
    }
}

#[test]
fn calls_sent_at_one_index_under_new_ids_stay_apart() {
    let (response, _) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"two","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    assert_eq!(calls_of(&response.unwrap()), [("a", "one", "{}"), ("b", "two", "{}")]);
}

#[test]
fn a_legacy_function_call_delta_is_one_call_with_an_assigned_id() {
    let (response, _) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"function_call":{"name":"read_file","arguments":""}}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"path\":"}}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"function_call":{"arguments":"\"a\"}"}}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}"#,
    ]);
    let response = response.unwrap();
    assert_eq!(calls_of(&response), [("call_0", "read_file", r#"{"path":"a"}"#)]);
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert!(!response.usage_reported);
}

/// llama-cpp-python 0.3 (chatml-function-calling) mirrors every tool-call
/// delta in a legacy `function_call` of the same call: one call, not two.
#[test]
fn a_function_call_mirroring_tool_calls_is_not_a_second_call() {
    let delta = |args: &str| {
        format!(
            r#"{{"choices":[{{"index":0,"delta":{{"role":null,"content":null,"function_call":{{"name":"probe_echo","arguments":{args}}},"tool_calls":[{{"index":0,"id":"call__0_probe_echo_cmpl-1","type":"function","function":{{"name":"probe_echo","arguments":{args}}}}}]}}}}]}}"#
        )
    };
    let (a, b) = (delta(r#""{\"word\": ""#), delta(r#""\"ping\"}""#));
    let (response, _) =
        feed(&[&a, &b, r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#, "[DONE]"]);
    let calls = response.unwrap().tool_calls;
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        (calls[0].id.as_str(), calls[0].arguments.as_str()),
        ("call__0_probe_echo_cmpl-1", r#"{"word": "ping"}"#)
    );
}

#[test]
fn a_non_streamed_function_call_mirroring_tool_calls_is_not_a_second_call() {
    let body: serde_json::Value = serde_json::from_str(
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"call_1","type":"function","function":{"name":"probe_echo","arguments":"{}"}}],
            "function_call":{"name":"probe_echo","arguments":"{}"}},"finish_reason":"tool_calls"}]}"#,
    )
    .unwrap();
    let calls = super::super::parse_response(&body).unwrap().tool_calls;
    assert_eq!(calls.len(), 1, "{calls:?}");
}

/// OpenAI's documented refusal: `delta.refusal` fragments while `content`
/// stays null, then `finish_reason: "stop"`; non-streamed, `message.refusal`
/// next to `content: null`. Either way the refusal is the answer.
#[test]
fn a_refusal_is_the_answer_streamed_or_not() {
    let (response, events) = feed(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"refusal":"I'm sorry, "},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":8,"total_tokens":17}}"#,
        "[DONE]",
    ]);
    let response = response.unwrap();
    assert_eq!(response.text, "I'm sorry, I can't help with that.");
    assert_eq!(response.finish_reason, FinishReason::Stop);
    let shown: String =
        events.iter().filter_map(|e| if let StreamEvent::TextDelta(t) = e { Some(t.as_str()) } else { None }).collect();
    assert_eq!(shown, response.text);

    let body = serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop", "message":
        {"role": "assistant", "content": null, "refusal": "I'm sorry, I can't help with that."}}]});
    let response = crate::openai::parse_response(&body).unwrap();
    assert_eq!(response.text, "I'm sorry, I can't help with that.");
}

/// An error chunk after the 200: OpenAI's temporary kinds (`server_error`,
/// `rate_limit_exceeded`, in `type` or `code`) may go again; any other not.
#[test]
fn a_server_error_mid_stream_is_transient_and_an_invalid_request_is_not() {
    for (error, transient) in [
        (r#"{"message":"The server had an error","type":"server_error","param":null,"code":null}"#, true),
        (r#"{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}"#, true),
        (r#"{"message":"bad","type":"invalid_request_error","code":"context_length_exceeded"}"#, false),
        (r#"{"message":"no kind"}"#, false),
    ] {
        let mut sink = |_: StreamEvent| {};
        let mut assembler = ChatStreamAssembler::default();
        let first = r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#;
        assert!(!assembler.push(first, &mut sink).unwrap());
        let said = assembler.push(&format!(r#"{{"error":{error}}}"#), &mut sink).unwrap_err();
        assert!(said.contains("mid-stream"), "{said}");
        assert_eq!(assembler.transient(), transient, "{error}");
    }
}
