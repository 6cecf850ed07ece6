use serde_json::{Value, json};

use super::*;

#[test]
fn a_known_method_with_params_that_do_not_fit_is_invalid_params_saying_why() {
    let e = answer("tools/call", Some(&json!({"name": "read_file", "arguments": "notanobject"})));
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("`tools/call`") && e.message.contains("invalid type"), "{}", e.message);

    let e = answer("tools/call", Some(&json!({})));
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("`name`"), "{}", e.message);

    let e = answer("tools/call", None);
    assert!(e.message.contains("`params` is missing"), "{}", e.message);

    let e = answer("resources/read", Some(&json!({"uri": 7})));
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn an_unknown_method_is_method_not_found_and_named() {
    let e = answer("no/such", None);
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    assert!(e.message.contains("`no/such`"), "{}", e.message);
}

fn answered(line: &str) -> Option<Value> {
    unreadable_line(line.as_bytes()).map(|l| serde_json::from_slice(&l).unwrap())
}

#[test]
fn a_line_that_is_not_json_is_a_parse_error_and_a_batch_an_invalid_request() {
    let line = String::from_utf8(unreadable_line(b"garbage not json").unwrap()).unwrap();
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"#) && line.ends_with("}\n"),
        "{line}"
    );
    let a = answered("garbage not json").unwrap();
    assert_eq!(a["error"]["code"], -32700);
    assert_eq!(a["id"], Value::Null);
    let a = answered(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#).unwrap();
    assert_eq!(a["error"]["code"], -32600);
    assert!(a["error"]["message"].as_str().unwrap().contains("batches"));
    let a = answered(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).unwrap();
    assert_eq!((a["error"]["code"].clone(), a["id"].clone()), (json!(-32600), Value::Null));
    let a = answered(r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#).unwrap();
    assert_eq!((a["error"]["code"].clone(), a["id"].clone()), (json!(-32600), json!("x")));
    let a = unreadable_line(b"\xff\xfe not utf-8").map(|l| serde_json::from_slice::<Value>(&l).unwrap()).unwrap();
    assert_eq!(a["error"]["code"], -32700);
}

#[test]
fn a_response_a_notification_or_a_blank_line_gets_no_answer() {
    assert_eq!(answered(""), None);
    assert_eq!(answered("   "), None);
    assert_eq!(answered(r#"{"jsonrpc":"2.0","id":4,"result":{"odd":true}}"#), None);
    assert_eq!(answered(r#"{"jsonrpc":"2.0","method":"notifications/odd","params":7}"#), None);
}

/// An `id` with no `method` (and no `result` or `error`) is a
/// request that cannot be served; the client is told, under its id.
#[test]
fn an_id_without_a_method_is_an_invalid_request_under_that_id() {
    let a = answered(r#"{"jsonrpc":"2.0","id":4}"#).unwrap();
    assert_eq!((a["error"]["code"].clone(), a["id"].clone()), (json!(-32600), json!(4)));
    assert!(a["error"]["message"].as_str().unwrap().contains("`method`"), "{a}");
    let a = answered(r#"{"jsonrpc":"2.0","id":"s","params":{}}"#).unwrap();
    assert_eq!(a["id"], "s");
    assert_eq!(answered(r#"{"jsonrpc":"2.0","id":4,"error":{"code":1}}"#), None, "a response");
}

fn oversized(head: &str) -> Option<Value> {
    oversized_line(head.as_bytes(), 16 << 20).map(|l| serde_json::from_slice(&l).unwrap())
}

#[test]
fn an_oversized_line_is_answered_with_its_id_when_the_cut_left_one() {
    let a = oversized(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"t":"aaaa"#)
        .unwrap();
    assert_eq!((a["error"]["code"].clone(), a["id"].clone()), (json!(-32600), json!(7)));
    assert!(a["error"]["message"].as_str().unwrap().contains("16 MiB"), "{a}");
    let a = oversized(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"t":"aaa"#).unwrap();
    assert_eq!(a["id"], Value::Null, "the id, if any, is past the cut");
    assert_eq!(oversized("garbage").unwrap()["id"], Value::Null);
    assert_eq!(oversized(r#"{"jsonrpc":"2.0","id":7,"result":{"content":"aaa"#), None, "a response");
    assert_eq!(oversized(r#"{"id":{"x":1},"method":"m","params":"a"#).unwrap()["id"], Value::Null);
    assert!(oversized_line(b"{", 1000).unwrap().windows(10).any(|w| w == b"1000 bytes"));
}
