//! Tool calling: a call forced with `tool_choice` naming the function, its
//! result sent back (the shape of the tool-only assistant turn the server
//! accepts), and a streamed request with tools and no `tool_choice` (what the
//! agent sends every turn).

use super::chat::{Streamed, describe, read_streamed};
use super::client::one_line;
use super::requests::{self, TOOL, force, parse, render, stand_in_call, usage_objects};
use super::{Check, Probe, Status};
use crate::calls::complete_json;
use crate::message::ToolCall;
use crate::openai::ToolTurnContent;
use crate::provider::Wire;

pub(super) async fn forced_call(p: &mut Probe<'_>) {
    if p.blocked(Check::ForcedToolCall) {
        return;
    }
    let wire = p.target.wire;
    let mut body = render(p.target, &requests::with_tool(p.target), false, ToolTurnContent::default());
    force(wire, &mut body);
    let path = p.client.chat_path();
    let reply = match p.client.post(path, &body).await {
        Ok(reply) => reply,
        Err(e) => return p.set(Check::ForcedToolCall, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None),
    };
    if !reply.ok() {
        return p.set(Check::ForcedToolCall, Status::No, reply.refusal(), Some(reply.elapsed));
    }
    let Some(json) = reply.json() else {
        return p.set(Check::ForcedToolCall, Status::No, "the answer is not JSON", Some(reply.elapsed));
    };
    p.usage_seen.extend(usage_objects(wire, std::slice::from_ref(&json)));
    let response = match parse(wire, &json) {
        Ok(response) => response,
        Err(e) => return p.set(Check::ForcedToolCall, Status::No, one_line(&e, 200), Some(reply.elapsed)),
    };
    let Some(call) = response.tool_calls.iter().find(|c| c.name == TOOL).cloned() else {
        let detail = match response.tool_calls.first() {
            Some(other) => format!("called `{}` instead", one_line(&other.name, 40)),
            None => format!("{} instead of a call (`tool_choice` ignored)", describe(&response)),
        };
        return p.set(Check::ForcedToolCall, Status::No, detail, Some(reply.elapsed));
    };
    let raw_id = match wire {
        Wire::OpenAi | Wire::Responses => {
            json.pointer("/choices/0/message/tool_calls/0/id").and_then(|v| v.as_str()).is_some()
        }
        Wire::Anthropic => true,
    };
    // The server honoured `tool_choice`; whole arguments within the probe's
    // few tokens are the model's part (a tiny model may ramble inside a string).
    let mut detail = if complete_json(&call.arguments) {
        format!("{TOOL} called with JSON arguments")
    } else {
        format!(
            "{TOOL} called; its arguments are not JSON within {} tokens: {}",
            requests::TOOL_TOKENS,
            one_line(&call.arguments, 48)
        )
    };
    if !raw_id {
        detail.push_str(" (no call id: quiver assigns one)");
    }
    p.set(Check::ForcedToolCall, Status::Ok, detail, Some(reply.elapsed));
    // The call goes back as sent; unparseable arguments as the stand-in's.
    p.forced_call =
        Some(if complete_json(&call.arguments) { call } else { ToolCall { id: call.id, ..stand_in_call() } });
}

pub(super) async fn result_back(p: &mut Probe<'_>) {
    if p.blocked(Check::ToolResultBack) {
        return;
    }
    let stand_in = p.forced_call.is_none();
    let call = p.forced_call.clone().unwrap_or_else(stand_in_call);
    let req = requests::result_back(p.target, call);
    let path = p.client.chat_path();
    let mut shape = Some(ToolTurnContent::default());
    let mut refused_before: Option<String> = None;
    while let Some(tool_turns) = shape {
        let body = render(p.target, &req, false, tool_turns);
        let reply = match p.client.post(path, &body).await {
            Ok(reply) => reply,
            Err(e) => {
                return p.set(Check::ToolResultBack, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None);
            }
        };
        if reply.ok() {
            let Some(json) = reply.json() else {
                return p.set(Check::ToolResultBack, Status::No, "the answer is not JSON", Some(reply.elapsed));
            };
            p.usage_seen.extend(usage_objects(p.target.wire, std::slice::from_ref(&json)));
            if let Err(e) = parse(p.target.wire, &json) {
                return p.set(Check::ToolResultBack, Status::No, one_line(&e, 200), Some(reply.elapsed));
            }
            let mut detail = match (p.target.wire, tool_turns, &refused_before) {
                (Wire::Anthropic, _, _) => "accepted".to_string(),
                (_, ToolTurnContent::Omit, _) => "accepted (tool-only assistant turn without `content`)".to_string(),
                (_, other, before) => {
                    p.learned.tool_turn_content = Some(other);
                    format!("accepted with {} (without: {})", shape_name(other), before.as_deref().unwrap_or("refused"))
                }
            };
            if stand_in {
                detail.push_str("; a stand-in call was sent, the forced call did not come");
            }
            return p.set(Check::ToolResultBack, Status::Ok, detail, Some(reply.elapsed));
        }
        let said = reply.said();
        let names_content = said.field.as_deref().unwrap_or_default().rsplit(['.', '[', ']']).find(|s| !s.is_empty())
            == Some("content");
        if p.target.wire == Wire::OpenAi && said.invalid_body && names_content {
            refused_before.get_or_insert_with(|| reply.refusal());
            shape = tool_turns.next();
            continue;
        }
        return p.set(Check::ToolResultBack, Status::No, reply.refusal(), Some(reply.elapsed));
    }
    let detail = format!("refused with `content` omitted, empty and null: {}", refused_before.unwrap_or_default());
    p.set(Check::ToolResultBack, Status::No, detail, None);
}

fn shape_name(shape: ToolTurnContent) -> &'static str {
    match shape {
        ToolTurnContent::Omit => "no `content`",
        ToolTurnContent::Empty => "`content: \"\"`",
        ToolTurnContent::Null => "`content: null`",
    }
}

pub(super) async fn streaming_with_tools(p: &mut Probe<'_>) {
    if p.blocked(Check::StreamingWithTools) {
        return;
    }
    let body = render(p.target, &requests::with_tool(p.target), true, ToolTurnContent::default());
    let path = p.client.chat_path();
    let reply = match p.client.post(path, &body).await {
        Ok(reply) => reply,
        Err(e) => {
            return p.set(Check::StreamingWithTools, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None);
        }
    };
    let (status, detail) = match read_streamed(p, &reply) {
        Streamed::Stream { events, openings, response } => {
            let broken = response.tool_calls.iter().find(|c| !complete_json(&c.arguments));
            let calls = response.tool_calls.len();
            let merged = if openings > calls && calls > 0 {
                format!("; the call was opened {openings} times with its id (quiver merges the fragments)")
            } else {
                String::new()
            };
            match broken {
                Some(call) => (
                    Status::No,
                    format!(
                        "{events} events; {}'s arguments are not JSON: {}",
                        call.name,
                        one_line(&call.arguments, 60)
                    ),
                ),
                None => (Status::Ok, format!("{events} events, {}{merged}", describe(&response))),
            }
        }
        Streamed::Json(response) => {
            (Status::No, format!("one JSON body instead of a stream (quiver reads it): {}", describe(&response)))
        }
        Streamed::Failed { detail, stop } => {
            if stop {
                p.learned.stream_with_tools = Some(false);
            }
            (Status::No, detail)
        }
    };
    p.set(Check::StreamingWithTools, status, detail, Some(reply.elapsed));
}
