//! What a client is told when its request does not fit its method.
//!
//! rmcp reads a request whose params do not fit its method (`tools/call`
//! with `arguments` that are not an object, or no `name`) as a custom
//! request, and its default answer is "method not found" with the bare
//! method name. The client would then look for a typo in a method it spelled
//! right. Here a known method's params are read again into its own type, so
//! the answer is "invalid params" with what is wrong with them.

use rmcp::ErrorData as McpError;
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, ErrorCode, GetPromptRequestParams, InitializeRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The error for a request rmcp could not read as any method it knows.
#[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
pub(crate) fn answer(method: &str, params: Option<&Value>) -> McpError {
    let problem = match method {
        "initialize" => problem::<InitializeRequestParams>(params, true),
        "tools/call" => problem::<CallToolRequestParams>(params, true),
        "resources/read" => problem::<ReadResourceRequestParams>(params, true),
        "resources/subscribe" => problem::<SubscribeRequestParams>(params, true),
        "resources/unsubscribe" => problem::<UnsubscribeRequestParams>(params, true),
        "prompts/get" => problem::<GetPromptRequestParams>(params, true),
        "completion/complete" => problem::<CompleteRequestParams>(params, true),
        "logging/setLevel" => problem::<SetLevelRequestParams>(params, true),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            problem::<PaginatedRequestParams>(params, false)
        }
        _ => return McpError::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: `{method}`"), None),
    };
    let why = problem.unwrap_or_else(|| "they do not fit the method".to_string());
    McpError::invalid_params(format!("invalid params for `{method}`: {why}"), None)
}

/// What is wrong with `params` as a `T`, or `None` when they read as one.
fn problem<T: DeserializeOwned>(params: Option<&Value>, required: bool) -> Option<String> {
    match params {
        None if required => Some("`params` is missing".to_string()),
        None => None,
        Some(params) => serde_json::from_value::<T>(params.clone()).err().map(|e| e.to_string()),
    }
}

/// The answer to a line from the client that is no JSON-RPC message rmcp
/// reads, when JSON-RPC wants one: text that is not JSON is a parse error,
/// a batch or a request without a usable `id` an invalid request (both with
/// a `null` id, as the client's cannot be known). What reads as a response
/// or a notification gets no answer: nothing waits for one.
pub(crate) fn unreadable_line(line: &[u8]) -> Option<Vec<u8>> {
    let text = crate::lines::without_bom(line);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let (code, id, message) = match serde_json::from_slice::<Value>(text) {
        Err(e) => (ErrorCode::PARSE_ERROR, Value::Null, format!("parse error: the line is not JSON ({e})")),
        Ok(Value::Array(_)) => (
            ErrorCode::INVALID_REQUEST,
            Value::Null,
            "invalid request: batches are not part of MCP; send one message per line".to_string(),
        ),
        Ok(Value::Object(message)) => {
            let id = message.get("id");
            // No id: a notification, answered by nobody. An id with `result`
            // or `error`: a response (to a request of quiver's).
            if id.is_none() || message.contains_key("result") || message.contains_key("error") {
                return None;
            }
            match id {
                Some(id @ (Value::String(_) | Value::Number(_))) if !message.contains_key("method") => (
                    ErrorCode::INVALID_REQUEST,
                    id.clone(),
                    "invalid request: a request needs a `method` (a message with an `id` and neither `result` \
                     nor `error` is a request)"
                        .to_string(),
                ),
                Some(id @ (Value::String(_) | Value::Number(_))) => (
                    ErrorCode::INVALID_REQUEST,
                    id.clone(),
                    "invalid request: not a JSON-RPC 2.0 request (`\"jsonrpc\": \"2.0\"`, `method`, `id`)".to_string(),
                ),
                _ => (
                    ErrorCode::INVALID_REQUEST,
                    Value::Null,
                    "invalid request: `id` must be a string or a number".to_string(),
                ),
            }
        }
        Ok(_) => (ErrorCode::INVALID_REQUEST, Value::Null, "invalid request: a message is a JSON object".to_string()),
    };
    let mut out = error_json(code, id, message);
    out.push(b'\n');
    Some(out)
}

/// How much of an over-long line is searched for its `id`: the id of a
/// request is nearly always near its start (before `params`), and a search
/// of the whole line would cost as much as reading it.
const ID_SEARCH: usize = 64 * 1024;

/// The answer to a line longer than `max`, which is skipped unread: with the
/// request's `id` when its first bytes hold one before the cut, else with a
/// `null` id (JSON-RPC's answer to a request whose id cannot be read). A
/// response (`result` or `error` before the cut) gets no answer.
pub(crate) fn oversized_line(head: &[u8], max: usize) -> Option<Vec<u8>> {
    let head = crate::lines::without_bom(head);
    let head = &head[..head.len().min(ID_SEARCH)];
    let mut found = Found::default();
    // The line is cut: reading it always ends in an error, after what the
    // visitor found on the way.
    let _ = serde::de::DeserializeSeed::deserialize(&mut found, &mut serde_json::Deserializer::from_slice(head));
    if found.response {
        tracing::warn!(max, "a response over the line bound was skipped");
        return None;
    }
    let id = found.id.filter(|id| id.is_string() || id.is_number()).unwrap_or(Value::Null);
    let limit = if max.is_multiple_of(1 << 20) { format!("{} MiB", max >> 20) } else { format!("{max} bytes") };
    let message = format!(
        "invalid request: the message is longer than the {limit} a line may hold; it was skipped unread (send \
         large content by reference, e.g. a file path)"
    );
    let mut out = error_json(ErrorCode::INVALID_REQUEST, id, message);
    out.push(b'\n');
    Some(out)
}

/// What the first members of a cut JSON object said.
#[derive(Default)]
struct Found {
    id: Option<Value>,
    response: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Found {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Found {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => self.id = Some(map.next_value()?),
                "result" | "error" => {
                    self.response = true;
                    return Ok(());
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A JSON-RPC error message as JSON text, fields in JSON-RPC's order as rmcp
/// writes its own answers. rmcp's types cannot carry the `null` id of an
/// answer to a message whose id is unknown.
pub(crate) fn error_json(code: ErrorCode, id: Value, message: String) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        jsonrpc: &'a str,
        id: Value,
        error: Error,
    }
    #[derive(serde::Serialize)]
    struct Error {
        code: i32,
        message: String,
    }
    let answer = Answer { jsonrpc: "2.0", id, error: Error { code: code.0, message } };
    // A struct of strings, numbers and a Value always serializes.
    serde_json::to_vec(&answer).unwrap_or_default()
}

#[cfg(test)]
#[path = "bad_request_tests.rs"]
mod tests;
