//! A raw HTTP `initialize` POST for the HTTP guard tests (Origin, bearer
//! token) of the in-process server and of the binary.

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
