//! Deferred tools sent up front (`[providers.NAME] deferred_tools`).
//!
//! Appending a loaded tool to `tools` changes the prompt before the
//! conversation, so every load costs the cached prefix of the messages.
//! Anthropic's Messages API lets the client send every tool the session may
//! load with `defer_loading: true` (not part of the prompt) and answer a
//! search with `tool_reference` blocks, which bring the definition in where
//! the reference sits in the conversation: the prefix is untouched
//! ("Tool use with prompt caching" and "Tool search tool" in Anthropic's docs).
//!
//! This module decides, from a [`ModelRequest`], which tools go out deferred
//! and which tool results reference what, so the body builder and the prefix
//! accounting ([`crate::run::prefix`]) see the same thing.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::message::{Message, ModelRequest};

/// How a session's loaded tools reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeferredTools {
    /// Every loadable tool is sent with `defer_loading: true`; a load is a
    /// `tool_reference` in the tool result. The Anthropic wire's default.
    #[default]
    Defer,
    /// A loaded tool is appended to `tools` (for Anthropic-compatible proxies
    /// without `defer_loading`; Chat Completions' default).
    Append,
    /// Chat Completions only: `tools` is the head and a `call_tool`
    /// dispatcher for the whole session; a loading result carries the loaded
    /// definitions (see [`crate::dispatch`]).
    Dispatch,
}

impl DeferredTools {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "defer" => Some(DeferredTools::Defer),
            "append" => Some(DeferredTools::Append),
            "dispatch" => Some(DeferredTools::Dispatch),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DeferredTools::Defer => "defer",
            DeferredTools::Append => "append",
            DeferredTools::Dispatch => "dispatch",
        }
    }
}

fn name_of(tool: &Value) -> Option<&str> {
    tool.get("name").and_then(Value::as_str)
}

/// The names of `req.deferred_tools`.
fn deferred_names(req: &ModelRequest) -> BTreeSet<&str> {
    req.deferred_tools.iter().filter_map(name_of).collect()
}

/// Whether this request sends tools deferred at all: it must carry deferred
/// definitions and at least one tool that is not deferred (the API refuses a
/// request whose every tool is deferred).
pub fn defers(req: &ModelRequest) -> bool {
    !req.deferred_tools.is_empty() && req.head_len > 0
}

/// Tools referenced by tool results so far (their definitions are in the
/// conversation), restricted to the deferred set.
fn referenced(req: &ModelRequest) -> BTreeSet<String> {
    let deferred = deferred_names(req);
    req.messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { loaded, .. } => Some(loaded),
            _ => None,
        })
        .flatten()
        .filter(|n| deferred.contains(n.as_str()))
        .cloned()
        .collect()
}

/// What a tool result that loaded `loaded` references: the deferred ones
/// (a tool outside the deferred set cannot be referenced; it is in `tools`).
pub fn references<'a>(req: &ModelRequest, loaded: &'a [String]) -> Vec<&'a str> {
    if !defers(req) {
        return Vec::new();
    }
    let deferred = deferred_names(req);
    loaded.iter().map(String::as_str).filter(|n| deferred.contains(n)).collect()
}

/// The `tools` array to send, each entry marked whether it is deferred:
/// the head, then every deferred tool (in the session's stable order), then
/// loaded tools that are not in the deferred set (an MCP server's newcomers
/// loaded by the catalog itself). A loaded deferred tool that no tool result
/// references (the model called it by name before searching) goes out
/// without the flag, since nothing else would show it to the model.
pub fn tools_with_deferral(req: &ModelRequest) -> Vec<(Value, bool)> {
    let tools = req.tool_list();
    if !defers(req) {
        return tools.iter().map(|t| (t.clone(), false)).collect();
    }
    let head_len = req.head_len.min(tools.len());
    let (head, tail) = tools.split_at(head_len);
    let deferred = deferred_names(req);
    let referenced = referenced(req);
    let tail_names: BTreeSet<&str> = tail.iter().filter_map(name_of).collect();
    let head_names: BTreeSet<&str> = head.iter().filter_map(name_of).collect();
    let mut out: Vec<(Value, bool)> = head.iter().map(|t| (t.clone(), false)).collect();
    for tool in &req.deferred_tools {
        let Some(name) = name_of(tool) else { continue };
        if head_names.contains(name) {
            continue;
        }
        let shown_elsewhere = tail_names.contains(name) && !referenced.contains(name);
        out.push((tool.clone(), !shown_elsewhere));
    }
    for tool in tail {
        if name_of(tool).is_some_and(|n| !deferred.contains(n) && !head_names.contains(n)) {
            out.push((tool.clone(), false));
        }
    }
    out
}

/// The wire's `tools`: deferred entries carry `defer_loading: true`.
pub fn wire_tools(req: &ModelRequest) -> Vec<Value> {
    tools_with_deferral(req)
        .into_iter()
        .map(|(mut tool, deferred)| {
            if deferred && let Value::Object(map) = &mut tool {
                map.insert("defer_loading".into(), json!(true));
            }
            tool
        })
        .collect()
}

/// The tools that are part of the prompt (what a prefix cache sees of
/// `tools`): the deferred ones are not.
pub fn prompt_tools(req: &ModelRequest) -> Vec<Value> {
    tools_with_deferral(req).into_iter().filter(|(_, deferred)| !deferred).map(|(t, _)| t).collect()
}

/// The most bytes a loading search adds of quiver's own beside the loaded
/// definitions, on every wire: the request that loads is the one whose new
/// bytes nothing can come from the cache for, so beyond the model's call
/// and the definitions it should carry only what the model needs to choose
/// next: which other tools matched (a `select:` away). A name that was not
/// found and a search's notes (discovery still under way) go beyond it:
/// they are rare, and without them the model would search blind.
pub const LOAD_NOTE_MAX: usize = 64;

/// What a loading search says beside the definitions it loaded: the other
/// matches by name, best first, as many as fit in `budget` bytes (one at
/// least), then any name not found and the search's notes. `Some("")` when
/// there is nothing to say; `None` when `content` is not a search's JSON.
///
/// The definitions themselves say what was loaded, so the search's own
/// JSON (matches, schema previews, `nextInstruction`) would repeat them.
pub fn load_note(content: &str, loaded: &[String], budget: usize) -> Option<String> {
    let search = search_json(content)?;
    let rest = not_loaded(&search, loaded)?;
    let mut text = String::new();
    if let Some(((first, _), others)) = rest.split_first() {
        // `tool_search`'s description says what `select:NAME` does.
        text = format!("Also matched (select: to load): {first}");
        for (name, _) in others {
            if text.len() + 2 + name.len() > budget {
                break;
            }
            text.push_str(", ");
            text.push_str(name);
        }
    }
    let mut parts = vec![text];
    parts.extend(search_notes(&search));
    Some(parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n"))
}

/// A search's matches that are not loaded (by their status, or because
/// `loaded` names them), best first: each one's name and description.
/// `None` when the search has no `matches` list.
pub fn not_loaded<'a>(search: &'a Value, loaded: &[String]) -> Option<Vec<(&'a str, &'a str)>> {
    let matches = search.get("matches")?.as_array()?;
    Some(
        matches
            .iter()
            .filter(|m| m.get("status").and_then(Value::as_str) != Some("loaded"))
            .filter_map(|m| {
                let name = m.get("name").and_then(Value::as_str)?;
                let description = m.get("description").and_then(Value::as_str).unwrap_or_default();
                (!loaded.iter().any(|l| l == name)).then_some((name, description))
            })
            .collect(),
    )
}

/// What a search says besides its matches, whatever else goes: the
/// `select:` names it did not find, then its notes (MCP servers still
/// starting).
pub fn search_notes(search: &Value) -> Vec<String> {
    let strings = |key: &str| -> Vec<String> {
        let list = search.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        list.iter().filter_map(Value::as_str).map(str::to_string).collect()
    };
    let not_found = strings("notFound");
    let mut out = Vec::new();
    if !not_found.is_empty() {
        out.push(format!("Not found: {}.", not_found.join(", ")));
    }
    out.extend(strings("notes"));
    out
}

/// The text that goes with a result's `tool_reference` blocks (the
/// references bring each loaded tool's whole definition in): the
/// [`load_note`], or the whole result when it is not a search's JSON.
pub fn reference_note(content: &str, loaded: &[String]) -> String {
    load_note(content, loaded, LOAD_NOTE_MAX).unwrap_or_else(|| content.to_string())
}

/// A search result's JSON object, parsed from a tool message's text; `None`
/// when the text is not JSON. The engine's port wraps a result with metadata
/// as `{content, is_error, metadata}`: the search is then its `content`.
pub fn search_json(content: &str) -> Option<Value> {
    let mut parsed = serde_json::from_str::<Value>(content).ok()?;
    match parsed.get_mut("content") {
        Some(inner @ Value::Object(_)) => Some(inner.take()),
        _ => Some(parsed),
    }
}

#[cfg(test)]
#[path = "deferred_tests.rs"]
mod tests;
