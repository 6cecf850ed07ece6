//! The probe's requests, rendered by the wires' own body builders: a check
//! passes only if what `quiver exec` would send is accepted, byte for byte
//! the same shape (a `tool_choice` is the one thing added, where a check
//! forces a call).

use serde_json::{Value, json};

use super::Target;
use crate::anthropic::{MessagesStreamAssembler, request_body_streamed};
use crate::http::StreamAssembler;
use crate::message::{Message, ModelRequest, ModelResponse, StreamEvent, ToolCall};
use crate::openai::{ChatStreamAssembler, OpenAiDialect, ToolTurnContent, request_body_with};
use crate::provider::Wire;

/// The probe's one tool.
pub(crate) const TOOL: &str = "probe_echo";

/// What the probe asks the tool to be called with, and what it answers.
pub(crate) const WORD: &str = "ping";

/// The `max_tokens` of requests that may call the tool.
pub(crate) const TOOL_TOKENS: u32 = 64;

/// A 1×1 PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn tools(wire: Wire) -> Value {
    let parameters = json!({
        "type": "object",
        "properties": {"word": {"type": "string", "description": "The word to echo."}},
        "required": ["word"],
    });
    let description = "Echo a word back.";
    match wire {
        Wire::OpenAi | Wire::Responses => json!([{"type": "function", "function": {
            "name": TOOL, "description": description, "parameters": parameters}}]),
        Wire::Anthropic => json!([{"name": TOOL, "description": description, "input_schema": parameters}]),
    }
}

fn request(target: &Target, messages: Vec<Message>, with_tools: bool, max_tokens: u32) -> ModelRequest {
    let mut req = ModelRequest::new(target.model.clone());
    req.messages = messages;
    if with_tools {
        req.tools = tools(target.wire);
        req.head_len = 1;
    }
    req.max_output_tokens = Some(max_tokens);
    req
}

/// A short question, no tools.
pub(crate) fn plain(target: &Target) -> ModelRequest {
    request(target, vec![Message::user("Reply with one word: hello.")], false, 16)
}

/// A request the tool answers (the agent's shape: tools, no `tool_choice`).
pub(crate) fn with_tool(target: &Target) -> ModelRequest {
    let ask = format!("Call the {TOOL} tool with the word \"{WORD}\".");
    request(target, vec![Message::user(ask)], true, TOOL_TOKENS)
}

/// A question with the probe's tool beside it (not asked to call it).
pub(crate) fn with_tool_asking(target: &Target, ask: &str, max_tokens: u32) -> ModelRequest {
    request(target, vec![Message::user(ask)], true, max_tokens)
}

/// The conversation after `call`: its result follows, for the model to answer.
pub(crate) fn result_back(target: &Target, call: ToolCall) -> ModelRequest {
    let ask = format!("Call the {TOOL} tool with the word \"{WORD}\".");
    let id = call.id.clone();
    let assistant =
        Message::Assistant { text: String::new(), reasoning: None, reasoning_signature: None, tool_calls: vec![call] };
    let messages = vec![Message::user(ask), assistant, Message::tool_result(id, WORD, false)];
    request(target, messages, true, 16)
}

/// A call to stand in for the model's when the forced call did not come.
pub(crate) fn stand_in_call() -> ToolCall {
    ToolCall { id: "call_probe_1".into(), name: TOOL.into(), arguments: format!(r#"{{"word":"{WORD}"}}"#) }
}

/// `req` as the wire renders it.
pub(crate) fn render(target: &Target, req: &ModelRequest, stream: bool, tool_turns: ToolTurnContent) -> Value {
    match target.wire {
        Wire::OpenAi | Wire::Responses => {
            let dialect = OpenAiDialect {
                max_completion_tokens: target.max_completion_tokens,
                vision: Some(false),
                tool_choice: target.tool_choice.clone(),
                ..OpenAiDialect::default()
            };
            request_body_with(req, &dialect, tool_turns, stream)
        }
        Wire::Anthropic => {
            let mut body = request_body_streamed(req, Some(false), stream);
            if let Some(choice) = target.tool_choice.as_deref().filter(|_| !req.tool_list().is_empty()) {
                body["tool_choice"] = crate::anthropic::anthropic_tool_choice(choice);
            }
            body
        }
    }
}

/// `tool_choice` naming the probe's tool.
pub(crate) fn force(wire: Wire, body: &mut Value) {
    body["tool_choice"] = match wire {
        Wire::OpenAi | Wire::Responses => json!({"type": "function", "function": {"name": TOOL}}),
        Wire::Anthropic => json!({"type": "tool", "name": TOOL}),
    };
}

/// A user message with an image in it (not streamed).
pub(crate) fn image(target: &Target) -> Value {
    let mut body = render(target, &plain(target), false, ToolTurnContent::default());
    let ask = json!({"type": "text", "text": "What colour is this image? One word."});
    body["messages"] = match target.wire {
        Wire::OpenAi | Wire::Responses => json!([{"role": "user", "content": [
            ask, {"type": "image_url", "image_url": {"url": crate::vision::data_url("image/png", PIXEL_PNG)}}]}]),
        Wire::Anthropic => json!([{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL_PNG}}, ask]}]),
    };
    body
}

/// A fill-in-the-middle request (OpenAI-compatible `/completions` shape).
pub(crate) fn fim(target: &Target) -> Value {
    json!({
        "model": target.model,
        "prompt": "def add(a, b):\n    return ",
        "suffix": "\n\nprint(add(1, 2))\n",
        "max_tokens": 8,
        "stream": false,
    })
}

/// A non-streamed answer, read by the wire's parser.
pub(crate) fn parse(wire: Wire, value: &Value) -> Result<ModelResponse, String> {
    match wire {
        Wire::OpenAi | Wire::Responses => crate::openai::parse_response(value),
        Wire::Anthropic => crate::anthropic::parse_response(value),
    }
}

/// A streamed answer's events, assembled by the wire's assembler.
pub(crate) fn assemble(wire: Wire, data: &[String]) -> Result<ModelResponse, String> {
    fn run<A: StreamAssembler>(data: &[String]) -> Result<ModelResponse, String> {
        let mut assembler = A::default();
        let mut ignore = |_: StreamEvent| {};
        for d in data {
            if assembler.push(d, &mut ignore)? {
                break;
            }
        }
        assembler.finish()
    }
    match wire {
        Wire::OpenAi | Wire::Responses => run::<ChatStreamAssembler>(data),
        Wire::Anthropic => run::<MessagesStreamAssembler>(data),
    }
}

/// The raw `usage` objects an answer carried (a streamed one may carry
/// several: Anthropic's `message_start` and `message_delta`).
pub(crate) fn usage_objects(wire: Wire, json: &[Value]) -> Vec<Value> {
    let mut found = Vec::new();
    for value in json {
        let candidates = match wire {
            Wire::OpenAi | Wire::Responses => vec![value.get("usage")],
            Wire::Anthropic => vec![value.get("usage"), value.pointer("/message/usage")],
        };
        found.extend(candidates.into_iter().flatten().filter(|u| u.is_object()).cloned());
    }
    found
}
