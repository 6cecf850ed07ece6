//! MCP content blocks in a tool result: their text rendering (for readers that
//! only take text), the images a vision model can be shown, and spilling.
//!
//! Blocks are kept as JSON values rather than typed structs: a proxied result
//! must reach the client with every field the downstream server sent
//! (annotations, `_meta`, kinds newer than this code), and only a value that is
//! never re-typed guarantees that.
//!
//! Spilling blocks lives with the rest of spilling (`spill_blocks.rs`).

use serde_json::Value;

/// What a text-only reader is shown for `blocks`: text verbatim, an embedded
/// text resource as its URI line plus its text, anything binary as a one-line
/// stand-in naming its kind, type and size; blocks separated by blank lines.
pub fn render_text(blocks: &[Value]) -> String {
    let parts: Vec<String> = blocks.iter().map(render_block).collect();
    parts.join("\n\n")
}

fn render_block(block: &Value) -> String {
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    match block.get("type").and_then(Value::as_str).unwrap_or("") {
        "text" => field(block, "text").unwrap_or_default(),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = field(&resource, "uri").unwrap_or_else(|| "?".into());
            match field(&resource, "text") {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!("[binary resource {uri}{}{}]", mime_part(&resource), size_part(&resource, "blob")),
            }
        }
        kind @ ("image" | "audio") => format!("[{kind}{}{}]", mime_part(block), size_part(block, "data")),
        "resource_link" => {
            let uri = field(block, "uri").unwrap_or_else(|| "?".into());
            match field(block, "name").filter(|n| !n.is_empty()) {
                Some(name) => format!("[resource link {name} {uri}]"),
                None => format!("[resource link {uri}]"),
            }
        }
        "" => "[unknown content]".to_string(),
        other => format!("[{other} content]"),
    }
}

fn mime_part(block: &Value) -> String {
    block.get("mimeType").and_then(Value::as_str).map(|m| format!(" {m}")).unwrap_or_default()
}

/// `, 12.3 KB` for a base64 field, from its encoded length.
fn size_part(block: &Value, field: &str) -> String {
    match block.get(field).and_then(Value::as_str) {
        Some(b64) => {
            let bytes = b64.len() / 4 * 3;
            if bytes >= 1024 { format!(", {:.1} KB", bytes as f64 / 1024.0) } else { format!(", {bytes} bytes") }
        }
        None => String::new(),
    }
}

/// `(mime type, base64 data)` of every image block, in order.
pub fn images(blocks: &[Value]) -> Vec<(String, String)> {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .filter_map(|b| {
            let data = b.get("data").and_then(Value::as_str)?;
            let mime = b.get("mimeType").and_then(Value::as_str).unwrap_or("image/png");
            Some((mime.to_string(), data.to_string()))
        })
        .collect()
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
