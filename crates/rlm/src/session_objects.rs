//! `session://active/...`: the running agent session as loadable objects (its
//! system prompt, transcript, latest user message, single messages). Built
//! from the session's own transcript file; thinking and large tool results are
//! kept as metadata (sizes, a preview), never pasted raw.

use quiver_agent::Message;
use quiver_agent::exec::SYSTEM_PROMPT;
use quiver_agent::exec::resume::history;
use quiver_engine::transcript::Transcript;
use quiver_engine::{ToolContext, ToolError};
use serde_json::{Value, json};

pub const PREFIX: &str = "session://active/";
/// Tool results longer than this are metadata-only in a transcript object.
pub const LARGE_RESULT_CHARS: usize = 2000;
const PREVIEW_CHARS: usize = 120;
/// Per-message cards listed (the newest).
const MESSAGE_CARDS: usize = 40;

/// A loaded object: text, or JSON for structured ones.
pub enum Loaded {
    Text(String),
    Json(Value),
}

fn messages(ctx: &ToolContext) -> Result<Vec<Message>, ToolError> {
    let Some(writer) = &ctx.transcript else {
        return Err(ToolError::model(
            "this session records no transcript, so it has no session objects (quiver exec records one)",
        ));
    };
    let transcript = Transcript::read(writer.path())
        .map_err(|e| ToolError::model(format!("cannot read this session's transcript: {e:#}")))?;
    Ok(history(&transcript))
}

pub fn preview(text: &str) -> String {
    let mut out: String = text.chars().take(PREVIEW_CHARS).collect();
    if text.chars().count() > PREVIEW_CHARS {
        out.push('…');
    }
    out
}

fn role(m: &Message) -> &'static str {
    match m {
        Message::System { .. } => "system",
        Message::User { .. } => "user",
        Message::Assistant { .. } => "assistant",
        Message::Tool { .. } => "tool",
    }
}

fn text_of(m: &Message) -> &str {
    match m {
        Message::System { text } | Message::User { text } | Message::Assistant { text, .. } => text,
        Message::Tool { content, .. } => content,
    }
}

/// One message as a transcript entry: text kept unless it is a large tool
/// result; thinking reduced to its size.
fn entry(index: usize, m: &Message, full: bool) -> Value {
    let text = text_of(m);
    let chars = text.chars().count();
    let mut e = json!({"index": index, "role": role(m), "chars": chars});
    let Value::Object(map) = &mut e else { return e };
    match m {
        Message::Tool { call_id, is_error, .. } => {
            map.insert("call_id".into(), json!(call_id));
            map.insert("is_error".into(), json!(is_error));
            if full || chars <= LARGE_RESULT_CHARS {
                map.insert("text".into(), json!(text));
            } else {
                map.insert("large_result".into(), json!(true));
                map.insert("preview".into(), json!(preview(text)));
            }
        }
        Message::Assistant { reasoning, tool_calls, .. } => {
            map.insert("text".into(), json!(text));
            if let Some(r) = reasoning {
                map.insert("thinking".into(), json!({"chars": r.chars().count()}));
            }
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| json!({"id": c.id, "name": c.name, "arguments_chars": c.arguments.chars().count()}))
                    .collect();
                map.insert("tool_calls".into(), json!(calls));
            }
        }
        _ => {
            map.insert("text".into(), json!(text));
        }
    }
    e
}

/// The compact cards `rlm_session_objects` returns.
pub fn cards(ctx: &ToolContext) -> Result<Value, ToolError> {
    let messages = messages(ctx)?;
    let mut cards = vec![
        json!({"ref": format!("{PREFIX}system_prompt"), "kind": "text", "chars": SYSTEM_PROMPT.chars().count(), "preview": preview(SYSTEM_PROMPT)}),
        json!({"ref": format!("{PREFIX}transcript"), "kind": "json", "messages": messages.len(),
               "chars": messages.iter().map(|m| text_of(m).chars().count()).sum::<usize>()}),
    ];
    if let Some((i, m)) = messages.iter().enumerate().rev().find(|(_, m)| matches!(m, Message::User { .. })) {
        cards.push(json!({"ref": format!("{PREFIX}latest_user_message"), "kind": "text", "index": i,
                          "chars": text_of(m).chars().count(), "preview": preview(text_of(m))}));
    }
    let skip = messages.len().saturating_sub(MESSAGE_CARDS);
    for (i, m) in messages.iter().enumerate().skip(skip) {
        cards.push(json!({"ref": format!("{PREFIX}messages/{i}"), "kind": "json", "role": role(m),
                          "chars": text_of(m).chars().count(), "preview": preview(text_of(m))}));
    }
    Ok(json!({"objects": cards, "messages": messages.len(), "listed_messages_from": skip}))
}

/// Loads one object by its ref.
pub fn load(ctx: &ToolContext, reference: &str) -> Result<Loaded, ToolError> {
    let Some(rest) = reference.trim().strip_prefix(PREFIX) else {
        return Err(ToolError::model(format!(
            "unknown session object `{reference}`: refs start with {PREFIX} (list them with rlm_session_objects)"
        )));
    };
    if rest == "system_prompt" {
        return Ok(Loaded::Text(SYSTEM_PROMPT.to_string()));
    }
    let messages = messages(ctx)?;
    match rest {
        "transcript" => {
            Ok(Loaded::Json(Value::Array(messages.iter().enumerate().map(|(i, m)| entry(i, m, false)).collect())))
        }
        "latest_user_message" => messages
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User { .. }))
            .map(|m| Loaded::Text(text_of(m).to_string()))
            .ok_or_else(|| ToolError::model("this session has no user message yet")),
        _ => {
            let index = rest.strip_prefix("messages/").and_then(|n| n.parse::<usize>().ok()).ok_or_else(|| {
                ToolError::model(format!(
                    "unknown session object `{reference}`: use system_prompt, transcript, latest_user_message or messages/N"
                ))
            })?;
            let m = messages.get(index).ok_or_else(|| {
                ToolError::model(format!("`{reference}`: this session has {} messages (0-based)", messages.len()))
            })?;
            Ok(Loaded::Json(entry(index, m, true)))
        }
    }
}
