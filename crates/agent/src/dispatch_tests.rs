use serde_json::{Value, json};

use super::*;

fn tool(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": format!("The {name} tool."),
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}})
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

fn assistant(calls: Vec<ToolCall>) -> Message {
    Message::Assistant { text: String::new(), reasoning: None, reasoning_signature: None, tool_calls: calls }
}

/// A session that searched (loading `git_diff`), then called it.
fn request(calls_loaded: bool) -> ModelRequest {
    let mut messages = vec![
        Message::user("diff?"),
        assistant(vec![call("s1", "tool_search", r#"{"query":"diff"}"#)]),
        Message::Tool {
            call_id: "s1".into(),
            content: json!({"matches": [{"name": "git_diff", "status": "loaded", "description": "The git_diff tool."},
                {"name": "git_show", "status": "available_lazy", "description": "The git_show tool."}],
                "nextInstruction": "Loaded `git_diff`."})
            .to_string(),
            is_error: false,
            images: Vec::new(),
            loaded: vec!["git_diff".into()],
        },
    ];
    if calls_loaded {
        messages.push(assistant(vec![call("g1", "git_diff", r#"{"path":"src"}"#)]));
        messages.push(Message::tool_result("g1", "no changes", false));
    }
    ModelRequest {
        messages,
        tools: json!([tool("read_file"), tool("tool_search"), tool("git_diff")]),
        head_len: 2,
        ..ModelRequest::new("deepseek-chat")
    }
}

fn bytes(v: &impl serde::Serialize) -> String {
    quiver_engine::canonical::to_string(&serde_json::to_value(v).unwrap())
}

#[test]
fn tools_are_the_head_and_the_dispatcher_whatever_was_loaded() {
    let before = dispatched(&ModelRequest { tools: json!([tool("read_file"), tool("tool_search")]), ..request(false) });
    let after = dispatched(&request(true));
    assert_eq!(bytes(&before.tools), bytes(&after.tools));
    let names: Vec<&str> = after.tool_list().iter().filter_map(function_name).collect();
    assert_eq!(names, ["read_file", "tool_search", "call_tool"]);
    assert_eq!(after.head_len, 3);
}

#[test]
fn the_loading_result_carries_the_definition_and_the_call_goes_through_call_tool() {
    let sent = dispatched(&request(true));
    let Message::Tool { content, .. } = &sent.messages[2] else { panic!() };
    // The definitions, then what else matched: nothing but them and at most
    // `LOAD_NOTE_MAX` bytes of quiver's own.
    assert!(content.starts_with(r#"[{"description""#), "{content}");
    let definitions_end = content.rfind(']').unwrap() + 1;
    assert_eq!(&content[definitions_end..], "\nAlso matched (select: to load): git_show");
    assert!(content.len() - definitions_end <= crate::deferred::LOAD_NOTE_MAX, "{content}");
    assert!(content.contains(r#""name":"git_diff""#) && content.contains(r#""parameters""#), "{content}");
    let Message::Assistant { tool_calls, .. } = &sent.messages[3] else { panic!() };
    assert_eq!(tool_calls[0].name, "call_tool");
    assert_eq!(tool_calls[0].arguments, r#"{"arguments":{"path":"src"},"name":"git_diff"}"#);
    // A head tool is called as itself.
    let Message::Assistant { tool_calls, .. } = &sent.messages[1] else { panic!() };
    assert_eq!(tool_calls[0].name, "tool_search");
    // The earlier request's messages are a prefix of the later one's.
    let earlier = dispatched(&request(false));
    assert_eq!(bytes(&earlier.messages), bytes(&sent.messages[..3].to_vec()));
}

#[test]
fn a_dispatched_call_unwraps_to_the_tool_and_wraps_back_the_same() {
    let mut calls = vec![
        call("g1", "call_tool", r#"{"name":"git_diff","arguments":{"path":"src"}}"#),
        call("g2", "call_tool", r#"{"name":"git_diff","arguments":"{\"path\":\"lib\"}"}"#),
        call("g3", "call_tool", r#"{"arguments":{}}"#),
        call("g4", "read_file", r#"{"path":"a"}"#),
    ];
    unwrap_calls(&mut calls);
    assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("git_diff", r#"{"path":"src"}"#));
    assert_eq!((calls[1].name.as_str(), calls[1].arguments.as_str()), ("git_diff", r#"{"path":"lib"}"#));
    assert_eq!(calls[2].name, "call_tool", "no name: left for the engine to refuse");
    assert_eq!(calls[3].name, "read_file");
    assert_eq!(wrap(&calls[0]).arguments, r#"{"arguments":{"path":"src"},"name":"git_diff"}"#);
}
