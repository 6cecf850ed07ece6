//! An MCP `CallToolResult` as a quiver tool result.
//!
//! Works on the JSON form of the result rather than rmcp's Rust types, and
//! keeps what the server sent as it sent it:
//!
//! - `content` blocks go to the output's `blocks` verbatim (images, audio,
//!   embedded resources, resource links, and kinds newer than this code), so a
//!   gateway passes them on unchanged; the output's `content` is their text
//!   rendering ([`quiver_engine::blocks::render_text`]) for text-only readers;
//! - `structuredContent` goes to the output's `structured` verbatim, and is
//!   the content when there are no blocks at all;
//! - `isError: true` becomes an error result carrying the same blocks, its
//!   text naming the server and tool.

use std::sync::Arc;

use quiver_engine::{ToolError, ToolOutput, blocks};
use serde_json::{Map, Value, json};

/// A result's JSON text as a quiver output. The text itself rides along
/// ([`ToolOutput::verbatim`]): a gateway passes the answer on as the server
/// wrote it unless dispatch changed it.
pub fn to_output(server: &str, tool: &str, result: &Arc<String>) -> Result<ToolOutput, ToolError> {
    let value: Value = serde_json::from_str(result).map_err(|e| {
        ToolError::model(format!("MCP server `{server}` answered `{tool}` with JSON quiver cannot read: {e}"))
    })?;
    let verbatim = Some(Arc::clone(result));
    match from_json(server, tool, value) {
        Ok(output) => Ok(ToolOutput { verbatim, ..output }),
        Err(ToolError::Report(output)) => Err(ToolError::Report(ToolOutput { verbatim, ..output })),
        Err(other) => Err(other),
    }
}

/// Takes the parsed result by value: its blocks and structured content move
/// into the output rather than being copied (this runs on every relayed call).
pub fn from_json(server: &str, tool: &str, mut result: Value) -> Result<ToolOutput, ToolError> {
    let blocks = match result.get_mut("content").map(Value::take) {
        Some(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    let text = blocks::render_text(&blocks);
    let structured = result.get_mut("structuredContent").map(Value::take).filter(|v| !v.is_null());

    let mut metadata = Map::new();
    metadata.insert("mcp_server".into(), json!(server));
    metadata.insert("mcp_tool".into(), json!(tool));

    if result.get("isError").and_then(Value::as_bool).unwrap_or(false) {
        let detail = if !text.is_empty() {
            text
        } else {
            structured.as_ref().map(|s| s.to_string()).unwrap_or_else(|| "(no details)".into())
        };
        let message = format!("MCP tool `{tool}` on server `{server}` reported an error: {detail}");
        return Err(ToolError::Report(ToolOutput {
            content: Value::String(message),
            metadata,
            blocks,
            structured,
            verbatim: None,
        }));
    }

    let content = match (&structured, blocks.is_empty()) {
        (Some(structured), true) => structured.clone(),
        (None, true) => Value::String("(no output)".into()),
        (_, false) => Value::String(text),
    };
    Ok(ToolOutput { content, metadata, blocks, structured, verbatim: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: Value) -> ToolOutput {
        match from_json("srv", "t", v) {
            Ok(out) => out,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    #[test]
    fn text_blocks_join_and_stay_blocks() {
        let out = ok(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}));
        assert_eq!(out.content, json!("a\n\nb"));
        assert_eq!(out.blocks.len(), 2);
        assert_eq!(out.metadata["mcp_server"], json!("srv"));
    }

    #[test]
    fn structured_content_is_kept_verbatim() {
        let out = ok(json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(out.content, json!({"sum": 3}));
        assert_eq!(out.structured, Some(json!({"sum": 3})));
        let out = ok(json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}}));
        assert_eq!(out.content, json!("{\"sum\":3}"));
        assert_eq!(out.structured, Some(json!({"sum": 3})));
        assert!(out.metadata.get("structured_content").is_none());
    }

    #[test]
    fn media_blocks_pass_through_unchanged() {
        let blocks = json!([
            {"type": "text", "text": "look:"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png", "annotations": {"priority": 0.5}},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ]);
        let out = ok(json!({"content": blocks}));
        assert_eq!(Value::Array(out.blocks.clone()), blocks);
        let text = out.content.as_str().unwrap_or_default().to_string();
        assert!(text.contains("[image image/png, 3 bytes]"), "{text}");
        assert!(text.contains("[resource file:///a.txt]\nhello"), "{text}");
        assert!(text.contains("[resource link b file:///b]"), "{text}");
        assert!(out.metadata.get("mcp_content").is_none());
    }

    #[test]
    fn is_error_is_an_error_result_with_the_blocks() {
        let err = from_json("srv", "t", json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}));
        match err {
            Err(ToolError::Report(out)) => {
                let m = out.content.as_str().unwrap_or_default();
                assert!(m.contains("bad input") && m.contains("`srv`"), "{m}");
                assert_eq!(out.blocks, vec![json!({"type": "text", "text": "bad input"})]);
            }
            other => panic!("expected an error report, got {other:?}"),
        }
    }

    #[test]
    fn empty_and_garbage_results_still_read() {
        assert_eq!(ok(json!({"content": []})).content, json!("(no output)"));
        assert_eq!(ok(json!({})).content, json!("(no output)"));
        assert_eq!(ok(json!({"content": [{"type": "hologram"}]})).content, json!("[hologram content]"));
    }
}
