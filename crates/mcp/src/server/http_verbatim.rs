//! Verbatim results over streamable HTTP: rmcp's HTTP service serializes
//! every message itself, so a placeholder result (see
//! [`super::verbatim::VerbatimResults`]) reaches the response body as JSON,
//! and this layer writes the slot's text in its place, in an SSE `data:` line
//! or a plain JSON body alike. A chunk without a placeholder passes untouched
//! after one substring search.

use std::sync::Arc;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use http_body_util::BodyExt;
use rmcp::model::ServerJsonRpcMessage;

use super::verbatim::{self, VerbatimResults};

/// The middleware: the response body, chunk by chunk, with placeholders
/// replaced.
pub async fn substitute(State(verbatim): State<Arc<VerbatimResults>>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    if body.size_hint().exact().is_some() {
        // A body already whole in memory (a plain JSON answer) stays one
        // piece, so it goes out with a Content-Length and not chunked.
        let Ok(whole) = body.collect().await.map(http_body_util::Collected::to_bytes) else {
            return Response::from_parts(parts, Body::empty());
        };
        parts.headers.remove(http::header::CONTENT_LENGTH); // hyper sets the rewritten one
        return Response::from_parts(parts, Body::from(rewrite(&verbatim, whole)));
    }
    let stream = body.into_data_stream().map(move |chunk| chunk.map(|bytes| rewrite(&verbatim, bytes)));
    Response::from_parts(parts, Body::from_stream(stream))
}

/// `chunk` with each line that holds a placeholder rewritten.
fn rewrite(verbatim: &VerbatimResults, chunk: Bytes) -> Bytes {
    if memchr::memmem::find(&chunk, verbatim::SLOT_KEY.as_bytes()).is_none() {
        return chunk;
    }
    let mut out = Vec::with_capacity(chunk.len());
    for (i, line) in chunk.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        match rewrite_line(verbatim, line) {
            Some(rewritten) => out.extend_from_slice(&rewritten),
            None => out.extend_from_slice(line),
        }
    }
    Bytes::from(out)
}

/// An SSE `data:` line or a bare JSON message holding a placeholder, with the
/// verbatim text in its place; `None` leaves the line as it is.
fn rewrite_line(verbatim: &VerbatimResults, line: &[u8]) -> Option<Vec<u8>> {
    memchr::memmem::find(line, verbatim::SLOT_KEY.as_bytes())?;
    let (prefix, json) = match line.strip_prefix(b"data:") {
        Some(rest) => {
            let json = rest.strip_prefix(b" ").unwrap_or(rest);
            (&line[..line.len() - json.len()], json)
        }
        None => (&line[..0], line),
    };
    let message: ServerJsonRpcMessage = serde_json::from_slice(json).ok()?;
    let mut encoded = super::verbatim::encode(&message, verbatim).ok()?;
    encoded.pop(); // its newline: the line's own end stays where it was
    let mut out = prefix.to_vec();
    out.extend_from_slice(&encoded);
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rmcp::model::{JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, NumberOrString, ServerResult};

    use super::*;

    fn placeholder_json(verbatim: &VerbatimResults, text: &str) -> String {
        let message: ServerJsonRpcMessage = JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(4),
            result: ServerResult::CallToolResult(verbatim.placeholder(Arc::new(text.to_string()))),
        });
        serde_json::to_string(&message).unwrap()
    }

    #[test]
    fn an_sse_event_and_a_json_body_get_the_verbatim_text() {
        let verbatim = VerbatimResults::default();
        let text = r#"{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}"#;
        let event = format!("id: 0/7\ndata: {}\n\n", placeholder_json(&verbatim, text));
        let out = rewrite(&verbatim, Bytes::from(event));
        assert_eq!(
            String::from_utf8(out.to_vec()).unwrap(),
            format!("id: 0/7\ndata: {{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{text}}}\n\n")
        );
        let body = placeholder_json(&verbatim, text);
        let out = rewrite(&verbatim, Bytes::from(body));
        assert_eq!(
            String::from_utf8(out.to_vec()).unwrap(),
            format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{text}}}")
        );
    }

    #[test]
    fn chunks_without_a_placeholder_pass_untouched() {
        let verbatim = VerbatimResults::default();
        let chunk = Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n");
        assert_eq!(rewrite(&verbatim, chunk.clone()), chunk);
    }
}
