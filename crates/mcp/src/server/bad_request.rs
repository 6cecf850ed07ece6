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
            if message.get("method").is_none() || id.is_none() {
                return None;
            }
            match id {
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
