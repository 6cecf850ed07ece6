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
/// - `content`: the result's own blocks when it has them (a proxied MCP tool:
///   the downstream blocks as the server sent them); else one text block, the
///   content verbatim when it is a string and canonical JSON text otherwise
///   (clients that only read text still get it all);
/// - `structuredContent`: the result's own when it has one (verbatim, so a
///   client validating a forwarded `outputSchema` sees what the server sent);
///   else the content itself when it is a JSON object, which is what the spec
///   means by a structured result;
/// - `_meta`: quiver's metadata (`_deprecation`, `exit_code`, `loaded`, ...).
///
/// A deprecated alias's notice stays in `_meta` only: its content must be
/// exactly its canonical twin's (that is the replay guarantee), so nothing about
/// lifecycle state is written into what the tool returned.
pub fn call_result(result: &ToolResult) -> CallToolResult {
    let content: Vec<Content> = if result.blocks.is_empty() {
        vec![Content::text(content_text(&result.content))]
    } else {
        result.blocks.iter().map(block).collect()
    };
    let mut out = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    if let Some(structured) = &result.structured_content {
        out.structured_content = Some(structured.clone());
    } else if let (Value::Object(_), false) = (&result.content, result.is_error) {
        out.structured_content = Some(canonical::sorted(&result.content));
    }
    if !result.metadata.is_empty() {
        out.meta = Some(MetaObject(sorted_object(&result.metadata)));
    }
    out
}

/// One content block as rmcp's type. A block rmcp cannot type (a kind newer
/// than it) is passed on as text holding its JSON rather than dropped.
fn block(value: &Value) -> Content {
    serde_json::from_value(value.clone()).unwrap_or_else(|_| Content::text(canonical::to_string(value)))
}

/// Adds what a downstream server said about its tool that quiver's own
/// rendering leaves out: `outputSchema`, `annotations`, `title`, `_meta`.
pub fn forward_remote_fields(tool: &mut Tool, remote: &crate::client::RemoteTool) {
    if let Some(Value::Object(schema)) = &remote.output_schema {
        tool.output_schema = Some(std::sync::Arc::new(schema.clone()));
    }
    if let Some(annotations) = &remote.annotations
        && let Ok(annotations) = serde_json::from_value(annotations.clone())
    {
        tool.annotations = Some(annotations);
    }
    if remote.title.is_some() && tool.title.is_none() {
        tool.title.clone_from(&remote.title);
    }
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
        let result = ToolResult {
            metadata: Map::new(),
            ..ToolResult::ok(quiver_engine::ToolOutput::json(json!({"z": 1, "a": [2]})))
        };
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
        let result = ToolResult { metadata, ..ToolResult::ok(quiver_engine::ToolOutput::text("ok")) };
        let wire = serde_json::to_value(call_result(&result)).unwrap();
        assert_eq!(wire["_meta"]["_deprecation"]["use_instead"], "checklist_write");
        assert_eq!(wire["content"][0]["text"], "ok");
        assert_eq!(wire["content"].as_array().unwrap().len(), 1, "content stays the canonical twin's");
    }

    #[test]
    fn blocks_and_structured_content_pass_through() {
        let blocks = vec![
            json!({"type": "text", "text": "hi"}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "resource", "resource": {"uri": "test://r", "text": "t", "mimeType": "text/plain"}}),
            json!({"type": "resource_link", "uri": "test://l", "name": "l"}),
            json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
        ];
        let output = quiver_engine::ToolOutput::from_blocks(blocks.clone()).with_structured(json!({"z": 1, "a": 2}));
        let wire = serde_json::to_value(call_result(&ToolResult::ok(output))).unwrap();
        assert_eq!(wire["content"], Value::Array(blocks));
        assert_eq!(wire["structuredContent"], json!({"z": 1, "a": 2}));
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
