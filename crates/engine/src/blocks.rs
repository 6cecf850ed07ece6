//! MCP content blocks in a tool result: their text rendering (for readers that
//! only take text), the images a vision model can be shown, and spilling.
//!
//! Blocks are kept as JSON values rather than typed structs: a proxied result
//! must reach the client with every field the downstream server sent
//! (annotations, `_meta`, kinds newer than this code), and only a value that is
//! never re-typed guarantees that.
//!
//! Spilling applies to text: a text block over the session's bound is written
//! to a spill file and replaced by the usual summary. A binary payload (image,
//! audio, blob resource) over the bound cannot be summarised, so its bytes are
//! written to a file and the block becomes a `resource_link` to that file.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::spec::ToolSpec;
use crate::spill::{SpillStore, summary_text};

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

/// The spill hook for a result with blocks. Returns whether anything changed.
pub(crate) async fn spill_blocks(result: &mut ToolResult, spec: &ToolSpec, ctx: &ToolContext, threshold: usize) -> bool {
    let store = ctx.session.state::<SpillStore>();
    let mut changed = false;
    let mut spilled = Vec::new();
    for block in result.blocks.iter_mut() {
        match block.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => {
                let Some(text) = block.get("text").and_then(Value::as_str).filter(|t| t.len() > threshold) else {
                    continue;
                };
                let text = text.to_string();
                match store.spill_text(ctx.session.id(), &spec.name, &text, None).await {
                    Ok(record) => {
                        block["text"] = Value::String(summary_text(&text, &record));
                        spilled.push(record.metadata());
                        changed = true;
                    }
                    Err(e) => tracing::warn!(tool = %spec.name, error = %e, "could not spill a text block"),
                }
            }
            "image" | "audio" => {
                if let Some(link) = spill_binary(block, "data", spec, ctx, &store, threshold).await {
                    *block = link;
                    changed = true;
                }
            }
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                if let Some(link) = spill_binary(&resource, "blob", spec, ctx, &store, threshold).await {
                    *block = link;
                    changed = true;
                }
            }
            _ => {}
        }
    }
    if changed {
        result.content = Value::String(render_text(&result.blocks));
        match spilled.len() {
            0 => {}
            1 => {
                result.metadata.insert("spilled".into(), spilled.remove(0));
            }
            _ => {
                result.metadata.insert("spilled".into(), Value::Array(spilled));
            }
        }
    }
    changed
}

/// Writes a base64 payload (`holder[field]`) over the bound to a file; the `resource_link` block
/// that replaces it. `None` when it is small, not base64, or cannot be written
/// (then the block stays as it was: losing it would be worse than its size).
async fn spill_binary(
    holder: &Value,
    field: &str,
    spec: &ToolSpec,
    ctx: &ToolContext,
    store: &SpillStore,
    threshold: usize,
) -> Option<Value> {
    let data = holder.get(field).and_then(Value::as_str).filter(|d| d.len() > threshold)?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()?;
    let mime = holder.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream");
    let ext = extension_for(mime);
    match store.spill_bytes(ctx.session.id(), &bytes, ext).await {
        Ok(path) => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let mut link = json!({
                "type": "resource_link",
                "uri": format!("file://{}", path.to_string_lossy()),
                "name": name,
                "mimeType": mime,
                "size": bytes.len(),
                "description": format!("{} bytes of {mime} from `{}`, saved to a file: too large to inline", bytes.len(), spec.name),
            });
            if let (Some(uri), Value::Object(map)) = (holder.get("uri"), &mut link) {
                map.insert("title".into(), uri.clone());
            }
            Some(link)
        }
        Err(e) => {
            tracing::warn!(tool = %spec.name, error = %e, "could not spill a binary block");
            None
        }
    }
}

fn extension_for(mime: &str) -> &'static str {
    match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
