//! Translating between quiver's shapes and MCP's: a catalog entry becomes an MCP
//! `Tool`, a quiver `ToolResult` becomes a `CallToolResult`.
//!
//! Everything goes through quiver's canonical JSON so the bytes a client sees for
//! a tool never depend on serde_json features or insertion order: the head a
//! client lists twice is the same bytes twice, which is what keeps a provider's
//! prompt cache alive behind the client.

use quiver_engine::render_tool;
use quiver_engine::{CatalogFormat, ToolResult, ToolSpec, canonical};
use rmcp::model::{CallToolResult, ContentBlock as Content, JsonObject, MetaObject, Tool};
use serde_json::{Map, Value};

/// The MCP `Tool` for a catalog entry: exactly `render_tool(spec, Mcp)`
/// (name, description, inputSchema), nothing added.
pub fn mcp_tool(spec: &ToolSpec) -> Result<Tool, serde_json::Error> {
    let rendered = canonical::sorted(&render_tool(spec, CatalogFormat::Mcp));
    serde_json::from_value(rendered)
}

/// A dispatch result as an MCP tool result.
///
/// - `content`: one text block, the content verbatim when it is a string and
///   canonical JSON text otherwise (clients that only read text still get it all);
/// - `structuredContent`: the content itself when it is a JSON object, which is
///   what the spec means by a structured result;
/// - `_meta`: quiver's metadata (`_deprecation`, `exit_code`, `loaded`, ...).
///
/// A deprecated alias's notice stays in `_meta` only: its content must be
/// exactly its canonical twin's (that is the replay guarantee), so nothing about
/// lifecycle state is written into what the tool returned.
pub fn call_result(result: &ToolResult) -> CallToolResult {
    let content = vec![Content::text(content_text(&result.content))];
    let mut out = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    if let (Value::Object(_), false) = (&result.content, result.is_error) {
        out.structured_content = Some(canonical::sorted(&result.content));
    }
    if !result.metadata.is_empty() {
        out.meta = Some(MetaObject(sorted_object(&result.metadata)));
    }
    out
}

/// An error the model should read (rather than a protocol error, which most
/// clients render as an opaque failure).
pub fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![Content::text(message.into())])
}

fn sorted_object(map: &Map<String, Value>) -> JsonObject {
    match canonical::sorted(&Value::Object(map.clone())) {
        Value::Object(sorted) => sorted,
        _ => JsonObject::new(),
    }
}

/// Canonical text for a result's content. (The engine's `content_text` renders
/// non-strings in serde_json's own key order, which is not byte-stable.)
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        other => canonical::to_string(other),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use quiver_engine::{Risk, ToolSource};
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "demo".into(),
            description: "A demo.".into(),
            input_schema: json!({"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}),
            domain: quiver_engine::Domain::File,
            risk: Risk::Read,
            capabilities: quiver_engine::Capabilities::NONE,
            source: ToolSource::Native,
            prompt_snippet: Some("never sent".into()),
        }
    }

    #[test]
    fn tool_is_exactly_the_mcp_rendering() {
        let tool = mcp_tool(&spec()).unwrap();
        let wire = serde_json::to_value(&tool).unwrap();
        assert_eq!(canonical::to_string(&wire), canonical::to_string(&render_tool(&spec(), CatalogFormat::Mcp)));
    }

    #[test]
    fn json_content_is_canonical_text_and_structured() {
        let result = ToolResult { content: json!({"z": 1, "a": [2]}), is_error: false, metadata: Map::new() };
        let out = call_result(&result);
        let wire = serde_json::to_value(&out).unwrap();
        assert_eq!(wire["content"][0]["text"], r#"{"a":[2],"z":1}"#);
        assert_eq!(wire["structuredContent"], json!({"a": [2], "z": 1}));
        assert_eq!(wire["isError"], false);
        assert!(wire.get("_meta").is_none());
    }

    #[test]
    fn deprecation_goes_to_meta_only() {
        let mut metadata = Map::new();
        metadata.insert(
            "_deprecation".into(),
            json!({"this_tool": "todo_write", "use_instead": "checklist_write", "removed_in": "TBD",
                   "message": "Tool 'todo_write' is deprecated; use 'checklist_write' instead."}),
        );
        let result = ToolResult { content: json!("ok"), is_error: false, metadata };
        let wire = serde_json::to_value(call_result(&result)).unwrap();
        assert_eq!(wire["_meta"]["_deprecation"]["use_instead"], "checklist_write");
        assert_eq!(wire["content"][0]["text"], "ok");
        assert_eq!(wire["content"].as_array().unwrap().len(), 1, "content stays the canonical twin's");
    }

    #[test]
    fn errors_carry_is_error_and_no_structured_content() {
        let result = ToolResult::error("boom");
        let wire = serde_json::to_value(call_result(&result)).unwrap();
        assert_eq!(wire["isError"], true);
        assert_eq!(wire["content"][0]["text"], "boom");
        assert!(wire.get("structuredContent").is_none());
    }
}
