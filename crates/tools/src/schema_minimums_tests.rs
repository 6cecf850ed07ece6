//! A schema must not allow what its tool refuses. A model whose
//! grammar follows the schema (llama.cpp's JSON-schema grammars) produced
//! `read_file` with `offset: 0`, which the schema allowed and the tool
//! refused; with `"minimum": 1` such a call is a schema error the model is
//! shown before the tool runs, and a constrained sampler never makes it.

use serde_json::{Value, json};

use crate::test_support::Harness;

/// Every integer argument the native tools refuse at 0 (1-based line
/// numbers, counts and limits checked as 1..=max). A new one belongs here.
const REFUSED_AT_ZERO: &[(&str, &str)] = &[
    ("read_file", "offset"),
    ("read_file", "limit"),
    ("fim_edit", "offset"),
    ("fim_edit", "limit"),
    ("fim_edit", "max_tokens"),
    ("list_dir", "depth"),
    ("project_map", "depth"),
    ("project_map", "limit"),
    ("grep_files", "limit"),
    ("file_search", "limit"),
    ("retrieve_tool_result", "offset"),
    ("retrieve_tool_result", "limit"),
    ("web_search", "limit"),
    ("fetch_url", "max_bytes"),
    ("fetch_url", "timeout_ms"),
    ("tool_search", "limit"),
    ("exec_shell", "timeout_ms"),
    ("exec_shell_wait", "timeout_ms"),
    ("exec_shell_interact", "timeout_ms"),
    ("task_shell_wait", "timeout_ms"),
    ("github_close_issue", "number"),
    ("github_close_pr", "number"),
    ("github_comment", "number"),
    ("github_issue_context", "number"),
    ("github_pr_context", "number"),
    ("github_issue_list", "limit"),
    ("github_pr_list", "limit"),
];

fn schema_of(tool: &str) -> Value {
    let registry = crate::native_registry().unwrap();
    registry.get(tool).unwrap_or_else(|| panic!("no tool {tool}")).spec.input_schema.clone()
}

fn minimum(schema: &Value, property: &str) -> Option<i64> {
    schema["properties"][property]["minimum"].as_i64()
}

#[test]
fn every_argument_refused_at_zero_has_a_minimum_of_one() {
    let wrong: Vec<String> = REFUSED_AT_ZERO
        .iter()
        .filter(|(tool, property)| minimum(&schema_of(tool), property) != Some(1))
        .map(|(tool, property)| format!("{tool}.{property}: {}", schema_of(tool)["properties"][property]))
        .collect();
    assert!(wrong.is_empty(), "schemas that allow 0: {wrong:#?}");
}

/// Any integer argument whose description says it is 1-based, in any native
/// tool (nested objects included), says so in its schema too.
#[test]
fn every_one_based_integer_argument_has_a_minimum_of_one() {
    fn walk(tool: &str, path: &str, schema: &Value, wrong: &mut Vec<String>) {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
        for (name, property) in properties {
            let at = format!("{path}.{name}");
            let described = property.get("description").and_then(Value::as_str).unwrap_or_default();
            if property["type"] == "integer" && described.contains("1-based") && property["minimum"] != json!(1) {
                wrong.push(format!("{tool}{at}"));
            }
            walk(tool, &at, property, wrong);
            if let Some(items) = property.get("items") {
                walk(tool, &at, items, wrong);
            }
        }
    }
    let registry = crate::native_registry().unwrap();
    let mut wrong = Vec::new();
    for tool in registry.iter() {
        walk(&tool.spec.name, "", &tool.spec.input_schema, &mut wrong);
    }
    assert!(wrong.is_empty(), "1-based without a minimum of 1: {wrong:?}");
}

/// Through the engine: `offset: 0` is refused by the schema check, which
/// names the field and the bound, before `read_file` runs.
#[tokio::test]
async fn read_file_offset_zero_is_a_schema_error() {
    let h = Harness::new();
    h.write("a.txt", "x\n");
    let err = h.err("read_file", json!({"path": "a.txt", "offset": 0})).await;
    assert!(err.starts_with("invalid arguments for read_file: `offset`:"), "{err}");
    assert!(err.contains("minimum of 1"), "{err}");
    let err = h.err("read_file", json!({"path": "a.txt", "limit": 0})).await;
    assert!(err.starts_with("invalid arguments for read_file: `limit`:"), "{err}");
    assert_eq!(h.ok("read_file", json!({"path": "a.txt", "offset": 1, "limit": 1})).await, "     1\tx\n");
}
