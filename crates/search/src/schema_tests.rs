use super::*;
use serde_json::json;

#[test]
fn walks_nested_properties_items_and_branches() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path"},
            "options": {"type": "object", "properties": {"depth": {"type": "integer", "description": "Max depth"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"status": {"enum": ["pending", "done"]}}}},
            "target": {"anyOf": [{"type": "object", "properties": {"url": {"description": "URL"}}}]}
        }
    });
    let params = params_from_schema(&schema);
    let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"path"));
    assert!(names.contains(&"options.depth"));
    assert!(names.contains(&"items.status"));
    assert!(names.contains(&"target.url"));
    let status = params.iter().find(|(n, _)| n == "items.status").map(|(_, d)| d.as_str());
    assert_eq!(status, Some(" pending done"));
    let path = params.iter().find(|(n, _)| n == "path").map(|(_, d)| d.as_str());
    assert_eq!(path, Some("File path"));
}

#[test]
fn non_objects_give_nothing() {
    assert!(params_from_schema(&json!(null)).is_empty());
    assert!(params_from_schema(&json!({"type": "string"})).is_empty());
}
