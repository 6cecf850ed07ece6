use serde_json::{Value, json};

use super::*;
use crate::message::{Effort, Message, ModelRequest, ToolCall};

fn chat_tool(name: &str, description: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description,
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}})
}

fn request(model: &str, messages: Vec<Message>, tail: &[&str]) -> ModelRequest {
    let mut tools = vec![chat_tool("read_file", "Read a file."), chat_tool("tool_search", "Find and load more tools.")];
    tools.extend(tail.iter().map(|name| chat_tool(name, "A deferred tool.")));
    ModelRequest {
        system: "You are quiver.".into(),
        messages,
        tools: Value::Array(tools),
        head_len: 2,
        effort: Some(Effort::Low),
        ..ModelRequest::new(model)
    }
}

fn search_result(loaded: &[&str]) -> String {
    quiver_engine::canonical::to_string(&json!({"content": [{"type": "text", "text": "{}"}], "is_error": false,
        "metadata": {"loaded": loaded}}))
}

fn loading_conversation() -> Vec<Message> {
    let reasoning = r#"[{"encrypted_content":"gAAAA-opaque","id":"rs_1","summary":[],"type":"reasoning"}]"#;
    vec![
        Message::user("Show the git log."),
        Message::Assistant {
            text: String::new(),
            reasoning: None,
            reasoning_signature: Some(reasoning.into()),
            tool_calls: vec![ToolCall {
                id: "call_s".into(),
                name: "tool_search".into(),
                arguments: r#"{"query":"git log"}"#.into(),
            }],
        },
        Message::tool_result("call_s", search_result(&["git_log"]), false),
        Message::Assistant {
            text: "Loaded.".into(),
            reasoning: None,
            reasoning_signature: None,
            tool_calls: vec![ToolCall {
                id: "call_g".into(),
                name: "git_log".into(),
                arguments: r#"{"query":"-3"}"#.into(),
            }],
        },
        Message::tool_result("call_g", "abc123 first commit", false),
    ]
}

#[test]
fn a_loading_turn_on_a_tool_search_model() {
    let body =
        request_body(&request("gpt-5.4", loading_conversation(), &["git_log"]), &ResponsesDialect::default(), true);
    insta::assert_json_snapshot!(body);
}

#[test]
fn a_model_without_tool_search_gets_plain_functions_and_appended_loads() {
    let body =
        request_body(&request("gpt-4.1", loading_conversation(), &["git_log"]), &ResponsesDialect::default(), false);
    insta::assert_json_snapshot!(body);
}

#[test]
fn the_tools_stay_byte_identical_across_loads() {
    let dialect = ResponsesDialect::default();
    let before = request_body(&request("gpt-5.4", vec![Message::user("Show the git log.")], &[]), &dialect, true);
    let after = request_body(&request("gpt-5.4", loading_conversation(), &["git_log"]), &dialect, true);
    let bytes = |v: &Value| quiver_engine::canonical::to_string(&v["tools"]);
    assert_eq!(bytes(&before), bytes(&after));
    // And the input only grows: the earlier request's items are a prefix.
    let items = |v: &Value| v["input"].as_array().unwrap().clone();
    assert_eq!(items(&before)[..], items(&after)[..1]);
}

#[test]
fn a_load_no_search_answered_is_appended_and_a_failed_search_explains_itself() {
    let mut messages = loading_conversation();
    messages[2] = Message::tool_result("call_s", "`query` is empty", true);
    let body = request_body(&request("gpt-5.4", messages, &["git_log"]), &ResponsesDialect::default(), true);
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["name"], "git_log");
    assert!(tools.last().unwrap().get("defer_loading").is_none());
    let input = body["input"].as_array().unwrap();
    let output = input.iter().position(|i| i["type"] == "tool_search_output").unwrap();
    assert_eq!(input[output]["tools"], json!([]));
    assert_eq!(input[output + 1]["role"], "developer");
}

#[test]
fn tool_search_support_follows_the_model() {
    for yes in ["gpt-5.4", "gpt-5.4-mini", "gpt-5.6", "gpt-6", "openai/gpt-5.5"] {
        assert!(client_tool_search(yes), "{yes}");
    }
    for no in ["gpt-5", "gpt-5.1-codex", "gpt-4.1", "o3", "gpt-4o-mini", "llama"] {
        assert!(!client_tool_search(no), "{no}");
    }
}
