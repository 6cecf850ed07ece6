//! Plain answers and kept-alive connections over streamable HTTP, seen by a
//! raw client: a session's request whose answer is one message comes as
//! `application/json` (not an SSE stream with a priming event), and an idle
//! kept-alive connection outlives the head timeout (closed after the idle
//! one), while a trickled head is still cut. (A call whose stream carries
//! messages before its answer stays SSE: `gateway_call_stream`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use crate::server_support::*;
use quiver_engine::Mode;
use quiver_mcp::server::http::HttpLimits;
use quiver_mcp::server::{HttpOptions, HttpServer};
use quiver_testkit::raw_http;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start(limits: HttpLimits) -> (String, tempfile::TempDir) {
    let (surface, dir) = surface(Mode::Agent);
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind_with_limits(surface, options, limits).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    (url, dir)
}

#[tokio::test]
async fn a_session_request_that_cannot_stream_is_answered_as_json() {
    let (url, _dir) = start(HttpLimits::default()).await;
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let http = reqwest::Client::new();
    let post = |session: Option<String>, body: Value| {
        let mut req = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.body(body.to_string()).send()
    };
    let content_type = |r: &reqwest::Response| r.headers()["content-type"].to_str().unwrap().to_string();

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "plain", "version": "0"}}});
    let response = post(None, init).await.unwrap();
    assert_eq!(content_type(&response), "application/json");
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let answer: Value = response.json().await.unwrap();
    assert!(answer["result"]["serverInfo"]["name"].is_string(), "{answer}");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(Some(session.clone()), note).await.unwrap().status(), 202);

    let response =
        post(Some(session.clone()), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await.unwrap();
    assert_eq!(content_type(&response), "application/json");
    assert!(response.headers().get("content-length").is_some(), "not chunked: {:?}", response.headers());
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["id"], 2);
    assert!(answer["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "tool_search"), "{answer}");

    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "say", "arguments": {"text": "plainly"}}});
    let response = post(Some(session.clone()), call).await.unwrap();
    assert_eq!(content_type(&response), "application/json");
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "plainly", "{answer}");

    // An error answer is one message too.
    let bad = json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "none"}});
    let response = post(Some(session), bad).await.unwrap();
    assert_eq!(content_type(&response), "application/json");
    let answer: Value = response.json().await.unwrap();
    assert!(answer["error"]["code"].is_i64(), "{answer}");
}

/// One request on `stream` (kept alive): the answer's status and body, which
/// must have a length (a plain answer), not be chunked.
async fn exchange(stream: &mut TcpStream, authority: &str, body: &Value) -> (u16, String) {
    let answer = raw_http::exchange(stream, authority, "Mcp-Protocol-Version: 2025-11-25\r\n", body).await;
    assert!(!answer.chunked, "a chunked answer: {}", answer.body);
    (answer.status, answer.body)
}

async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 512];
    matches!(tokio::time::timeout(limit, stream.read(&mut buf)).await, Ok(Ok(0) | Err(_)))
}

#[tokio::test]
async fn a_kept_alive_connection_outlives_the_head_timeout() {
    assert_eq!(HttpLimits::default().idle_timeout, Duration::from_secs(75));
    let head = Duration::from_secs(1);
    let idle = Duration::from_secs(4);
    let (url, _dir) = start(HttpLimits { header_timeout: head, idle_timeout: idle, ..HttpLimits::default() }).await;
    let authority = url.strip_prefix("http://").unwrap().split('/').next().unwrap().to_string();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "kept", "version": "0"}}});

    let mut kept = TcpStream::connect(&authority).await.unwrap();
    let (status, body) = exchange(&mut kept, &authority, &init).await;
    assert_eq!(status, 200, "{body}");
    // Idle for twice the head timeout: the connection is still there.
    tokio::time::sleep(head * 2).await;
    let (status, body) = exchange(&mut kept, &authority, &init).await;
    assert_eq!(status, 200, "{body}");
    let answered = Instant::now();

    // A head that starts but never ends is cut after the head timeout.
    let mut trickle = TcpStream::connect(&authority).await.unwrap();
    trickle.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut trickle, idle).await, "a half-sent head stayed open");
    assert!(
        started.elapsed() < idle - Duration::from_millis(500),
        "cut only at the idle bound: {:?}",
        started.elapsed()
    );

    // And the kept one goes once it has been idle for the idle timeout.
    assert!(closed_within(&mut kept, idle + Duration::from_secs(2)).await, "an idle connection stayed open");
    assert!(answered.elapsed() >= idle, "{:?}", answered.elapsed());
}
