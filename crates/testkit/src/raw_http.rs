//! Raw HTTP for the HTTP tests: an `initialize` POST for the guard tests
//! (Origin, bearer token) of the in-process server and of the binary, and
//! POSTs on one kept-alive connection of the test's own (no pool deciding
//! when a new connection is opened).

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A raw `initialize` POST, returning the status code (no client library in
/// the way, so the guards are seen exactly as a browser would hit them).
pub async fn raw_initialize(url: &str, headers: &[(&str, &str)]) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let mut request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 64];
    let n = stream.read(&mut buf).await.unwrap();
    let head = String::from_utf8_lossy(&buf[..n]).to_string();
    head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

/// A raw request of any method to `url`: the status and the response's header
/// lines (names lowercased). `Connection: close`, so the server ends the
/// exchange; the body is not read past the head.
pub async fn raw_request(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let mut request = format!(
        "{method} /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_string();
    let head = text.split("\r\n\r\n").next().unwrap_or_default();
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers)
}

/// An answer read by [`exchange`].
pub struct Answer {
    pub status: u16,
    pub body: String,
    /// Sent chunked (an event stream) rather than with a length.
    pub chunked: bool,
}

/// One HTTP/1.1 POST to `/mcp` on `stream` (kept alive), with `headers`
/// (complete lines, each ending in CRLF), and its answer: a body with a
/// length, or a chunked one read to its last chunk.
pub async fn exchange(
    stream: &mut tokio::net::TcpStream,
    authority: &str,
    headers: &str,
    body: &serde_json::Value,
) -> Answer {
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed mid-answer: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        let Some(end) = text.find("\r\n\r\n") else { continue };
        let head = text[..end].to_ascii_lowercase();
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        let rest = &text[end + 4..];
        if let Some(length) = head.lines().find_map(|l| l.strip_prefix("content-length:")) {
            let length: usize = length.trim().parse().unwrap();
            if rest.len() >= length {
                assert_eq!(rest.len(), length, "bytes after the answer: {text}");
                return Answer { status, body: rest.to_string(), chunked: false };
            }
        } else if head.contains("transfer-encoding: chunked") {
            // SSE data never starts with CRLF, so only the last chunk ends so.
            if rest.ends_with("\r\n0\r\n\r\n") || rest == "0\r\n\r\n" {
                return Answer { status, body: rest.to_string(), chunked: true };
            }
        } else {
            panic!("an answer with neither a length nor chunks: {head}");
        }
    }
}
