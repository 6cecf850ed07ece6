#![allow(clippy::unwrap_used)]

use rmcp::model::NumberOrString;
use serde_json::json;

use super::*;

fn body(meta: Value, extra: Value) -> Vec<u8> {
    let mut params = json!({"name": "echo", "arguments": {"message": "hi"}, "_meta": meta});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params})).unwrap()
}

fn meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "progressToken": "p1"})
}

#[test]
fn a_plain_stateless_call_is_read_with_its_progress_token_and_tail() {
    let mut with_tail = meta(json!({}));
    with_tail["quiver/tail"] = json!({"loaded": ["a"], "mac": "00"});
    let line = body(with_tail, json!({}));
    let call = stateless_call_of(&line).unwrap();
    assert_eq!(call.id, RequestId::Number(4));
    assert_eq!(call.name, "echo");
    assert_eq!(call.arguments.unwrap().get(), r#"{"message":"hi"}"#);
    assert_eq!(call.progress, Some(ProgressToken(NumberOrString::String("p1".into()))));
    assert_eq!(call.tail.unwrap()["loaded"], json!(["a"]));
}

#[test]
fn what_rmcp_must_see_is_left_to_it() {
    let cases = [
        // a client that could be asked something, or asked for log messages
        body(meta(json!({"elicitation": {}})), json!({})),
        body(meta(json!({"sampling": {}})), json!({})),
        body(meta(json!({"roots": {}})), json!({})),
        body(
            {
                let mut m = meta(json!({}));
                m["io.modelcontextprotocol/logLevel"] = json!("debug");
                m
            },
            json!({}),
        ),
        // a retry, a task, another revision, no client info
        body(meta(json!({})), json!({"requestState": "s", "inputResponses": {}})),
        body(meta(json!({})), json!({"task": {"ttl": 1}})),
        body(
            {
                let mut m = meta(json!({}));
                m["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
                m
            },
            json!({}),
        ),
        body(
            {
                let mut m = meta(json!({}));
                m.as_object_mut().unwrap().remove("io.modelcontextprotocol/clientInfo");
                m
            },
            json!({}),
        ),
        // arguments that are no object
        body(meta(json!({})), json!({"arguments": [1]})),
    ];
    for line in cases {
        assert!(stateless_call_of(&line).is_none(), "taken: {}", String::from_utf8_lossy(&line));
    }
}

fn headers(pairs: &[(&'static str, &'static str)]) -> http::HeaderMap {
    let mut headers = http::HeaderMap::new();
    for (k, v) in pairs {
        headers.append(*k, http::HeaderValue::from_static(v));
    }
    headers
}

#[test]
fn the_standard_headers_must_name_this_call_once() {
    let good = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    assert!(plain_headers(&headers(&good), "echo"));
    assert!(!plain_headers(&headers(&good), "other"));
    assert!(!plain_headers(&headers(&good[..2]), "echo"), "no Mcp-Name");
    let mut twice = good.to_vec();
    twice.push(("mcp-name", "echo"));
    assert!(!plain_headers(&headers(&twice), "echo"));
    let mut param = good.to_vec();
    param.push(("mcp-param-region", "eu"));
    assert!(!plain_headers(&headers(&param), "echo"));
    let old = [("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    assert!(!plain_headers(&headers(&old), "echo"));
}

#[test]
fn the_answer_gets_the_clients_id_the_result_type_and_the_tail() {
    let line = br#"{"jsonrpc":"2.0","id":"quiver-lane-7","result":{"content":[{"type":"text","text":"hi"}]}}"#;
    let token = json!({"loaded": ["echo"], "mac": "ab"});
    let answer = as_stateless_answer(line, &RequestId::Number(4), Some(&token));
    let value: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(value["id"], 4);
    assert_eq!(value["result"]["resultType"], "complete");
    assert_eq!(value["result"]["_meta"]["quiver/tail"], token);
    assert_eq!(value["result"]["content"][0]["text"], "hi");
    // The server's text follows as it wrote it.
    let text = String::from_utf8(answer).unwrap();
    assert!(text.ends_with(r#""content":[{"type":"text","text":"hi"}]}}"#), "{text}");

    // No tail to carry, a type already there: nothing added.
    let typed = r#"{"resultType":"complete","content":[]}"#;
    assert_eq!(with_stateless_members(typed, None), typed);
    // An empty result, and one with a `_meta` of its own.
    let empty: Value = serde_json::from_str(&with_stateless_members("{ }", Some(&token))).unwrap();
    assert_eq!(empty, json!({"resultType": "complete", "_meta": {"quiver/tail": token}}));
    let own: Value = serde_json::from_str(&with_stateless_members(r#"{"_meta":{"k":1}}"#, Some(&token))).unwrap();
    assert_eq!(own["_meta"], json!({"k": 1, "quiver/tail": token}));
    assert_eq!(own["resultType"], "complete");
}
