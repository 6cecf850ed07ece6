//! What an HTTP client is told when its POST body is no JSON-RPC message.
//!
//! rmcp's streamable HTTP service answers a JSON body it cannot read (not
//! JSON, a batch, an object that is no JSON-RPC message) with `415
//! Unsupported Media Type` and a line of text, though the media type was
//! right. MCP says such input gets an HTTP error such as `400 Bad Request`,
//! whose body may be a JSON-RPC error without an id: that is what the
//! client gets here, with rmcp's reason in the message.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::ErrorCode;

/// rmcp's answer text starts so when it could not read the body.
const RMCP_UNREADABLE: &str = "fail to deserialize request body";

/// The longest rmcp answer read back (it is one short line).
const MAX_ANSWER: usize = 4096;

pub async fn answer_unreadable(request: Request, next: Next) -> Response {
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    let response = next.run(request).await;
    if !json || response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ANSWER).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let text = String::from_utf8_lossy(&bytes);
    match text.strip_prefix(RMCP_UNREADABLE) {
        Some(reason) => bad_request(reason.trim()),
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// `400` with a JSON-RPC error without an id: a parse error when the body is
/// not JSON, else an invalid request.
fn bad_request(reason: &str) -> Response {
    let (code, what) = if reason.contains("JSON-RPC") {
        (ErrorCode::INVALID_REQUEST, "invalid request: not a JSON-RPC message (batches are not part of MCP)")
    } else {
        (ErrorCode::PARSE_ERROR, "parse error: the body is not JSON")
    };
    let body = super::bad_request::error_json(code, serde_json::Value::Null, format!("{what} ({reason})"));
    (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
