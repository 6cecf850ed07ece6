//! Calling loaded tools through a stable head tool on Chat Completions
//! (`[providers.NAME] deferred_tools = "dispatch"`).
//!
//! Chat Completions has no deferred tools: a loaded tool appended to `tools`
//! changes the prompt before the conversation (chat templates render the
//! tool list first), so every loading turn loses the cached prefix of the
//! messages. With a dispatcher, `tools` is the head plus one more function,
//! `call_tool {name, arguments}`, for the whole session; a search's result
//! carries the definitions of the tools it loaded (where the load happened,
//! after everything cached), and the model calls a loaded tool through
//! `call_tool`. The wire unwraps such a call into a call of the tool itself,
//! so the engine dispatches it as usual: its arguments are validated against
//! the loaded tool's own schema, permissions and spilling apply, and the
//! history keeps the tool's real name (resume and audit read it as is).
//! Sending the history back, a call of a tool outside the head is wrapped
//! again, byte-for-byte the same every request.
//!
//! The cost: the model reads the loaded schemas as text rather than as
//! declared functions, and the server cannot constrain `arguments` to them
//! (`exec_bench` measures both ways; bench/exec/README.md has the figures).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::message::{Message, ModelRequest, ToolCall};

/// The dispatcher's name.
pub const CALL_TOOL: &str = "call_tool";

/// The dispatcher, as a Chat Completions function. Fixed bytes: it is part of
/// the head for the whole session.
pub fn call_tool_definition() -> Value {
    json!({"type": "function", "function": {
        "name": CALL_TOOL,
        "description": "Call a tool that tool_search loaded. Its definition (name, description, parameters) is in that search's result; pass its name and its arguments as an object that follows those parameters.",
        "parameters": {"type": "object", "properties": {
            "name": {"type": "string", "description": "The loaded tool's name, exactly as in its definition."},
            "arguments": {"type": "object", "description": "The tool's arguments, following its parameters."}},
            "required": ["name", "arguments"]}}})
}

fn function_name(tool: &Value) -> Option<&str> {
    tool.pointer("/function/name").and_then(Value::as_str)
}

/// The request as the dispatching wire sends it: `tools` is the head and
/// `call_tool`; a call of any other tool is a `call_tool` call; a result
/// that loaded tools carries their definitions.
pub fn dispatched(req: &ModelRequest) -> ModelRequest {
    let list = req.tool_list();
    let head_len = req.head_len.min(list.len());
    let mut tools = list[..head_len].to_vec();
    tools.push(call_tool_definition());
    let head: BTreeSet<&str> = tools.iter().filter_map(function_name).collect();
    let messages = req
        .messages
        .iter()
        .map(|message| match message {
            Message::Assistant { text, reasoning, reasoning_signature, tool_calls } => Message::Assistant {
                text: text.clone(),
                reasoning: reasoning.clone(),
                reasoning_signature: reasoning_signature.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| if head.contains(c.name.as_str()) { c.clone() } else { wrap(c) })
                    .collect(),
            },
            Message::Tool { call_id, content, is_error, images, loaded } if !loaded.is_empty() => Message::Tool {
                call_id: call_id.clone(),
                content: with_definitions(content, loaded, &list[head_len..]),
                is_error: *is_error,
                images: images.clone(),
                loaded: loaded.clone(),
            },
            other => other.clone(),
        })
        .collect();
    ModelRequest { tools: Value::Array(tools), head_len: head_len + 1, messages, ..req.clone() }
}

/// A call of a loaded tool, as the model makes it through the dispatcher.
fn wrap(call: &ToolCall) -> ToolCall {
    let arguments = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(parsed) => parsed,
        Err(_) if call.arguments.trim().is_empty() => json!({}),
        Err(_) => Value::String(call.arguments.clone()),
    };
    let wrapped = json!({"name": call.name, "arguments": arguments});
    ToolCall { id: call.id.clone(), name: CALL_TOOL.into(), arguments: quiver_engine::canonical::to_string(&wrapped) }
}

/// A loading result as the loaded tools' definitions (the function objects,
/// in load order), which the model calls through `call_tool` (its
/// description says where they are), then the search's
/// [`load_note`](crate::deferred::load_note): what else matched.
fn with_definitions(content: &str, loaded: &[String], tail: &[Value]) -> String {
    let definitions: Vec<&Value> = loaded
        .iter()
        .filter_map(|name| tail.iter().find(|t| function_name(t) == Some(name.as_str())))
        .filter_map(|t| t.get("function"))
        .collect();
    if definitions.is_empty() {
        return content.to_string();
    }
    let definitions = quiver_engine::canonical::to_string(&json!(definitions));
    // The line break before the note counts against its budget.
    match crate::deferred::load_note(content, loaded, crate::deferred::LOAD_NOTE_MAX - 1) {
        Some(note) if note.is_empty() => definitions,
        Some(note) => format!("{definitions}\n{note}"),
        // Not a search's JSON: all of it, then what it loaded.
        None => format!("{content}\n\n{definitions}"),
    }
}

/// Why a `call_tool` call could not be made (it names no tool): the error
/// result the model reads instead, so it can retry.
pub fn malformed(arguments: &str) -> String {
    format!(
        "`{CALL_TOOL}` needs `name` (a loaded tool's name, as in its definition) and `arguments` (an object following its parameters); got: {arguments}"
    )
}

/// The model's `call_tool` calls as calls of the tools they name. A call
/// without a usable `name` stays a `call_tool` call, which the loop answers
/// with [`malformed`].
pub fn unwrap_calls(calls: &mut [ToolCall]) {
    for call in calls.iter_mut().filter(|c| c.name == CALL_TOOL) {
        let Ok(Value::Object(mut wrapped)) = serde_json::from_str::<Value>(&call.arguments) else { continue };
        let Some(Value::String(name)) = wrapped.remove("name") else { continue };
        if name.is_empty() || name == CALL_TOOL {
            continue;
        }
        call.arguments = match wrapped.remove("arguments") {
            // A model that encoded the arguments as a string: the loop parses it.
            Some(Value::String(text)) => text,
            Some(value) => quiver_engine::canonical::to_string(&value),
            None => quiver_engine::canonical::to_string(&Value::Object(Map::new())),
        };
        call.name = name;
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
