//! What an error answer says, beyond its status: whether the server refused
//! this exact body (so sending the same bytes again cannot help), which field
//! it named, and whether it said it cannot stream.
//!
//! Servers say "your body is invalid" in several dialects, and not always with
//! a 4xx: llama-cpp-python wraps any exception, pydantic validation errors
//! included, as HTTP 500 `{"error": {"message": "1 validation error for …",
//! "type": "internal_server_error"}}`; FastAPI answers 422 with
//! `{"detail": [{"loc": [...], "msg": ...}]}`; OpenAI answers 400 with
//! `error.param`; llama.cpp's own server says "Expected 'content' …"; a chat
//! template that reads a key the message lacks fails in Jinja, which
//! llama-cpp-python also wraps as a 500 (`'dict object' has no attribute
//! 'content'`, seen with 0.3.36's `chatml-function-calling` when a tool-only
//! assistant turn has no `content`).

use serde_json::Value;

/// An error body, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorBody {
    /// The server's own explanation (or the start of the body).
    pub message: String,
    /// The request field the server named, when it named one.
    pub field: Option<String>,
    /// The server refused this body: resending it unchanged cannot succeed.
    pub invalid_body: bool,
    /// The server says it cannot stream (with tools, or at all).
    pub no_streaming: bool,
}

impl ErrorBody {
    pub fn parse(text: &str) -> Self {
        let parsed: Option<Value> = serde_json::from_str(text).ok();
        let mut body = ErrorBody::default();
        let mut kind = None;
        match &parsed {
            Some(v) => {
                if let Some(detail) = v.get("detail").and_then(Value::as_array).and_then(|d| d.first()) {
                    // FastAPI's request validation (422).
                    body.invalid_body = true;
                    body.field = detail.get("loc").and_then(Value::as_array).map(|loc| location(loc));
                    body.message = detail.get("msg").and_then(Value::as_str).unwrap_or("invalid request").to_string();
                } else {
                    let message = v
                        .pointer("/error/message")
                        .or_else(|| v.get("message"))
                        .or_else(|| v.get("error"))
                        .or_else(|| v.get("detail"))
                        .and_then(Value::as_str);
                    body.message = message.map_or_else(|| shortened(text), str::to_string);
                    body.field = v.pointer("/error/param").and_then(Value::as_str).map(str::to_string);
                    kind = v.pointer("/error/type").or_else(|| v.get("type")).and_then(Value::as_str);
                }
            }
            None => body.message = shortened(text),
        }
        let lower = body.message.to_ascii_lowercase();
        let pydantic = lower.contains("validation error");
        if pydantic && body.field.is_none() {
            // "1 validation error for Model\nmessages.2.content\n  Input should be …"
            body.field = body
                .message
                .lines()
                .skip(1)
                .find(|l| !l.starts_with(' ') && !l.trim().is_empty())
                .map(|l| l.trim().to_string());
        }
        let phrased = ["expected '", "missing '", "is a required property", "invalid '", "field required"]
            .iter()
            .any(|p| lower.contains(p));
        if body.field.is_none() && phrased {
            body.field = quoted(&body.message);
        }
        // Jinja's UndefinedError: "'dict object' has no attribute 'content'", "'content' is undefined".
        let attribute = after_quote(&body.message, "has no attribute '");
        let template = attribute.is_some() || lower.contains("' is undefined");
        if body.field.is_none() && template {
            body.field = attribute.or_else(|| quoted(&body.message));
        }
        // The status alone does not decide: a 4xx other than 408/429 is never
        // retried anyway, and a 5xx is a rejection only when the body says so.
        body.invalid_body |=
            pydantic || phrased || template || matches!(kind, Some("invalid_request_error") | Some("BadRequestError"));
        body.no_streaming = mentions_stream(&lower)
            && ["not supported", "unsupported", "not implemented", "does not support", "cannot", "can't"]
                .iter()
                .any(|p| lower.contains(p));
        body
    }

    /// Whether a retry of the same bytes could succeed (429, 408, overload,
    /// a 5xx that is not about this body).
    pub fn retryable(&self, status: u16) -> bool {
        let transient = status == 429 || status == 408 || status >= 500;
        transient && !self.invalid_body && !self.no_streaming
    }
}

/// "stream" as a word of its own or its start ("streaming", "stream=True"),
/// not inside "upstream"/"downstream" (proxies' transient failures).
fn mentions_stream(lower: &str) -> bool {
    lower.match_indices("stream").any(|(i, _)| !lower[..i].ends_with(|c: char| c.is_ascii_alphabetic()))
}

/// A FastAPI `loc` (`["body", "messages", 2, "content"]`) as a dotted path.
fn location(loc: &[Value]) -> String {
    let parts: Vec<String> = loc
        .iter()
        .filter(|p| p.as_str() != Some("body"))
        .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_string))
        .collect();
    parts.join(".")
}

/// The `'name'` right after `prefix` in a message.
fn after_quote(message: &str, prefix: &str) -> Option<String> {
    let start = message.find(prefix)? + prefix.len();
    let len = message[start..].find('\'')?;
    let name = &message[start..start + len];
    (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
}

/// The first `'quoted'` name in a message.
fn quoted(message: &str) -> Option<String> {
    let start = message.find('\'')? + 1;
    let len = message[start..].find('\'')?;
    let name = &message[start..start + len];
    (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
}

fn shortened(text: &str) -> String {
    if text.trim().is_empty() { "(empty body)".to_string() } else { text.chars().take(300).collect() }
}

#[cfg(test)]
#[path = "rejection_tests.rs"]
mod tests;
