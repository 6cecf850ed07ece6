//! Spilling a result made of MCP content blocks. Spilling applies to text: a
//! text block over the session's bound is written to a spill file and replaced
//! by the usual summary. A binary payload (image, audio, blob resource) over the
//! bound cannot be summarised, so its bytes are written to a file and the block
//! becomes a `resource_link` to that file.

use base64::Engine as _;
use serde_json::{Value, json};

use super::{SpillStore, summary_text};
use crate::blocks::render_text;
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::spec::ToolSpec;

/// Binary blocks (images, audio, blobs) stay inline up to this many decoded
/// bytes, whatever the text threshold: an image costs a model tokens by its
/// pixels, not its bytes, and a gateway client should get what the server sent.
/// 5 MiB is the strictest provider's per-image limit (Anthropic's).
pub const BINARY_INLINE_BYTES: usize = 5 << 20;

/// The spill hook for a result with blocks. Returns whether anything changed.
pub(super) async fn spill_blocks(
    result: &mut ToolResult,
    spec: &ToolSpec,
    ctx: &ToolContext,
    threshold: usize,
) -> bool {
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
                if let Some(link) = spill_binary(block, "data", spec, ctx, &store, BINARY_INLINE_BYTES).await {
                    *block = link;
                    changed = true;
                }
            }
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or(Value::Null);
                if let Some(link) = spill_binary(&resource, "blob", spec, ctx, &store, BINARY_INLINE_BYTES).await {
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

/// Writes a base64 payload (`holder[field]`) of more than `limit` decoded bytes to a file; the `resource_link` block
/// that replaces it. `None` when it is small, not base64, or cannot be written
/// (then the block stays as it was: losing it would be worse than its size).
async fn spill_binary(
    holder: &Value,
    field: &str,
    spec: &ToolSpec,
    ctx: &ToolContext,
    store: &SpillStore,
    limit: usize,
) -> Option<Value> {
    // base64 is 4 characters per 3 bytes.
    let data = holder.get(field).and_then(Value::as_str).filter(|d| d.len() / 4 * 3 > limit)?;
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
