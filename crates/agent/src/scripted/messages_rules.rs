//! What the Messages API refuses about deferred tools and tool results, and
//! what its prefix cache keys on, as Anthropic documents them ("Tool search
//! tool", "Tool use with prompt caching", "Handle tool calls"):
//! - a request whose every tool has `defer_loading: true` is refused (at
//!   least one tool, the search itself, must be loaded);
//! - a `tool_reference` must name a tool defined in `tools` with
//!   `defer_loading: true`;
//! - in a user message, `tool_result` blocks come first, any text after them;
//! - deferred tools are not part of the prompt: the cache reads the other
//!   tools, then `system`, then `messages` (where a `tool_reference` brings a
//!   definition in). So the deferred set may change without costing the
//!   cache, and is left out of the key (see `prefix_cache`).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

fn deferred(tool: &Value) -> bool {
    tool.get("defer_loading") == Some(&Value::Bool(true))
}

fn tools(request: &Value) -> &[Value] {
    request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The refusal for a request that breaks a documented rule, in the API's
/// error shape (`invalid_request_error`, HTTP 400).
pub(super) fn refusal(request: &Value) -> Option<Response> {
    let message = broken_rule(request)?;
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
    Some(super::quirks::json_error(StatusCode::BAD_REQUEST, &body))
}

fn broken_rule(request: &Value) -> Option<String> {
    let tools = tools(request);
    if !tools.is_empty() && tools.iter().all(deferred) {
        return Some("tools: at least one tool must not have `defer_loading: true`".into());
    }
    let deferred_names: Vec<&str> =
        tools.iter().filter(|t| deferred(t)).filter_map(|t| t.get("name").and_then(Value::as_str)).collect();
    let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, message) in messages.iter().enumerate() {
        let blocks = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let mut after_other = false;
        for (j, block) in blocks.iter().enumerate() {
            let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
            if kind == "tool_result" && after_other {
                return Some(format!(
                    "messages.{i}.content.{j}: tool_result blocks must come before any other content in a user message"
                ));
            }
            after_other |= kind != "tool_result";
            let nested = block.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            for reference in nested.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_reference")) {
                let name = reference.get("tool_name").and_then(Value::as_str).unwrap_or_default();
                if !deferred_names.contains(&name) {
                    return Some(format!(
                        "messages.{i}.content.{j}: tool_reference `{name}` names no tool in `tools` with `defer_loading: true`"
                    ));
                }
            }
        }
    }
    None
}
