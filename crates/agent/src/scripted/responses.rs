//! The scripted server's Responses API (`POST /responses`, `/v1/responses`):
//! `response` objects and the event stream OpenAI documents
//! (`response.created`, `response.output_item.added` / `.done`, text and
//! argument deltas, `response.completed` with
//! `usage.input_tokens_details.cached_tokens`), and the request rules the API
//! enforces, checked before the model "runs" (a refused request takes no turn):
//!
//! - every input item is of a known type;
//! - a `function_call_output` answers an earlier `function_call`, a
//!   `tool_search_output` an earlier client `tool_search_call`, and every call
//!   in the input has its output ("No tool output found for function call");
//! - a reasoning item sent back with `store: false` carries its
//!   `encrypted_content` (the API has nothing stored to look it up by id);
//! - `defer_loading` needs a `tool_search` tool;
//! - `prompt_cache_key` is a string of at most 64 characters;
//! - a `namespace` tool has a name, a description and its `tools`, and
//!   `defer_loading` goes on its functions, never on the namespace itself;
//!   a `function_call` with a `namespace` names a function of that namespace.
//!
//! Two rules are the scripted server's own, stricter than the API as
//! documented: a `tool_search_output` must carry the same tools in every
//! request that repeats it (changed definitions would change the cached
//! prefix, which is what these tests guard), and in a request with tools a
//! `function_call` in the input names a declared function or one an earlier
//! `tool_search_output` loaded (a call the model could not have made).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::quirks::Answer;
use super::{Fault, Piece, frame, split};
use crate::message::Usage;

const CREATED: u64 = 1_700_000_000;

/// Why the API would refuse this request: (message, param).
pub(super) fn validate(request: &Value, outputs: &mut BTreeMap<String, String>) -> Result<(), (String, String)> {
    let tools = request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let search_tool = tools.iter().any(|t| t.get("type").and_then(Value::as_str) == Some("tool_search"));
    let mut callable: BTreeSet<String> = BTreeSet::new();
    for (i, tool) in tools.iter().enumerate() {
        if tool.get("defer_loading") == Some(&json!(true)) && !search_tool {
            return Err(("`defer_loading` requires a `tool_search` tool in `tools`".into(), format!("tools[{i}]")));
        }
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            callable.insert(name.to_string());
        }
    }
    match request.get("prompt_cache_key") {
        None | Some(Value::Null) => {}
        Some(Value::String(key)) if key.chars().count() > 64 => {
            return Err((
                format!(
                    "Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length {} instead.",
                    key.chars().count()
                ),
                "prompt_cache_key".into(),
            ));
        }
        Some(Value::String(_)) => {}
        Some(_) => {
            return Err(("Invalid type for 'prompt_cache_key': expected a string.".into(), "prompt_cache_key".into()));
        }
    }
    let store = request.get("store").and_then(Value::as_bool).unwrap_or(true);
    let items = match request.get("input") {
        Some(Value::Array(items)) => items.as_slice(),
        Some(Value::String(_)) => return Ok(()),
        _ => return Err(("`input` must be a string or an array of items".into(), "input".into())),
    };
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    let mut searches: BTreeSet<String> = BTreeSet::new();
    let mut answered: BTreeSet<String> = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let param = format!("input[{i}]");
        let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
        let kind =
            item.get("type").and_then(Value::as_str).unwrap_or(if item.get("role").is_some() { "message" } else { "" });
        match kind {
            "message" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or_default();
                if !["user", "assistant", "system", "developer"].contains(&role) {
                    return Err((
                        format!(
                            "Invalid value: '{role}'. Supported values are: 'user', 'assistant', 'system', and 'developer'."
                        ),
                        format!("{param}.role"),
                    ));
                }
            }
            "reasoning" => {
                if !store && item.get("encrypted_content").and_then(Value::as_str).is_none() {
                    let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
                    return Err((
                        format!(
                            "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                        ),
                        param,
                    ));
                }
            }
            "function_call" => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                let name = match item.get("namespace").and_then(Value::as_str) {
                    Some(namespace) => format!("{namespace}.{name}"),
                    None => name.to_string(),
                };
                if !tools.is_empty() && !callable.contains(&name) {
                    return Err((format!("function_call `{name}` names no declared or loaded function"), param));
                }
                calls.insert(call_id, i);
            }
            "tool_search_call" => {
                searches.insert(call_id);
            }
            "function_call_output" => {
                if !calls.contains_key(&call_id) {
                    return Err((
                        format!("No tool call found for function call output with call_id {call_id}."),
                        param,
                    ));
                }
                answered.insert(call_id);
            }
            "tool_search_output" => {
                if !searches.contains(&call_id) {
                    return Err((
                        format!("No tool search call found for tool search output with call_id {call_id}."),
                        param,
                    ));
                }
                let loaded = item
                    .get("tools")
                    .and_then(Value::as_array)
                    .ok_or((format!("{param}.tools is required"), param.clone()))?;
                for (j, tool) in loaded.iter().enumerate() {
                    callable.extend(callable_names(tool, &format!("{param}.tools[{j}]"))?);
                }
                let bytes = quiver_engine::canonical::to_string(&Value::Array(loaded.clone()));
                match outputs.get(&call_id) {
                    Some(before) if *before != bytes => {
                        return Err((
                            format!(
                                "tool_search_output {call_id} carries other tools than in an earlier request (the cached prefix would break)"
                            ),
                            param,
                        ));
                    }
                    _ => {
                        outputs.insert(call_id.clone(), bytes);
                    }
                }
                answered.insert(call_id);
            }
            other => {
                return Err((
                    format!(
                        "Invalid value: '{other}'. Supported values are: 'message', 'reasoning', 'function_call', 'function_call_output', 'tool_search_call', 'tool_search_output'."
                    ),
                    format!("{param}.type"),
                ));
            }
        }
    }
    let unanswered = calls.keys().chain(searches.iter()).find(|id| !answered.contains(*id));
    if let Some(id) = unanswered {
        return Err((format!("No tool output found for function call {id}."), "input".into()));
    }
    Ok(())
}

/// The functions a loaded tool makes callable: a function by its name, a
/// namespace's functions as `namespace.name`; a malformed namespace is refused.
fn callable_names(tool: &Value, param: &str) -> Result<Vec<String>, (String, String)> {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    if tool.get("type").and_then(Value::as_str) != Some("namespace") {
        return Ok(vec![name.to_string()]);
    }
    if name.is_empty() || tool.get("description").and_then(Value::as_str).is_none() {
        return Err(("a namespace needs a `name` and a `description`".into(), param.to_string()));
    }
    if tool.get("defer_loading").is_some() {
        return Err((
            "`defer_loading` applies to the functions inside a namespace, not to the namespace".into(),
            format!("{param}.defer_loading"),
        ));
    }
    let members =
        tool.get("tools").and_then(Value::as_array).ok_or((format!("{param}.tools is required"), param.to_string()))?;
    Ok(members
        .iter()
        .filter_map(|m| m.get("name").and_then(Value::as_str))
        .map(|member| format!("{name}.{member}"))
        .collect())
}

/// The namespace and function a scripted call to quiver's `mcp__server__tool`
/// is made as, when an earlier `tool_search_output` delivered it in a namespace
/// (what a model that read that output would call).
fn namespaced(request: &Value, name: &str) -> Option<(String, String)> {
    let items = request.get("input").and_then(Value::as_array)?;
    let outputs = items.iter().filter(|i| i.get("type").and_then(Value::as_str) == Some("tool_search_output"));
    let loaded = outputs.filter_map(|o| o.get("tools").and_then(Value::as_array)).flatten();
    let namespaces = loaded.filter(|t| t.get("type").and_then(Value::as_str) == Some("namespace"));
    for namespace in namespaces {
        let ns = namespace.get("name").and_then(Value::as_str).unwrap_or_default();
        let members = namespace.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for member in members.iter().filter_map(|m| m.get("name").and_then(Value::as_str)) {
            if format!("{ns}__{member}") == name {
                return Some((ns.to_string(), member.to_string()));
            }
        }
    }
    None
}

/// Whether the request's `tool_search` is client-executed (then a scripted
/// call named `tool_search` is a `tool_search_call`).
fn client_search(request: &Value) -> bool {
    let tools = request.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    tools.iter().any(|t| t.get("type") == Some(&json!("tool_search")) && t.get("execution") == Some(&json!("client")))
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_hit_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    })
}

/// The answer's output items, whole.
fn output_items(answer: &Answer<'_>, request: &Value) -> Vec<Value> {
    let turn = answer.turn;
    let mut items = Vec::new();
    if let Some(reasoning) = &turn.reasoning {
        items.push(
            json!({"type": "reasoning", "id": "rs_scripted", "summary": [{"type": "summary_text", "text": reasoning}],
            "encrypted_content": format!("scripted-encrypted:{}", reasoning.len())}),
        );
    }
    if !turn.text.is_empty() {
        items.push(json!({"type": "message", "id": "msg_scripted", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}));
    }
    let search = client_search(request);
    for (i, call) in turn.tool_calls.iter().enumerate() {
        if search && call.name == "tool_search" {
            let arguments = serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!({}));
            items.push(json!({"type": "tool_search_call", "id": format!("ts_{i}"), "call_id": call.id,
                "execution": "client", "status": "completed", "arguments": arguments}));
        } else {
            let mut item = json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": call.id,
                "name": call.name, "arguments": call.arguments, "status": "completed"});
            if let Some((namespace, name)) = namespaced(request, &call.name) {
                item["name"] = json!(name);
                item["namespace"] = json!(namespace);
            }
            items.push(item);
        }
    }
    items
}

fn response_object(answer: &Answer<'_>, output: Vec<Value>, status: &str) -> Value {
    let mut response = json!({"id": "resp_scripted", "object": "response", "created_at": CREATED, "status": status,
        "model": answer.model, "output": output, "store": false});
    if status == "incomplete" {
        response["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    if let Some(usage) = answer.usage {
        response["usage"] = usage_json(usage);
    }
    response
}

fn status(answer: &Answer<'_>) -> &'static str {
    match answer.turn.finish_reason.as_deref() {
        Some("length" | "max_output_tokens") => "incomplete",
        _ => "completed",
    }
}

pub(super) fn response_body(answer: &Answer<'_>, request: &Value) -> Value {
    response_object(answer, output_items(answer, request), status(answer))
}

fn event(kind: &str, mut body: Value, sequence: &mut u64) -> String {
    body["type"] = json!(kind);
    body["sequence_number"] = json!(*sequence);
    *sequence += 1;
    format!("event: {kind}\ndata: {body}\n\n")
}

pub(super) fn stream_pieces(answer: &Answer<'_>, request: &Value) -> Vec<Piece> {
    let mut n = 0u64;
    let mut events = vec![event(
        "response.created",
        json!({"response": response_object(&Answer { usage: None, ..*answer }, vec![], "in_progress")}),
        &mut n,
    )];
    let cut = matches!(answer.turn.fault, Some(Fault::CutMidToolCall));
    let items = output_items(answer, request);
    for (index, item) in items.iter().enumerate() {
        let id = item["id"].clone();
        let mut opened = item.clone();
        match item["type"].as_str() {
            Some("message") => opened["content"] = json!([]),
            Some("reasoning") => opened["summary"] = json!([]),
            Some("function_call") => opened["arguments"] = json!(""),
            _ => {}
        }
        events.push(event("response.output_item.added", json!({"output_index": index, "item": opened}), &mut n));
        match item["type"].as_str() {
            Some("message") => {
                for piece in split(&answer.turn.text, 6) {
                    events.push(event(
                        "response.output_text.delta",
                        json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece}),
                        &mut n,
                    ));
                }
            }
            Some("reasoning") => {
                let text = item.pointer("/summary/0/text").and_then(Value::as_str).unwrap_or_default();
                for piece in split(text, 7) {
                    events.push(event(
                        "response.reasoning_summary_text.delta",
                        json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": piece}),
                        &mut n,
                    ));
                }
            }
            Some("function_call") => {
                let fragments = split(item["arguments"].as_str().unwrap_or_default(), 5);
                let keep = if cut { fragments.len() / 2 } else { fragments.len() };
                for fragment in fragments.into_iter().take(keep) {
                    events.push(event(
                        "response.function_call_arguments.delta",
                        json!({"item_id": id, "output_index": index, "delta": fragment}),
                        &mut n,
                    ));
                }
                if cut {
                    return frame(events, answer.turn.fault.as_ref());
                }
            }
            _ => {}
        }
        events.push(event("response.output_item.done", json!({"output_index": index, "item": item}), &mut n));
    }
    let kind = if status(answer) == "incomplete" { "response.incomplete" } else { "response.completed" };
    events.push(event(kind, json!({"response": response_object(answer, items, status(answer))}), &mut n));
    frame(events, answer.turn.fault.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_output(tools: Value) -> Value {
        json!({"tools": [{"type": "tool_search", "execution": "client"}], "store": false, "input": [
            {"type": "tool_search_call", "call_id": "s1", "execution": "client", "arguments": {}},
            {"type": "tool_search_output", "call_id": "s1", "execution": "client", "tools": tools}]})
    }

    #[test]
    fn a_namespace_needs_its_parts_and_no_defer_loading_of_its_own() {
        let member = json!({"type": "function", "name": "create_issue", "defer_loading": true});
        let good = json!([{"type": "namespace", "name": "mcp__github", "description": "GitHub.", "tools": [member]}]);
        assert!(validate(&with_output(good), &mut BTreeMap::new()).is_ok());
        let deferred = json!([{"type": "namespace", "name": "mcp__github", "description": "GitHub.",
            "defer_loading": true, "tools": [member]}]);
        let err = validate(&with_output(deferred), &mut BTreeMap::new()).unwrap_err();
        assert!(err.0.contains("not to the namespace"), "{err:?}");
        let nameless = json!([{"type": "namespace", "description": "GitHub.", "tools": [member]}]);
        assert!(validate(&with_output(nameless), &mut BTreeMap::new()).is_err());
    }

    #[test]
    fn a_namespaced_call_must_name_a_delivered_function() {
        let member = json!({"type": "function", "name": "create_issue", "defer_loading": true});
        let mut request = with_output(
            json!([{"type": "namespace", "name": "mcp__github", "description": "GitHub.", "tools": [member]}]),
        );
        let items = request["input"].as_array_mut().unwrap();
        items.push(json!({"type": "function_call", "call_id": "c1", "namespace": "mcp__github", "name": "create_issue", "arguments": "{}"}));
        items.push(json!({"type": "function_call_output", "call_id": "c1", "output": "ok"}));
        assert!(validate(&request, &mut BTreeMap::new()).is_ok());
        request["input"][2]["name"] = json!("close_issue");
        let err = validate(&request, &mut BTreeMap::new()).unwrap_err();
        assert!(err.0.contains("names no declared or loaded function"), "{err:?}");
    }
}
