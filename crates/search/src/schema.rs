//! Parameter extraction from JSON Schemas.

use serde_json::Value;

/// Maximum nesting depth walked.
const MAX_DEPTH: usize = 6;

/// Every property of `schema` (nested objects, array items and
/// `anyOf`/`oneOf`/`allOf` branches too) as (dotted name, description). The
/// description has enum values appended, since they are often the words a
/// request uses (`method: list_workflows`). Order follows the schema.
pub fn params_from_schema(schema: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(schema, "", 0, &mut out);
    out
}

fn walk(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<(String, String)>) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(obj) = schema.as_object() else { return };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let full = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
            out.push((full.clone(), describe(prop)));
            walk(prop, &full, depth + 1, out);
        }
    }
    if let Some(items) = obj.get("items") {
        walk(items, prefix, depth + 1, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            for b in branches {
                walk(b, prefix, depth + 1, out);
            }
        }
    }
}

fn describe(prop: &Value) -> String {
    let mut text = prop.get("description").and_then(Value::as_str).unwrap_or("").to_string();
    let enums = prop.get("enum").or_else(|| prop.get("items").and_then(|i| i.get("enum"))).and_then(Value::as_array);
    if let Some(values) = enums {
        for v in values.iter().filter_map(Value::as_str) {
            text.push(' ');
            text.push_str(v);
        }
    }
    text
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
