//! What `rlm_open` loads as `_context`: a workspace file, inline content, a
//! URL (fetched through `fetch_url`, so its gates and limits apply), or a
//! session object.

use std::sync::Arc;

use quiver_engine::{ToolContext, ToolError};
use serde_json::{Value, json};

use crate::repl::ContextKind;
use crate::session::Source;
use crate::session_objects::{self, Loaded};

/// Files larger than this are refused (the REPL holds the whole text).
pub const MAX_SOURCE_BYTES: u64 = 256 * 1024 * 1024;

/// The one source `rlm_open` was given.
pub enum SourceSpec<'a> {
    Path(&'a str),
    Content(&'a str),
    Url(&'a str),
    SessionObject(&'a str),
}

impl<'a> SourceSpec<'a> {
    /// Exactly one of the four, or a precise error.
    pub fn pick(
        path: Option<&'a str>,
        content: Option<&'a str>,
        url: Option<&'a str>,
        session_object: Option<&'a str>,
    ) -> Result<Self, ToolError> {
        let given: Vec<&str> = [
            ("path", path.is_some()),
            ("content", content.is_some()),
            ("url", url.is_some()),
            ("session_object", session_object.is_some()),
        ]
        .iter()
        .filter(|(_, set)| *set)
        .map(|(n, _)| *n)
        .collect();
        match (path, content, url, session_object) {
            (Some(p), None, None, None) => Ok(SourceSpec::Path(p)),
            (None, Some(c), None, None) => Ok(SourceSpec::Content(c)),
            (None, None, Some(u), None) => Ok(SourceSpec::Url(u)),
            (None, None, None, Some(s)) => Ok(SourceSpec::SessionObject(s)),
            (None, None, None, None) => {
                Err(ToolError::model("rlm_open needs one source: `path`, `content`, `url` or `session_object`"))
            }
            _ => {
                Err(ToolError::model(format!("rlm_open takes one source, got {}: pass only one", given.join(" and "))))
            }
        }
    }
}

/// Reads the source into memory with the metadata `rlm_open` reports.
pub async fn load(ctx: &ToolContext, spec: SourceSpec<'_>) -> Result<Source, ToolError> {
    let (origin, text, kind) = match spec {
        SourceSpec::Content(c) => (json!({"content": true}), c.to_string(), ContextKind::Text),
        SourceSpec::Path(raw) => {
            let path = ctx.workspace.resolve(raw)?;
            let shown = ctx.workspace.display(&path);
            let meta = tokio::fs::metadata(&path)
                .await
                .map_err(|e| ToolError::model(format!("cannot read `{shown}`: {e}")))?;
            if meta.is_dir() {
                return Err(ToolError::model(format!("`{shown}` is a directory; rlm_open loads one file")));
            }
            if meta.len() > MAX_SOURCE_BYTES {
                return Err(ToolError::model(format!(
                    "`{shown}` is {} MiB; rlm_open loads files up to {} MiB",
                    meta.len() >> 20,
                    MAX_SOURCE_BYTES >> 20
                )));
            }
            let bytes =
                tokio::fs::read(&path).await.map_err(|e| ToolError::model(format!("cannot read `{shown}`: {e}")))?;
            let text = match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
            (json!({"path": shown}), text, ContextKind::Text)
        }
        SourceSpec::Url(url) => {
            let result = ctx
                .call("fetch_url", json!({"url": url}))
                .await
                .map_err(|e| ToolError::model(format!("fetching `{url}` failed: {e:#}")))?;
            if result.is_error {
                return Err(ToolError::model(format!("fetching `{url}` failed: {}", result.content_text())));
            }
            (json!({"url": url}), fetched_text(ctx, &result).await?, ContextKind::Text)
        }
        SourceSpec::SessionObject(reference) => match session_objects::load(ctx, reference)? {
            Loaded::Text(t) => (json!({"session_object": reference}), t, ContextKind::Text),
            Loaded::Json(v) => (json!({"session_object": reference}), v.to_string(), ContextKind::Json),
        },
    };
    let meta = describe(origin, &text, kind);
    Ok(Source { text: Arc::new(text), kind, meta })
}

/// The whole fetched page: a large one was spilled to a file and the result
/// holds only a summary, so the text is read back from the session's store.
async fn fetched_text(ctx: &ToolContext, result: &quiver_engine::ToolResult) -> Result<String, ToolError> {
    let spilled = result.metadata.get("spilled").and_then(|s| s.get("handle")).and_then(Value::as_str);
    let Some(handle) = spilled else { return Ok(result.content_text()) };
    let Some(record) = ctx.session.state::<quiver_engine::spill::SpillStore>().get(handle) else {
        return Ok(result.content_text());
    };
    tokio::fs::read_to_string(&record.path)
        .await
        .map_err(|e| ToolError::model(format!("cannot read the fetched page back from {}: {e}", record.path.display())))
}

fn describe(origin: Value, text: &str, kind: ContextKind) -> Value {
    let (type_name, extra) = match kind {
        ContextKind::Text => ("str", json!({"lines": text.lines().count()})),
        ContextKind::Json => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => ("list", json!({"items": items.len()})),
            Ok(Value::Object(map)) => ("dict", json!({"keys": map.len()})),
            _ => ("json", json!({})),
        },
    };
    let mut meta = json!({
        "source": origin,
        "type": type_name,
        "chars": text.chars().count(),
        "bytes": text.len(),
        "preview": session_objects::preview(text),
    });
    if let (Value::Object(m), Value::Object(e)) = (&mut meta, extra) {
        m.extend(e);
    }
    meta
}
