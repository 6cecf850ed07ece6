//! Responses API request bodies (`POST /responses`).
//!
//! Full input every request, `store: false`: the conversation is sent whole
//! each time (as Codex does) rather than chained with `previous_response_id`,
//! because zero-data-retention organizations cannot store responses at all,
//! a stored chain is lost when a response expires or a session is resumed on
//! another machine, and quiver's history must stay the one source of truth
//! (compaction, resume, sub-agents). The cost is bandwidth, not tokens: the
//! provider's prefix cache serves the repeated part. Reasoning therefore
//! travels as `encrypted_content` (`include: ["reasoning.encrypted_content"]`)
//! and every reasoning item is passed back exactly as it came.
//!
//! Client-executed tool search: the engine's `tool_search` becomes the
//! `{"type": "tool_search", "execution": "client"}` tool; the model's
//! `tool_search_call` runs quiver's own search, and what that search loaded
//! goes back as a `tool_search_output` carrying the loaded definitions (each
//! with `defer_loading: true`, as OpenAI's "Tool search" guide shows). The API
//! injects those at the end of the context, so `tools` (the head) never
//! changes and the cached prefix holds. A tool loaded another way (a direct
//! call to a deferred tool, `mcp_discover`) has no search call to answer and
//! is appended to `tools`, today's behaviour. MCP tools go out grouped in
//! their server's `namespace` (see `loads.rs`), and a note on what the search
//! matched but did not load follows the output (see `unloaded.rs`).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::loads;
use super::unloaded::{self, UnloadedMatches};
use crate::message::{Message, ModelRequest, ToolCall};

/// The engine's search tool, answered client-side on this wire.
pub const TOOL_SEARCH: &str = "tool_search";

/// Wire settings of a Responses provider.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponsesDialect {
    /// `[providers.NAME] vision` (unset: by model id).
    pub vision: Option<bool>,
    /// `[providers.NAME] tool_choice`.
    pub tool_choice: Option<String>,
    /// Whether `tool_search` runs as the client-executed search tool (unset:
    /// [`client_tool_search`] decides by model).
    pub client_tool_search: Option<bool>,
    /// What a loading search says beside its output about the matches it
    /// did not load (`[providers.NAME] unloaded_matches`; see `unloaded.rs`).
    pub unloaded_matches: UnloadedMatches,
}

/// Whether the model supports the `tool_search` tool: OpenAI's guide names
/// gpt-5.4 and later. Older models get `tool_search` as a plain function and
/// loaded tools appended to `tools`, as on Chat Completions.
pub fn client_tool_search(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    let Some(version) = m.strip_prefix("gpt-").and_then(|v| v.split('-').next()) else { return false };
    let mut numbers = version.split('.').map(|p| p.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten().unwrap_or(0)) {
        (Some(major), minor) => major > 5 || (major == 5 && minor >= 4),
        (None, _) => false,
    }
}

/// Whether the model reasons (and so accepts `reasoning` and returns
/// encrypted reasoning items). OpenAI refuses `reasoning.effort` on others.
pub fn reasons(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    m.starts_with("gpt-5") || m.starts_with("o1") || m.starts_with("o3") || m.starts_with("o4") || m.contains("codex")
}

pub fn request_body(req: &ModelRequest, dialect: &ResponsesDialect, stream: bool) -> Value {
    let search = dialect.client_tool_search.unwrap_or_else(|| client_tool_search(&req.model));
    let plan = ToolPlan::new(req, search);
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    if !req.system.is_empty() {
        body.insert("instructions".into(), json!(req.system));
    }
    let vision = crate::vision::sees_images(&req.model, dialect.vision);
    body.insert("input".into(), Value::Array(input_items(req, &plan, vision, dialect.unloaded_matches)));
    if !plan.tools.is_empty() {
        body.insert("tools".into(), Value::Array(plan.tools.clone()));
        body.insert("tool_choice".into(), json!(dialect.tool_choice.as_deref().unwrap_or("auto")));
        body.insert("parallel_tool_calls".into(), json!(true));
    }
    if let Some(max) = req.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(max));
    }
    if reasons(&req.model) {
        let mut reasoning = Map::new();
        if let Some(effort) = req.effort {
            reasoning.insert("effort".into(), json!(effort.as_str()));
        }
        reasoning.insert("summary".into(), json!("auto"));
        body.insert("reasoning".into(), Value::Object(reasoning));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    // Routing only: it picks where the request goes, never what it matches
    // (the prefix still has to be the same bytes). Stable for the session.
    if let Some(key) = &req.cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

/// The request's tools split for this wire: what goes in `tools`, and the
/// loaded definitions each `tool_search_output` carries.
struct ToolPlan {
    tools: Vec<Value>,
    /// Whether `tool_search` is the client-executed search tool.
    client_search: bool,
    /// Tail tools by name, in Responses shape with `defer_loading: true`.
    deferred: Vec<(String, Value)>,
    /// The MCP tools a search delivered inside their server's namespace
    /// (their calls carry `namespace`).
    namespaced: BTreeSet<String>,
}

impl ToolPlan {
    fn new(req: &ModelRequest, search: bool) -> Self {
        let list = req.tool_list();
        let head_len = req.head_len.min(list.len());
        let mut tools: Vec<Value> = Vec::with_capacity(list.len());
        let mut client_search = false;
        for tool in &list[..head_len] {
            let flat = flat_function(tool);
            if search && flat.get("name").and_then(Value::as_str) == Some(TOOL_SEARCH) {
                client_search = true;
                tools.push(search_tool(&flat));
            } else {
                tools.push(flat);
            }
        }
        let deferred: Vec<(String, Value)> = list[head_len..]
            .iter()
            .map(|tool| {
                let mut flat = flat_function(tool);
                let name = flat.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                if let Some(object) = flat.as_object_mut() {
                    object.insert("defer_loading".into(), json!(true));
                }
                (name, flat)
            })
            .collect();
        let mut plan = ToolPlan { tools, client_search, deferred, namespaced: BTreeSet::new() };
        // A loaded tool no search answered (or every loaded tool, when the
        // head has no `tool_search`) is declared the old way, after the head.
        let answered = if client_search { plan.searched_names(req) } else { BTreeSet::new() };
        for tool in &list[head_len..] {
            let flat = flat_function(tool);
            let name = flat.get("name").and_then(Value::as_str).unwrap_or_default();
            if !answered.contains(name) {
                plan.tools.push(flat);
            }
        }
        plan.namespaced = answered.into_iter().filter(|n| loads::in_namespace(n)).collect();
        plan
    }

    /// Every tail tool some `tool_search` result in the history loaded.
    fn searched_names(&self, req: &ModelRequest) -> BTreeSet<String> {
        let searches = search_call_ids(&req.messages);
        let mut names = BTreeSet::new();
        for message in &req.messages {
            if let Message::Tool { call_id, content, .. } = message
                && searches.contains(call_id.as_str())
            {
                names.extend(loaded_by(content).into_iter().filter(|n| self.definition(n).is_some()));
            }
        }
        names
    }

    fn definition(&self, name: &str) -> Option<&Value> {
        self.deferred.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }
}

/// The ids of `tool_search` calls in the history.
fn search_call_ids(messages: &[Message]) -> BTreeSet<&str> {
    let mut ids = BTreeSet::new();
    for message in messages {
        if let Message::Assistant { tool_calls, .. } = message {
            ids.extend(tool_calls.iter().filter(|c| c.name == TOOL_SEARCH).map(|c| c.id.as_str()));
        }
    }
    ids
}

/// What one `tool_search` call loaded: its result's `metadata.loaded` (the
/// engine renders a result with metadata as canonical JSON).
pub fn loaded_by(content: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(content) else { return Vec::new() };
    let loaded = value.pointer("/metadata/loaded").and_then(Value::as_array);
    loaded.into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

/// A Chat Completions tool (`{"type": "function", "function": {...}}`, the
/// catalog's OpenAI format) as a Responses function tool (flat). Anything
/// else is passed through.
pub fn flat_function(tool: &Value) -> Value {
    let Some(function) = tool.get("function").and_then(Value::as_object) else { return tool.clone() };
    let mut flat = Map::new();
    flat.insert("type".into(), json!("function"));
    for key in ["name", "description", "parameters", "strict"] {
        if let Some(value) = function.get(key) {
            flat.insert(key.into(), value.clone());
        }
    }
    Value::Object(flat)
}

/// The engine's `tool_search`, as the client-executed search tool: the same
/// description and argument schema, so the model's `tool_search_call`
/// arguments are exactly what the engine's tool takes.
fn search_tool(flat: &Value) -> Value {
    let mut tool = Map::new();
    tool.insert("type".into(), json!("tool_search"));
    tool.insert("execution".into(), json!("client"));
    if let Some(description) = flat.get("description") {
        tool.insert("description".into(), description.clone());
    }
    if let Some(parameters) = flat.get("parameters") {
        tool.insert("parameters".into(), parameters.clone());
    }
    Value::Object(tool)
}

fn input_items(req: &ModelRequest, plan: &ToolPlan, vision: bool, unloaded: UnloadedMatches) -> Vec<Value> {
    let searches = if plan.client_search { search_call_ids(&req.messages) } else { BTreeSet::new() };
    let mut out = Vec::with_capacity(req.messages.len() * 2);
    for message in &req.messages {
        match message {
            Message::System { text } => out.push(message_item("developer", "input_text", text)),
            Message::User { text } => out.push(message_item("user", "input_text", text)),
            Message::Assistant { text, reasoning_signature, tool_calls, .. } => {
                out.extend(reasoning_items(reasoning_signature.as_deref()));
                if !text.is_empty() {
                    out.push(message_item("assistant", "output_text", text));
                }
                for call in tool_calls {
                    out.push(call_item(call, searches.contains(call.id.as_str()), &plan.namespaced));
                }
            }
            Message::Tool { call_id, content, is_error, images, .. } => {
                if searches.contains(call_id.as_str()) {
                    out.extend(search_output(plan, call_id, content, *is_error, unloaded));
                } else {
                    out.push(function_output(call_id, content, if vision { images } else { &[] }));
                }
            }
        }
    }
    out
}

fn message_item(role: &str, kind: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
}

/// The reasoning items of one response, kept as the API sent them (see
/// [`crate::message::Message::Assistant`]'s `reasoning_signature`). Only
/// `reasoning` items: an Anthropic session keeps its thinking blocks the same way.
pub fn reasoning_items(kept: Option<&str>) -> Vec<Value> {
    match kept.map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Array(items))) => {
            items.into_iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("reasoning")).collect()
        }
        _ => Vec::new(),
    }
}

fn call_item(call: &ToolCall, search: bool, namespaced: &BTreeSet<String>) -> Value {
    if search {
        // The API sends a search call's arguments as an object; the history
        // keeps their canonical text.
        let arguments = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!({}));
        return json!({
            "type": "tool_search_call", "call_id": call.id, "execution": "client",
            "status": "completed", "arguments": arguments,
        });
    }
    match loads::call_name(&call.name, namespaced) {
        (Some(namespace), name) => json!({"type": "function_call", "call_id": call.id, "namespace": namespace,
            "name": name, "arguments": crate::calls::replayed_arguments(&call.arguments)}),
        (None, name) => json!({"type": "function_call", "call_id": call.id, "name": name,
            "arguments": crate::calls::replayed_arguments(&call.arguments)}),
    }
}

fn function_output(call_id: &str, content: &str, images: &[crate::message::ToolImage]) -> Value {
    if images.is_empty() {
        return json!({"type": "function_call_output", "call_id": call_id, "output": content});
    }
    let mut parts = vec![json!({"type": "input_text", "text": content})];
    for image in images {
        parts.push(json!({"type": "input_image", "image_url": crate::vision::data_url(&image.mime_type, &image.data)}));
    }
    json!({"type": "function_call_output", "call_id": call_id, "output": parts})
}

/// A `tool_search` result: the loaded definitions as `tool_search_output`
/// (MCP tools in their server's namespace). When the search failed or loaded
/// nothing the model reads its whole text as a developer message right
/// after; when it loaded something, what `unloaded` says of the rest (see
/// `unloaded.rs`).
fn search_output(
    plan: &ToolPlan,
    call_id: &str,
    content: &str,
    is_error: bool,
    unloaded: UnloadedMatches,
) -> Vec<Value> {
    let loaded: Vec<(String, Value)> =
        loaded_by(content).into_iter().filter_map(|name| plan.definition(&name).cloned().map(|d| (name, d))).collect();
    let mut items = vec![json!({
        "type": "tool_search_output", "call_id": call_id, "execution": "client",
        "status": "completed", "tools": loads::output_tools(&loaded),
    })];
    let names: Vec<String> = loaded.into_iter().map(|(name, _)| name).collect();
    let note = if is_error || names.is_empty() {
        Some(format!("tool_search result: {content}"))
    } else {
        unloaded::note(content, &names, unloaded)
    };
    if let Some(note) = note {
        items.push(message_item("developer", "input_text", &note));
    }
    items
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
