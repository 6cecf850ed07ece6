#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::ArgValidator;

#[test]
fn arguments_pass_unchanged_only_as_an_object_the_schema_takes_with_no_null() {
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "tag": {"type": "string"}},
        "required": ["text"]
    });
    let checked = ArgValidator::new(&schema);
    assert!(checked.passes_unchanged(r#"{"text": "a"}"#));
    assert!(checked.passes_unchanged(r#" {"text": "null"}"#), "a string that reads null is no null");
    assert!(!checked.passes_unchanged(r#"{"text": "a", "tag": null}"#), "dispatch drops a null");
    assert!(!checked.passes_unchanged(r#"{"text": 5}"#));
    assert!(!checked.passes_unchanged("{}"));
    assert!(!checked.passes_unchanged(r#"["a"]"#));
    assert!(!checked.passes_unchanged("null"));
}

#[test]
fn a_directly_exposed_servers_arguments_are_its_own_to_check() {
    let only = ArgValidator::objects_only();
    // What the server's schema would refuse still goes to the server.
    assert!(only.passes_unchanged(r#"{"message": 5}"#));
    assert!(only.passes_unchanged("{}"));
    assert!(only.passes_unchanged(r#"{"message": "null", "nested": {"a": [null]}}"#));
    assert!(!only.passes_unchanged(r#"{"message": null}"#));
    assert!(!only.passes_unchanged(r#""text""#));
    assert!(only.check("echo", &json!({"message": 5})).is_ok());
    assert!(only.check("echo", &json!("text")).is_err());
}
