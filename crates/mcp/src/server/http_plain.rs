//! Plain JSON where nothing streams: rmcp answers every request of an
//! `initialize` session (2025-11-25 and before) as an SSE stream with a
//! priming event, even `tools/list` or a call whose tool sends nothing
//! before its result; its `json_response` setting reaches only stateless
//! (2026-07-28) requests. The spec lets a server answer a POSTed request
//! with one `application/json` object instead, which costs the client no SSE
//! parsing and quiver no chunked framing. So this layer holds back the
//! stream's head until its first message: when that is the answer itself,
//! the response becomes that one JSON object; when it is anything else (a
//! progress notification, a relayed `elicitation/create`, a log message),
//! the events held back go out first and the stream continues as rmcp wrote
//! it, so no message is lost or reordered. (The same choice rmcp makes for
//! its stateless requests.) Only for clients whose `Accept` names
//! `application/json`; a GET stream is never touched.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use http::header::{self, HeaderValue};

/// Bytes held back looking for the first message; past this the stream is
/// passed on as it is (no one answer is this large without a message first
/// that would have ended the wait).
const HOLD_LIMIT: usize = 16 * 1024 * 1024;

/// The middleware.
pub async fn answer_plainly(request: Request, next: Next) -> Response {
    let wants = request.method() == http::Method::POST && accepts_json(request.headers());
    let response = next.run(request).await;
    if !wants || !is_event_stream(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut held: Vec<u8> = Vec::new();
    // Where the next unread event starts in `held`.
    let mut scanned = 0;
    loop {
        match stream.next().await {
            Some(Ok(chunk)) => held.extend_from_slice(&chunk),
            // The stream ended or broke before any message: pass on what came.
            Some(Err(_)) | None => break,
        }
        while let Some(end) = find_event_end(&held[scanned..]) {
            let event = &held[scanned..scanned + end];
            scanned += end;
            let Some(data) = event_data(event) else { continue }; // priming, comment, keep-alive
            if is_answer(&data) {
                parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                parts.headers.remove(header::CONTENT_LENGTH);
                parts.headers.remove(header::CACHE_CONTROL);
                parts.headers.remove("x-accel-buffering");
                return Response::from_parts(parts, Body::from(data));
            }
            return streamed(parts, held, stream);
        }
        if held.len() > HOLD_LIMIT {
            break;
        }
    }
    streamed(parts, held, stream)
}

/// The events held back, then the rest of the stream as it comes.
fn streamed(
    parts: http::response::Parts,
    held: Vec<u8>,
    rest: impl futures::Stream<Item = Result<Bytes, axum::Error>> + Send + 'static,
) -> Response {
    let head = futures::stream::once(async move { Ok::<_, axum::Error>(Bytes::from(held)) });
    Response::from_parts(parts, Body::from_stream(head.chain(rest)))
}

fn accepts_json(headers: &http::HeaderMap) -> bool {
    headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|t| {
            let t = t.split(';').next().unwrap_or("").trim();
            t.eq_ignore_ascii_case("application/json") || t == "*/*" || t.eq_ignore_ascii_case("application/*")
        })
    })
}

fn is_event_stream(response: &Response) -> bool {
    response.status() == http::StatusCode::OK
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The length of the first whole event in `buf`, its blank line included.
fn find_event_end(buf: &[u8]) -> Option<usize> {
    let lf = memchr::memmem::find(buf, b"\n\n").map(|i| i + 2);
    let crlf = memchr::memmem::find(buf, b"\r\n\r\n").map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// An event's data (its `data:` lines joined), `None` when it has none or
/// only blank data (rmcp's priming event).
fn event_data(event: &[u8]) -> Option<Vec<u8>> {
    let mut data: Vec<u8> = Vec::new();
    let mut any = false;
    for line in event.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(rest) = line.strip_prefix(b"data:") else { continue };
        let rest = rest.strip_prefix(b" ").unwrap_or(rest);
        if any {
            data.push(b'\n');
        }
        data.extend_from_slice(rest);
        any = true;
    }
    (any && data.iter().any(|b| !b.is_ascii_whitespace())).then_some(data)
}

/// Whether `data` is a JSON-RPC response (a result or an error), not a
/// request or notification of the server's. Read for its keys only.
fn is_answer(data: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Keys<'a> {
        #[serde(borrow, default)]
        method: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        result: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        error: Option<&'a serde_json::value::RawValue>,
    }
    serde_json::from_slice::<Keys>(data).is_ok_and(|k| k.method.is_none() && (k.result.is_some() || k.error.is_some()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn events_and_their_data() {
        let buf = b"id: 0\nretry: 3000\ndata: \n\nid: 1\ndata: {\"id\":1,\"result\":{}}\n\n";
        let first = find_event_end(buf).unwrap();
        assert_eq!(event_data(&buf[..first]), None);
        let second = find_event_end(&buf[first..]).unwrap();
        let data = event_data(&buf[first..first + second]).unwrap();
        assert!(is_answer(&data));
        assert!(!is_answer(br#"{"method":"notifications/progress","params":{}}"#));
        assert!(!is_answer(br#"{"id":3,"method":"elicitation/create","params":{}}"#));
        assert!(is_answer(br#"{"id":3,"error":{"code":1,"message":"x"}}"#));
    }

    #[test]
    fn accept_headers() {
        let mut h = http::HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        assert!(accepts_json(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(!accepts_json(&h));
    }
}
