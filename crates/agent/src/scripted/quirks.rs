//! Behaviours of real servers the scripted one can switch on, each imitating
//! what the named server does on the wire (observed against llama-cpp-python
//! 0.3.x's server and LiteLLM 1.x's proxy; `crates/cli/tests/real_servers`
//! runs against the real ones):
//!
//! - [`Quirk::LlamaNullContent`]: llama-cpp-python validates an assistant
//!   message's `content` as a string and wraps the failure as HTTP 500
//!   `{"error": {"message": "<pydantic error>", "type": "internal_server_error"}}`.
//! - [`Quirk::TemplateNeedsContent`]: llama-cpp-python 0.3.36's
//!   `chatml-function-calling` template reads `message.content` of every
//!   assistant turn: one without the key fails in Jinja, wrapped as HTTP 500
//!   `{"error": {"message": "'dict object' has no attribute 'content'", "type":
//!   "internal_server_error"}}` (verified against the real server, see
//!   `crates/cli/tests/real_servers`); `content: ""` is accepted.
//! - [`Quirk::EmptyStreamWithTools`]: llama-cpp-python answers `stream: true`
//!   with tools and no `tool_choice` with 200 and an empty body.
//! - [`Quirk::NoUsage`]: no usage anywhere (no usage chunk, no `usage` key).
//! - [`Quirk::RepeatCallHeader`], [`Quirk::NoCallIndex`]: tool-call deltas
//!   that repeat `id`, `type` and `function.name` on every chunk, or carry no
//!   `index`.
//! - [`Quirk::LegacyFunctionCall`]: function calling before `tools`: the first
//!   call as `function_call` (no id), finish reason `function_call`.
//! - [`Quirk::SplitToolUseBlocks`]: LiteLLM's Anthropic adapter in front of
//!   such a server: every argument fragment is a `content_block_start` of its
//!   own, repeating the `tool_use` id and name, then its `input_json_delta`.
//! - [`Quirk::RequireContent`]: a strict server that wants `content` on every
//!   message (400 "'content' is a required property", OpenAI's 2023 wording).
//! - [`Quirk::NoStreamWithTools`]: a server that says it cannot stream with tools.
//! - [`Quirk::NoDeferLoading`]: an Anthropic-compatible proxy whose schema
//!   knows no `defer_loading` (a strict validator's 400 "Extra inputs are not
//!   permitted"; not a capture from a named server).
//! - [`Quirk::DeferredAsPrompt`]: LiteLLM's proxy (1.108.7) on the Messages
//!   wire in front of a server that is not Anthropic's: it accepts
//!   `defer_loading` and hands every deferred definition to its backend as an
//!   ordinary tool, so the usage it reports counts them as prompt (and its
//!   prefix cache keys on them).
//! - [`Quirk::NoToolSearch`]: a Responses server without tool search (a
//!   model before gpt-5.4, or a Responses-compatible proxy): a `tool_search`
//!   tool is refused with 400, param `tools`, in the words OpenAI uses for a
//!   hosted tool a model lacks ("Tool '…' is not supported with …"; not a
//!   capture of this tool's refusal).

use std::borrow::Cow;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::ScriptedTurn;
use crate::message::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quirk {
    LlamaNullContent,
    TemplateNeedsContent,
    EmptyStreamWithTools,
    NoUsage,
    RepeatCallHeader,
    NoCallIndex,
    LegacyFunctionCall,
    SplitToolUseBlocks,
    RequireContent,
    NoStreamWithTools,
    NoDeferLoading,
    DeferredAsPrompt,
    NoToolSearch,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Quirks(Vec<Quirk>);

impl Quirks {
    pub fn insert(&mut self, quirk: Quirk) {
        if !self.has(quirk) {
            self.0.push(quirk);
        }
    }

    pub fn has(&self, quirk: Quirk) -> bool {
        self.0.contains(&quirk)
    }

    /// The request as the server's prompt holds it: under
    /// [`Quirk::DeferredAsPrompt`], deferred tools as ordinary ones.
    pub fn prompt_request<'a>(&self, request: &'a Value) -> Cow<'a, Value> {
        if !self.has(Quirk::DeferredAsPrompt) {
            return Cow::Borrowed(request);
        }
        let mut request = request.clone();
        if let Some(tools) = request.get_mut("tools").and_then(Value::as_array_mut) {
            for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                tool.remove("defer_loading");
            }
        }
        Cow::Owned(request)
    }

    /// The answer a quirky server gives instead of running the model, if any.
    pub fn refusal(&self, chat: bool, request: &Value) -> Option<Response> {
        let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let assistants = || messages.iter().enumerate().filter(|(_, m)| m.get("role") == Some(&json!("assistant")));
        if chat
            && self.has(Quirk::LlamaNullContent)
            && let Some((i, _)) = assistants().find(|(_, m)| m.get("content") == Some(&Value::Null))
        {
            let message = format!(
                "1 validation error for CreateChatCompletionRequest\nmessages.{i}.content\n  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.11/v/string_type"
            );
            let body =
                json!({"error": {"message": message, "type": "internal_server_error", "param": null, "code": null}});
            return Some(json_error(StatusCode::INTERNAL_SERVER_ERROR, &body));
        }
        if chat && self.has(Quirk::TemplateNeedsContent) && assistants().any(|(_, m)| m.get("content").is_none()) {
            let body = json!({"error": {"message": "'dict object' has no attribute 'content'", "type": "internal_server_error", "param": null, "code": null}});
            return Some(json_error(StatusCode::INTERNAL_SERVER_ERROR, &body));
        }
        if chat
            && self.has(Quirk::RequireContent)
            && let Some((i, _)) = assistants().find(|(_, m)| m.get("content").is_none())
        {
            let message = format!("'content' is a required property - 'messages.{i}'");
            let body =
                json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}});
            return Some(json_error(StatusCode::BAD_REQUEST, &body));
        }
        if !chat
            && self.has(Quirk::NoDeferLoading)
            && let Some(i) = request
                .get("tools")
                .and_then(Value::as_array)
                .and_then(|t| t.iter().position(|t| t.get("defer_loading").is_some()))
        {
            let message = format!("tools.{i}.defer_loading: Extra inputs are not permitted");
            let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
            return Some(json_error(StatusCode::BAD_REQUEST, &body));
        }
        if !chat
            && self.has(Quirk::NoToolSearch)
            && let Some(i) = request
                .get("tools")
                .and_then(Value::as_array)
                .and_then(|t| t.iter().position(|t| t.get("type") == Some(&json!("tool_search"))))
        {
            let model = request.get("model").and_then(Value::as_str).unwrap_or_default();
            let message = format!("Tool 'tool_search' is not supported with {model}.");
            let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": format!("tools[{i}]"), "code": null}});
            return Some(json_error(StatusCode::BAD_REQUEST, &body));
        }
        let stream = request.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let tools = request.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
        if stream && tools && self.has(Quirk::NoStreamWithTools) {
            let body = json!({"error": {"message": "Streaming is not supported with tools", "type": "invalid_request_error", "param": "stream", "code": null}});
            return Some(json_error(StatusCode::BAD_REQUEST, &body));
        }
        if stream && tools && request.get("tool_choice").is_none() && self.has(Quirk::EmptyStreamWithTools) {
            return Some(([("content-type", "text/event-stream")], "").into_response());
        }
        None
    }
}

pub(super) fn json_error(status: StatusCode, body: &Value) -> Response {
    (status, [("content-type", "application/json")], body.to_string()).into_response()
}

/// What a wire module needs to answer one request.
pub(crate) struct Answer<'a> {
    pub turn: &'a ScriptedTurn,
    /// `None` under [`Quirk::NoUsage`].
    pub usage: Option<&'a Usage>,
    pub model: &'a str,
    pub quirks: &'a Quirks,
}
