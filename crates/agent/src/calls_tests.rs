use super::{complete_json, continues, make_ids_unique, replayed_arguments};
use crate::message::ToolCall;

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "read_file".into(), arguments: "{}".into() }
}

#[test]
fn repeated_and_missing_ids_become_unique_and_deterministic() {
    let mut calls = vec![call("a"), call("a"), call(""), call("b"), call("a"), call("")];
    assert_eq!(make_ids_unique(&mut calls), 4);
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "a_1", "call_2", "b", "a_4", "call_5"]);
    // Already unique: nothing changes.
    assert_eq!(make_ids_unique(&mut calls), 0);
}

#[test]
fn an_assigned_id_never_collides_with_a_later_given_one() {
    let mut calls = vec![call("x"), call("x"), call("x_1")];
    make_ids_unique(&mut calls);
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["x", "x_1_", "x_1"]);
}

#[test]
fn a_fragment_continues_a_call_until_its_json_is_whole() {
    assert!(continues("", "{\"pa"));
    assert!(continues("{\"pa", "th\":1}"));
    assert!(!continues("{\"path\":1}", "{\"path\":2}"));
    // An empty repeat (a header repeated with no arguments) never opens a call.
    assert!(continues("{\"path\":1}", ""));
    assert!(complete_json(" {} ") && !complete_json("") && !complete_json("{\"a\":"));
}

#[test]
fn a_call_with_no_arguments_goes_back_as_an_empty_object_on_both_openai_wires() {
    assert_eq!(replayed_arguments(""), "{}");
    assert_eq!(replayed_arguments(" \n"), "{}");
    assert_eq!(replayed_arguments(r#"{"path":"a"}"#), r#"{"path":"a"}"#);
    let call = ToolCall { id: "c1".into(), name: "git_status".into(), arguments: String::new() };
    let history = vec![
        crate::message::Message::user("is the tree clean?"),
        crate::message::Message::Assistant {
            text: String::new(),
            reasoning: None,
            reasoning_signature: None,
            tool_calls: vec![call],
        },
    ];
    let request = crate::message::ModelRequest {
        model: "m".into(),
        system: "sys".into(),
        messages: history,
        ..Default::default()
    };
    let chat = crate::openai::request_body(&request, &crate::openai::OpenAiDialect::default());
    assert_eq!(chat.pointer("/messages/2/tool_calls/0/function/arguments"), Some(&"{}".into()), "{chat}");
    let responses = crate::responses::request_body(&request, &Default::default(), false);
    let text = responses.to_string();
    assert!(text.contains(r#""arguments":"{}""#) && !text.contains(r#""arguments":"""#), "{text}");
}
