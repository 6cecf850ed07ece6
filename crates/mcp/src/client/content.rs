//! An MCP `CallToolResult` as a quiver tool result.
//!
//! Works on the JSON form of the result rather than rmcp's Rust types, so new
//! content kinds degrade to a readable placeholder instead of a compile error.
//!
//! - text blocks are the content, joined by blank lines;
//! - an embedded text resource is shown as its URI line plus its text;
//! - images, audio, blobs and resource links become one-line placeholders in
//!   the text, and the raw blocks go to `metadata.mcp_content` for hosts that
//!   can show them (an MCP gateway passes them on);
//! - `structuredContent` is the content when there is no text, else it goes to
//!   `metadata.structured_content`;
//! - `isError: true` becomes a model error carrying the text.

use quiver_engine::{ToolError, ToolOutput};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

pub fn to_output(server: &str, tool: &str, result: &CallToolResult) -> Result<ToolOutput, ToolError> {
    let value = serde_json::to_value(result).unwrap_or(Value::Null);
    from_json(server, tool, &value)
}

pub fn from_json(server: &str, tool: &str, result: &Value) -> Result<ToolOutput, ToolError> {
    let mut texts: Vec<String> = Vec::new();
    let mut raw_blocks: Vec<Value> = Vec::new();
    let blocks = result.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => texts.push(block.get("text").and_then(Value::as_str).unwrap_or("").to_string()),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => texts.push(format!("[resource {uri}]\n{text}")),
                    None => {
                        texts.push(format!("[binary resource {uri}{}]", describe_size(&resource, "blob")));
                        raw_blocks.push(block.clone());
                    }
                }
            }
            "image" | "audio" => {
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("media");
                let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("unknown type");
                texts.push(format!("[{kind} {mime}{}]", describe_size(block, "data")));
                raw_blocks.push(block.clone());
            }
            "resource_link" => {
                let uri = block.get("uri").and_then(Value::as_str).unwrap_or("?");
                let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                texts.push(format!("[resource link {name} {uri}]").replace("  ", " "));
                raw_blocks.push(block.clone());
            }
            other => {
                texts.push(format!("[{} content]", if other.is_empty() { "unknown" } else { other }));
                raw_blocks.push(block.clone());
            }
        }
    }
    let text = texts.join("\n\n");
    let structured = result.get("structuredContent").filter(|v| !v.is_null()).cloned();

    if result.get("isError").and_then(Value::as_bool).unwrap_or(false) {
        let detail = if !text.is_empty() {
            text
        } else {
            structured.map(|s| s.to_string()).unwrap_or_else(|| "(no details)".into())
        };
        return Err(ToolError::model(format!("MCP tool `{tool}` on server `{server}` reported an error: {detail}")));
    }

    let mut metadata = Map::new();
    metadata.insert("mcp_server".into(), json!(server));
    metadata.insert("mcp_tool".into(), json!(tool));
    let content = match (text.is_empty() && blocks.iter().all(|b| b.get("type") == Some(&json!("text"))), structured) {
        (true, Some(structured)) => structured,
        (_, structured) => {
            if let Some(s) = structured {
                metadata.insert("structured_content".into(), s);
            }
            Value::String(if text.is_empty() && blocks.is_empty() { "(no output)".into() } else { text })
        }
    };
    if !raw_blocks.is_empty() {
        metadata.insert("mcp_content".into(), Value::Array(raw_blocks));
    }
    Ok(ToolOutput { content, metadata })
}

/// `, 12.3 KB` for a base64 field, from its encoded length.
fn describe_size(block: &Value, field: &str) -> String {
    match block.get(field).and_then(Value::as_str) {
        Some(b64) => {
            let bytes = b64.len() / 4 * 3;
            if bytes >= 1024 { format!(", {:.1} KB", bytes as f64 / 1024.0) } else { format!(", {bytes} bytes") }
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: Value) -> ToolOutput {
        match from_json("srv", "t", &v) {
            Ok(out) => out,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    #[test]
    fn text_blocks_join() {
        let out = ok(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}));
        assert_eq!(out.content, json!("a\n\nb"));
        assert_eq!(out.metadata["mcp_server"], json!("srv"));
    }

    #[test]
    fn structured_content_without_text_is_the_content() {
        let out = ok(json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(out.content, json!({"sum": 3}));
        let out = ok(json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}}));
        assert_eq!(out.content, json!("{\"sum\":3}"));
        assert_eq!(out.metadata["structured_content"], json!({"sum": 3}));
    }

    #[test]
    fn media_becomes_placeholders_and_raw_blocks() {
        let out = ok(json!({"content": [
            {"type": "text", "text": "look:"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ]}));
        let text = out.content.as_str().unwrap_or_default().to_string();
        assert!(text.contains("[image image/png, 3 bytes]"), "{text}");
        assert!(text.contains("[resource file:///a.txt]\nhello"), "{text}");
        assert!(text.contains("[resource link b file:///b]"), "{text}");
        assert_eq!(out.metadata["mcp_content"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn is_error_is_a_model_error() {
        let err = from_json("srv", "t", &json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}));
        match err {
            Err(ToolError::Model(m)) => assert!(m.contains("bad input") && m.contains("`srv`"), "{m}"),
            other => panic!("expected a model error, got {other:?}"),
        }
    }

    #[test]
    fn empty_and_garbage_results_still_read() {
        assert_eq!(ok(json!({"content": []})).content, json!("(no output)"));
        assert_eq!(ok(json!({})).content, json!("(no output)"));
        assert_eq!(ok(json!({"content": [{"type": "hologram"}]})).content, json!("[hologram content]"));
    }
}
