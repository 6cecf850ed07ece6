#![allow(clippy::unwrap_used, clippy::expect_used)]

use rmcp::model::{ClientRequest, GetMeta, JsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;

use super::*;
use crate::server::verbatim::write_result_line;

/// What rmcp's own reading makes of `line`, as the request the fast path
/// must match.
fn rmcp_reading(line: &str) -> (RequestId, ClientRequest) {
    match crate::lines::parse::<RxJsonRpcMessage<RoleServer>>(line.as_bytes()) {
        Some(JsonRpcMessage::Request(request)) => (request.id, request.request),
        other => panic!("rmcp did not read a request from {line}: {other:?}"),
    }
}

fn call_parts(request: &ClientRequest) -> (serde_json::Value, serde_json::Value) {
    let ClientRequest::CallToolRequest(call) = request else { panic!("not a call: {request:?}") };
    (serde_json::to_value(&call.params).unwrap(), serde_json::to_value(request.get_meta()).unwrap())
}

#[test]
fn a_call_reads_as_rmcp_reads_it() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
        r#"{"method":"tools/call","params":{"arguments":{"a":[1,2.5,"x"]},"name":"get-sum"},"id":"s-1","jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p9","other":{"k":1}}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noargs"},"extra":true}"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"bom\"}}",
    ];
    for line in lines {
        let (id, request) = call_of(line.as_bytes()).unwrap_or_else(|| panic!("not read as a call: {line}"));
        let (rmcp_id, rmcp_request) = rmcp_reading(line);
        assert_eq!(id, rmcp_id, "{line}");
        assert_eq!(call_parts(&request), call_parts(&rmcp_request), "{line}");
    }
    // The progress token is where the handler's context looks for it.
    let (_, request) = call_of(lines[2].as_bytes()).unwrap();
    assert_eq!(request.get_meta().get_progress_token(), rmcp_reading(lines[2]).1.get_meta().get_progress_token());
    assert!(request.get_meta().get_progress_token().is_some());
}

#[test]
fn anything_but_a_plain_call_is_left_to_rmcp() {
    for line in [
        // other methods, whatever their params
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}"#,
        // a notification, an answer, a wrong version, no params, bad params
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
        // not JSON, or cut short
        "not json",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ec"#,
    ] {
        assert!(call_of(line.as_bytes()).is_none(), "read as a call: {line}");
    }
}

#[test]
fn a_plain_call_is_relayable_with_its_arguments_as_written() {
    let line = r#"{"jsonrpc":"2.0","id":"a\"1","method":"tools/call","params":{"arguments":{"b":1.50,"a":"\u00e9"},"name":"e\u0063ho","other":1}}"#;
    let call = relayable_call_of(line.as_bytes()).unwrap();
    assert_eq!(call.id, rmcp_reading(line).0);
    assert_eq!(call.name, "echo");
    assert_eq!(call.arguments.unwrap().get(), r#"{"b":1.50,"a":"\u00e9"}"#);
    let bare = relayable_call_of(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid"}}"#).unwrap();
    assert!(bare.arguments.is_none());
    let null = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid","arguments":null}}"#;
    assert!(relayable_call_of(null).unwrap().arguments.is_none());
    // A progress token alone (rmcp's client sends one with every request).
    for (line, token) in [
        (
            &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"pid"}}"#[..],
            "7",
        ),
        (
            &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"t"},"name":"pid"}}"#
                [..],
            "\"t\"",
        ),
    ] {
        let call = relayable_call_of(line).unwrap();
        assert_eq!(serde_json::to_string(&call.progress.unwrap()).unwrap(), token);
    }
}

#[test]
fn a_call_with_meta_or_a_task_is_not_relayable() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p9","x":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":[1]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{"ttl":1000}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ec"#,
    ] {
        assert!(relayable_call_of(line.as_bytes()).is_none(), "relayable: {line}");
    }
}

#[test]
fn a_relayed_calls_id_reads_as_rmcp_reads_it() {
    for id in ["7", "-3", "0", "1.0", "1e2", r#""a""#, r#""quiver-raw-1""#, r#""a\"b""#, r#""\u00e9""#, r#""""#] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#);
        let call = relayable_call_of(line.as_bytes()).unwrap_or_else(|| panic!("not relayable: {line}"));
        assert_eq!(call.id, rmcp_reading(&line).0, "{line}");
    }
    // What rmcp refuses as an id is not relayed either.
    for id in ["null", "1.5", "99999999999999999999", "[1]", "true"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}}}}"#);
        assert!(relayable_call_of(line.as_bytes()).is_none(), "relayable: {line}");
    }
}

#[test]
fn a_result_line_made_in_place_is_the_answer_rmcp_would_read() {
    let text = r#"{"content":[{"type":"text","text":"x"}],"n":1}"#;
    for id in [
        RequestId::Number(-7),
        RequestId::Number(i64::MAX),
        RequestId::String("a\"b\\c\u{1}".into()),
        RequestId::String("plain".into()),
    ] {
        let mut queue = b"earlier line\n".to_vec();
        write_result_line(&mut queue, &id, text.as_bytes());
        let line = queue.strip_prefix(b"earlier line\n".as_slice()).unwrap();
        assert_eq!(line.last(), Some(&b'\n'));
        let read: serde_json::Value = serde_json::from_slice(line).unwrap();
        let expected = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": serde_json::from_str::<serde_json::Value>(text).unwrap()});
        assert_eq!(read, expected);
        assert!(line.windows(text.len()).any(|w| w == text.as_bytes()), "the result's text as written");
    }
}

#[test]
fn a_call_line_made_in_place_reads_as_the_call() {
    let mut line = Vec::new();
    crate::client::calls::write_call_line(&mut line, "quiver-raw-9", "we\"ird", r#"{"a": 1.0}"#, true);
    let read: serde_json::Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(
        read,
        serde_json::json!({"jsonrpc": "2.0", "id": "quiver-raw-9", "method": "tools/call",
            "params": {"_meta": {"progressToken": "quiver-raw-9"}, "name": "we\"ird", "arguments": {"a": 1.0}}})
    );
    assert!(line.ends_with(b"\"arguments\":{\"a\": 1.0}}}\n"), "the arguments as the client wrote them");
}
