//! Plain chat and streaming (no tools), and the rows read off their answers:
//! usage reported, cached-token fields.

use serde_json::Value;

use super::client::{Reply, one_line};
use super::requests::{self, assemble, parse, render, usage_objects};
use super::{Check, Probe, Status};
use crate::message::{FinishReason, ModelResponse};
use crate::openai::ToolTurnContent;
use crate::provider::Wire;

/// What a streamed request came back as.
pub(super) enum Streamed {
    /// A stream, assembled; `openings`: the tool-call openings it carried
    /// (a block or delta with an id), more than the calls when a server
    /// repeats them per fragment.
    Stream { events: usize, openings: usize, response: ModelResponse },
    /// One JSON body instead (quiver reads it as an answer).
    Json(ModelResponse),
    /// Could not be used: the detail, and whether the wire should stop
    /// streaming such requests.
    Failed { detail: String, stop: bool },
}

pub(super) fn describe(response: &ModelResponse) -> String {
    let finish = match &response.finish_reason {
        FinishReason::Stop => "stop".to_string(),
        FinishReason::ToolCalls => "tool calls".to_string(),
        FinishReason::Length => "length".to_string(),
        FinishReason::ContentFilter => "content filter".to_string(),
        FinishReason::Other(other) => other.clone(),
    };
    if let Some(call) = response.tool_calls.first() {
        return format!("a call of {} (finish: {finish})", call.name);
    }
    format!("answered \"{}\" (finish: {finish})", one_line(&response.text, 40))
}

/// Reads a streamed request's reply; records its usage as `usage_streamed`.
pub(super) fn read_streamed(p: &mut Probe<'_>, reply: &Reply) -> Streamed {
    let wire = p.target.wire;
    if !reply.ok() {
        let said = reply.said();
        return Streamed::Failed { detail: reply.refusal(), stop: said.no_streaming };
    }
    if !reply.is_sse()
        && let Some(json) = reply.json()
    {
        p.usage_seen.extend(usage_objects(wire, std::slice::from_ref(&json)));
        return match parse(wire, &json) {
            Ok(response) => Streamed::Json(response),
            Err(e) => Streamed::Failed { detail: e, stop: false },
        };
    }
    let data = reply.sse_data();
    if data.is_empty() {
        return Streamed::Failed { detail: format!("HTTP {} with an empty stream", reply.status), stop: true };
    }
    let json: Vec<Value> = data.iter().filter_map(|d| serde_json::from_str(d).ok()).collect();
    let usage = usage_objects(wire, &json);
    p.usage_streamed = Some(p.usage_streamed.unwrap_or(false) || !usage.is_empty());
    p.usage_seen.extend(usage);
    let openings = json.iter().map(|event| call_openings(wire, event)).sum();
    match assemble(wire, &data) {
        Ok(response) => Streamed::Stream { events: data.len(), openings, response },
        Err(e) => Streamed::Failed { detail: format!("the stream broke: {}", one_line(&e, 160)), stop: true },
    }
}

/// Tool-call openings in one streamed event: a `tool_use` block start
/// (Anthropic), a tool-call delta with an id (OpenAI).
fn call_openings(wire: Wire, event: &Value) -> usize {
    match wire {
        Wire::Anthropic => usize::from(
            event.get("type").and_then(Value::as_str) == Some("content_block_start")
                && event.pointer("/content_block/type").and_then(Value::as_str) == Some("tool_use"),
        ),
        Wire::OpenAi | Wire::Responses => event
            .pointer("/choices/0/delta/tool_calls")
            .and_then(Value::as_array)
            .map_or(0, |calls| calls.iter().filter(|c| c.get("id").is_some_and(|id| !id.is_null())).count()),
    }
}

pub(super) async fn plain(p: &mut Probe<'_>) {
    if p.blocked(Check::PlainChat) {
        return;
    }
    let body = render(p.target, &requests::plain(p.target), false, ToolTurnContent::default());
    let path = p.client.chat_path();
    let reply = match p.client.post(path, &body).await {
        Ok(reply) => reply,
        Err(e) => return p.set(Check::PlainChat, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None),
    };
    p.chat_status = Some(reply.status);
    if !reply.ok() {
        return p.set(Check::PlainChat, Status::No, reply.refusal(), Some(reply.elapsed));
    }
    let Some(json) = reply.json() else {
        return p.set(Check::PlainChat, Status::No, "the answer is not JSON", Some(reply.elapsed));
    };
    let usage = usage_objects(p.target.wire, std::slice::from_ref(&json));
    p.usage_plain = Some(!usage.is_empty());
    p.usage_seen.extend(usage);
    match parse(p.target.wire, &json) {
        Ok(response) => p.set(Check::PlainChat, Status::Ok, describe(&response), Some(reply.elapsed)),
        Err(e) => p.set(Check::PlainChat, Status::No, one_line(&e, 200), Some(reply.elapsed)),
    }
}

pub(super) async fn streaming(p: &mut Probe<'_>) {
    if p.blocked(Check::Streaming) {
        return;
    }
    let body = render(p.target, &requests::plain(p.target), true, ToolTurnContent::default());
    let path = p.client.chat_path();
    let reply = match p.client.post(path, &body).await {
        Ok(reply) => reply,
        Err(e) => return p.set(Check::Streaming, Status::No, format!("POST {path}: {}", one_line(&e, 200)), None),
    };
    let (status, detail) = match read_streamed(p, &reply) {
        Streamed::Stream { events, response, .. } => (Status::Ok, format!("{events} events, {}", describe(&response))),
        Streamed::Json(response) => {
            (Status::No, format!("one JSON body instead of a stream (quiver reads it): {}", describe(&response)))
        }
        Streamed::Failed { detail, stop } => {
            if stop {
                p.learned.stream = Some(false);
            }
            (Status::No, detail)
        }
    };
    p.set(Check::Streaming, status, detail, Some(reply.elapsed));
}

/// The names of the cached-token fields a wire's usage may carry.
fn cache_fields(wire: Wire) -> &'static [&'static str] {
    match wire {
        Wire::OpenAi | Wire::Responses => &["/prompt_tokens_details/cached_tokens", "/prompt_cache_hit_tokens"],
        Wire::Anthropic => &["/cache_read_input_tokens", "/cache_creation_input_tokens"],
    }
}

/// Usage reported and cached-token fields, from every answer so far.
pub(super) fn usage_rows(p: &mut Probe<'_>) {
    let (plain, streamed) = (p.usage_plain, p.usage_streamed);
    let unknown = "quiver records the figures as unknown";
    let (status, detail) = match (plain, streamed) {
        (None, None) => (Status::NotApplicable, "no answer to read it from".to_string()),
        (Some(true), Some(true)) | (Some(true), None) | (None, Some(true)) => {
            (Status::Ok, "in every answer".to_string())
        }
        (Some(true), Some(false)) => (Status::No, format!("only when not streaming ({unknown} when streamed)")),
        (Some(false), Some(true)) => (Status::No, format!("only when streaming ({unknown} otherwise)")),
        _ => (Status::No, format!("in no answer ({unknown})")),
    };
    if p.blocked.is_some() && plain.is_none() && streamed.is_none() {
        p.blocked(Check::UsageReported);
    } else {
        p.set(Check::UsageReported, status, detail, None);
    }
    let fields = cache_fields(p.target.wire);
    let found: Vec<String> = fields
        .iter()
        .filter(|f| p.usage_seen.iter().any(|u| u.pointer(f).is_some_and(|v| !v.is_null())))
        .map(|f| format!("usage.{}", f.trim_start_matches('/').replace('/', ".")))
        .collect();
    let (status, detail) = if p.usage_seen.is_empty() {
        (Status::NotApplicable, "no usage to read them from".to_string())
    } else if found.is_empty() {
        (Status::No, "usage has none (cache hits are not reported)".to_string())
    } else {
        (Status::Ok, found.join(", "))
    };
    p.set(Check::CachedTokenFields, status, detail, None);
}
