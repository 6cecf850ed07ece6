//! Argument schemas: generated from input types, kept small, and checked before a
//! handler runs.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The JSON Schema of `T`, inlined (no `$defs`) and stripped of the keys a model
/// gains nothing from (`$schema`, the root `title` and root `description`, which
/// would repeat the tool's own description).
pub fn schema_for<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
        if !map.contains_key("properties") && map.get("type") == Some(&Value::String("object".into())) {
            map.insert("properties".into(), Value::Object(Default::default()));
        }
    }
    strip_noise(&mut value);
    value
}

/// Keeps schemas tight: every byte of an active tool is paid on every turn.
/// Drops integer `format`s (`uint`, `int64`), and turns schemars' rendering of
/// optional fields (`"type": ["string", "null"]`, `"default": null`, `null` in
/// enums, `anyOf: [X, {"type": "null"}]`) into plain `X`: a field that is not
/// required is already optional, and dispatch treats an explicit `null`
/// argument as absent.
fn strip_noise(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(format)) = map.get("format")
                && (format.starts_with("int") || format.starts_with("uint"))
            {
                map.remove("format");
            }
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get("type") {
                let non_null: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
                if non_null.len() == 1 && non_null.len() < types.len() {
                    map.insert("type".into(), non_null[0].clone());
                }
            }
            if let Some(Value::Array(options)) = map.get_mut("enum") {
                options.retain(|o| !o.is_null());
            }
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let non_null: Vec<&Value> =
                    any.iter().filter(|s| s.get("type") != Some(&Value::String("null".into()))).collect();
                if non_null.len() == 1
                    && any.len() == 2
                    && let Value::Object(inner) = non_null[0].clone()
                {
                    map.remove("anyOf");
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            for v in map.values_mut() {
                strip_noise(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_noise),
        _ => {}
    }
}

/// A compiled argument validator for one tool.
pub struct ArgValidator {
    validator: Option<jsonschema::Validator>,
}

impl ArgValidator {
    /// A schema that fails to compile validates nothing rather than blocking the
    /// tool: downstream MCP servers sometimes publish sloppy schemas.
    pub fn new(schema: &Value) -> Self {
        let validator = jsonschema::options().should_validate_formats(false).build(schema).ok();
        ArgValidator { validator }
    }

    /// Checks only that the arguments are an object: for the tools of a
    /// server exposed directly, which checks its own arguments and whose
    /// answer to a bad call reaches the client as the server wrote it (a
    /// gateway exposing a server directly adds nothing of its own).
    pub fn objects_only() -> Self {
        ArgValidator { validator: None }
    }

    /// Whether `text` (valid JSON, as a transport read it) is arguments
    /// dispatch would pass on unchanged: an object with no `null` member to
    /// drop, that the schema accepts. Read into a `Value` only when that
    /// can change the answer, so a relayed call to a tool without a schema
    /// check costs no parse.
    pub fn passes_unchanged(&self, text: &str) -> bool {
        if !text.trim_start().starts_with('{') {
            return false;
        }
        // No `null` anywhere in the text: no member can be null.
        if self.validator.is_none() && !text.contains("null") {
            return true;
        }
        let Ok(Value::Object(args)) = serde_json::from_str::<Value>(text) else { return false };
        if args.values().any(Value::is_null) {
            return false;
        }
        let args = Value::Object(args);
        self.validator.as_ref().is_none_or(|v| v.is_valid(&args))
    }

    /// Checks `args`; the error names each offending field and what was expected.
    pub fn check(&self, tool: &str, args: &Value) -> Result<(), String> {
        if !args.is_object() {
            return Err(format!("invalid arguments for {tool}: expected a JSON object, got {}", json_type_name(args)));
        }
        let Some(validator) = &self.validator else { return Ok(()) };
        // Valid arguments (nearly every call) skip collecting errors.
        if validator.is_valid(args) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(args)
            .map(|err| {
                let path = err.instance_path().to_string();
                let field =
                    if path.is_empty() { "(root)".to_string() } else { path.trim_start_matches('/').replace('/', ".") };
                format!("`{field}`: {}", describe_error(&err))
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(format!("invalid arguments for {tool}: {}", problems.join("; "))) }
    }
}

fn describe_error(err: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match err.kind() {
        K::Type { kind } => {
            let expected = match kind {
                jsonschema::error::TypeKind::Single(t) => t.to_string(),
                jsonschema::error::TypeKind::Multiple(ts) => {
                    ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" or ")
                }
            };
            format!("expected {expected}, got {}", json_type_name(err.instance()))
        }
        K::Required { property } => {
            let name = property.as_str().unwrap_or("?");
            format!("missing required field `{name}`")
        }
        _ => err.to_string(),
    }
}

pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
