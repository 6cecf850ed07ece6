//! What a client-executed `tool_search` sends back on the Responses wire:
//! the `tool_search_output` item carrying the loaded definitions, and an MCP
//! server's tools grouped as a `namespace` (OpenAI's "Tool search" guide:
//! the models were trained mostly on namespaces and MCP servers). What the
//! search matched but did not load is `unloaded.rs`.
//!
//! A loaded MCP tool `mcp__<server>__<tool>` goes out as the function
//! `<tool>` inside the namespace `mcp__<server>` (`defer_loading` on the
//! function, never on the namespace, as the guide says); the model calls it
//! with `name: "<tool>", namespace: "mcp__<server>"`, which
//! [`qualified_name`] joins back into quiver's name and [`call_name`] splits
//! again when the call is sent back. Every byte follows from the search's
//! result and the tools' definitions, so a repeated output is identical.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use quiver_engine::names;

/// The name quiver knows a called function by: `namespace__name` for a
/// function the model called inside a namespace, else its name.
pub fn qualified_name(item: &Value) -> Option<String> {
    let name = item.get("name").and_then(Value::as_str)?;
    Some(match item.get("namespace").and_then(Value::as_str) {
        Some(namespace) if !namespace.is_empty() => format!("{namespace}__{name}"),
        _ => name.to_string(),
    })
}

/// How a call of quiver's tool `name` is named on the wire: `(namespace,
/// function)` for an MCP tool a search delivered in a namespace.
pub fn call_name<'a>(name: &'a str, namespaced: &BTreeSet<String>) -> (Option<String>, &'a str) {
    match names::split(name) {
        Some((server, tool)) if namespaced.contains(name) => (Some(format!("{}{server}", names::PREFIX)), tool),
        _ => (None, name),
    }
}

/// Whether a loaded tool travels inside its server's namespace.
pub fn in_namespace(name: &str) -> bool {
    names::split(name).is_some()
}

/// The `tools` of a `tool_search_output`: each loaded definition (flat, with
/// `defer_loading: true`) in load order, an MCP tool moved into its server's
/// namespace (one namespace per server, placed where its first tool was).
pub fn output_tools(loaded: &[(String, Value)]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (name, definition) in loaded {
        let Some((server, tool)) = names::split(name) else {
            out.push(definition.clone());
            continue;
        };
        let namespace = format!("{}{server}", names::PREFIX);
        let mut member = definition.clone();
        if let Some(object) = member.as_object_mut() {
            object.insert("name".into(), json!(tool));
        }
        let existing = out.iter_mut().find(|t| t["type"] == "namespace" && t["name"] == namespace.as_str());
        match existing.and_then(|t| t.get_mut("tools")).and_then(Value::as_array_mut) {
            Some(members) => members.push(member),
            None => out.push(json!({
                "type": "namespace",
                "name": namespace,
                "description": format!("Tools of the MCP server `{server}`, as quiver's tool_search loaded them."),
                "tools": [member],
            })),
        }
    }
    out
}

#[cfg(test)]
#[path = "loads_tests.rs"]
mod tests;
