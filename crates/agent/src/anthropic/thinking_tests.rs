use serde_json::json;

use super::{kept, replayed};

#[test]
fn one_signed_block_keeps_its_signature_and_comes_back_whole() {
    let block = json!({"type": "thinking", "thinking": "Read it.", "signature": "SIG=="});
    let kept = kept(std::slice::from_ref(&block));
    assert_eq!(kept.as_deref(), Some("SIG=="));
    assert_eq!(replayed(Some("Read it."), kept.as_deref()), [block]);
}

#[test]
fn several_blocks_or_a_redacted_one_come_back_as_they_were_in_order() {
    let blocks = [
        json!({"type": "redacted_thinking", "data": "EmwKAhgB"}),
        json!({"type": "thinking", "thinking": "First.", "signature": "S1"}),
        json!({"type": "thinking", "thinking": "Second.", "signature": "S2"}),
    ];
    let kept = kept(&blocks).unwrap();
    assert_eq!(replayed(Some("First.Second."), Some(&kept)), blocks);
    let redacted_only = super::kept(&blocks[..1]).unwrap();
    assert_eq!(replayed(None, Some(&redacted_only)), blocks[..1]);
}

#[test]
fn unsigned_thinking_and_other_wires_items_are_not_replayed() {
    assert_eq!(kept(&[json!({"type": "thinking", "thinking": "x", "signature": ""})]), None);
    assert!(replayed(Some("x"), None).is_empty());
    // A Responses session's reasoning items, kept as a JSON array too.
    let items = r#"[{"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}]"#;
    assert!(replayed(Some("x"), Some(items)).is_empty());
}

#[test]
fn a_non_streamed_message_keeps_its_redacted_thinking_too() {
    let message = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "thinking", "thinking": "Read it.", "signature": "S1"},
        {"type": "redacted_thinking", "data": "EmwKAhgB"},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
    ]});
    let response = super::super::parse_response(&message).unwrap();
    assert_eq!(response.reasoning.as_deref(), Some("Read it."));
    let blocks = &message["content"].as_array().unwrap()[..2];
    assert_eq!(replayed(response.reasoning.as_deref(), response.reasoning_signature.as_deref()), blocks);
}
