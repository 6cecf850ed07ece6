//! Canonical JSON: object keys sorted by byte order, no insignificant whitespace.
//! Everything sent to a model goes through here, so bytes never depend on
//! insertion order or on which `serde_json` features another crate switched on.

use serde_json::Value;

pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// Indented form for humans (CLI output); still key-sorted.
pub fn to_string_pretty(value: &Value) -> String {
    serde_json::to_string_pretty(&sorted(value)).unwrap_or_else(|_| to_string(value))
}

/// A copy whose objects have their keys inserted in sorted order.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = serde_json::Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_scalar(&Value::String(k.clone()), out);
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_scalar(value: &Value, out: &mut String) {
    // Scalars have exactly one serde_json rendering; serializing them cannot fail.
    out.push_str(&serde_json::to_string(value).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_sorted_and_compact() {
        let v = json!({"b": 1, "a": {"z": [1, {"y": "é", "x": null}], "c": true}});
        assert_eq!(to_string(&v), r#"{"a":{"c":true,"z":[1,{"x":null,"y":"é"}]},"b":1}"#);
    }
}
