//! The streamable HTTP transport, in process: sessions isolated per
//! `Mcp-Session-Id`, list_changed over HTTP, Origin and bearer-token guards,
//! and the loopback-only default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::server_support::*;
use quiver_engine::Mode;
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

async fn start(surface: Arc<Surface>, token: Option<&str>) -> String {
    let options = HttpOptions { listen: None, allow_remote: false, token: token.map(str::to_string) };
    let server = HttpServer::bind(surface, options).await.unwrap();
    assert!(server.local_addr().ip().is_loopback());
    let url = server.url();
    tokio::spawn(server.run());
    url
}

async fn http_client(url: &str, token: Option<&str>, handler: TestClient) -> Client {
    // reqwest is built without a bundled TLS provider; plain http needs none,
    // but the client builder still wants one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    handler.serve(transport).await.expect("HTTP client handshake")
}

#[tokio::test]
async fn http_sessions_are_isolated_and_get_list_changed() {
    let (surface, _dir) = surface(Mode::Agent);
    let url = start(surface, None).await;
    let a_handler = TestClient::default();
    let a = http_client(&url, None, a_handler.clone()).await;
    let b = http_client(&url, None, TestClient::default()).await;

    let head = names(&list(&a).await);
    assert_eq!(head, ["explode", "json_info", "say", "tool_search"]);
    let found = call(&a, "tool_search", json!({"query": "weather forecast"})).await;
    assert!(text(&found).contains("weather_lookup"));
    a_handler.wait_list_changed(0).await;

    let a_list = names(&list(&a).await);
    assert_eq!(&a_list[..head.len()], &head[..]);
    assert_eq!(a_list.last().unwrap(), "weather_lookup");
    assert_eq!(names(&list(&b).await), head, "session B must not see A's loads");
    assert_eq!(text(&call(&a, "weather_lookup", json!({"city": "Lima"})).await), "sunny in Lima");
}

#[tokio::test]
async fn foreign_origin_is_forbidden_local_origin_is_not() {
    let (surface, _dir) = surface(Mode::Agent);
    let url = start(surface, None).await;
    assert_eq!(raw_initialize(&url, &[("Origin", "http://evil.example")]).await, 403);
    assert_eq!(raw_initialize(&url, &[("Origin", "http://localhost:6274")]).await, 200);
    assert_eq!(raw_initialize(&url, &[]).await, 200);
}

#[tokio::test]
async fn bearer_token_is_required_when_set() {
    let (surface, _dir) = surface(Mode::Agent);
    let url = start(surface, Some("s3cret")).await;
    assert_eq!(raw_initialize(&url, &[]).await, 401);
    assert_eq!(raw_initialize(&url, &[("Authorization", "Bearer wrong")]).await, 401);
    assert_eq!(raw_initialize(&url, &[("Authorization", "Bearer s3cret")]).await, 200);
    // A bad origin is refused before the token is even looked at.
    assert_eq!(
        raw_initialize(&url, &[("Origin", "http://evil.example"), ("Authorization", "Bearer s3cret")]).await,
        403
    );

    let client = http_client(&url, Some("s3cret"), TestClient::default()).await;
    assert_eq!(text(&call(&client, "say", json!({"text": "authed"})).await), "authed");
}

#[tokio::test]
async fn non_loopback_listen_needs_allow_remote() {
    let (surface, _dir) = surface(Mode::Agent);
    let options = HttpOptions { listen: Some("0.0.0.0:0".into()), allow_remote: false, token: None };
    let err = HttpServer::bind(surface.clone(), options).await.err().expect("must refuse");
    assert!(err.to_string().contains("--allow-remote"), "{err}");

    let options = HttpOptions { listen: Some("0.0.0.0:0".into()), allow_remote: true, token: Some("t".into()) };
    assert!(HttpServer::bind(surface, options).await.is_ok());
}

// --- Listener hardening: floods, slow bodies, idle connections ---

use quiver_mcp::server::http::HttpLimits;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start_limited(surface: Arc<Surface>, token: Option<&str>, limits: HttpLimits) -> String {
    let options = HttpOptions { listen: None, allow_remote: false, token: token.map(str::to_string) };
    let server = HttpServer::bind_with_limits(surface, options, limits).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    url
}

fn authority(url: &str) -> String {
    url.strip_prefix("http://").unwrap().split('/').next().unwrap().to_string()
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// Whether the server closed `stream` (EOF or reset) within `limit`.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 512];
    let deadline = Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // a response (408) before the close
        }
    }
}

#[tokio::test]
async fn idle_connection_flood_leaves_authenticated_calls_answered() {
    const FLOOD: u64 = 2_000;
    // Both ends of every connection live in this process.
    let (_, hard) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).unwrap();
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, hard, hard);
    let flood = FLOOD.min(hard.saturating_sub(800));
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits::default();
    let per_address = limits.max_pending_per_address;
    let grace = limits.first_byte_grace;
    let url = start_limited(surface, Some("s3cret"), limits).await;
    let addr = authority(&url);
    let rss_before = rss_kib();

    let mut idle = Vec::new();
    for _ in 0..flood {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    // Within the first-byte grace the flood's connections may still be a
    // client's on their way, and a newcomer gets 429 (see server_capacity);
    // past it they are closed for the newcomer.
    tokio::time::sleep(grace).await;
    let started = Instant::now();
    let status =
        tokio::time::timeout(Duration::from_secs(10), raw_initialize(&url, &[("Authorization", "Bearer s3cret")]))
            .await
            .expect("an authenticated initialize must answer during a flood");
    assert_eq!(status, 200);
    eprintln!("authenticated initialize answered {:?} after {flood} idle connections", started.elapsed());
    let client = http_client(&url, Some("s3cret"), TestClient::default()).await;
    assert_eq!(text(&call(&client, "say", json!({"text": "still here"})).await), "still here");

    // The server kept at most its per-address cap of them. A refused one
    // waits up to the grace for a request before it is answered and closed
    // (sooner only if it makes room for newer ones), so the last refused
    // have until twice the grace.
    let closed = futures::future::join_all(idle.iter_mut().map(|s| closed_within(s, grace * 2)))
        .await
        .into_iter()
        .filter(|closed| *closed)
        .count();
    eprintln!("idle flood: opened {flood}, closed by the server {closed}; RSS {} -> {} KiB", rss_before, rss_kib());
    assert!(closed as u64 >= flood - per_address as u64 - 8, "only {closed} of {flood} closed");
}

#[tokio::test]
async fn a_slow_body_is_cut_within_the_body_timeout() {
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits { body_timeout: Duration::from_secs(2), ..HttpLimits::default() };
    let url = start_limited(surface, Some("s3cret"), limits).await;
    let mut stream = TcpStream::connect(authority(&url)).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    // One byte every 200 ms: each read comes quickly, the whole never does.
    let trickle = async {
        loop {
            if stream.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            let mut buf = [0u8; 256];
            if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(1), stream.read(&mut buf)).await {
                return Some(String::from_utf8_lossy(&buf[..n]).to_string());
            }
        }
        None
    };
    let response = tokio::time::timeout(Duration::from_secs(6), trickle).await.expect("the slow body was never cut");
    let elapsed = started.elapsed();
    eprintln!("slow body cut after {elapsed:?}: {response:?}");
    assert!(elapsed >= Duration::from_millis(1900) && elapsed < Duration::from_secs(5), "{elapsed:?}");
    if let Some(r) = response {
        assert!(r.starts_with("HTTP/1.1 408") || r.is_empty(), "{r}");
    }
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_header_timeout() {
    let (surface, _dir) = surface(Mode::Agent);
    let second = Duration::from_secs(1);
    let limits = HttpLimits { header_timeout: second, idle_timeout: second, ..HttpLimits::default() };
    let url = start_limited(surface, None, limits).await;
    let mut silent = TcpStream::connect(authority(&url)).await.unwrap();
    let mut partial = TcpStream::connect(authority(&url)).await.unwrap();
    partial.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(4)).await, "a silent connection stayed open");
    assert!(closed_within(&mut partial, Duration::from_secs(4)).await, "a half-sent head stayed open");
    // The listener still serves.
    assert_eq!(raw_initialize(&url, &[]).await, 200);
}

#[tokio::test]
async fn authenticated_connections_keep_their_slots_and_extra_ones_are_refused() {
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits { max_connections: 4, max_pending_per_address: 4, ..HttpLimits::default() };
    let url = start_limited(surface, Some("t"), limits).await;
    let addr = authority(&url);
    // Four keep-alive connections that authenticate (401s would not count).
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        s.write_all(b"GET /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n").await.unwrap();
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0);
        held.push(s);
    }
    // A fifth (unauthenticated) connection finds no slot: told so with a
    // 503 and Retry-After, then closed.
    let mut extra = TcpStream::connect(&addr).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), extra.read_to_end(&mut answer)).await.unwrap().unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{answer}");
    assert!(answer.contains("Retry-After: 1\r\n"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    assert!(answer.contains(&format!("Content-Length: {}\r\n", body.len())), "{answer}");
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(raw_initialize(&url, &[("Authorization", "Bearer t")]).await, 200);
}

/// Under a flood of idle connections, a client whose request is on its way
/// keeps its slot: the idle ones are closed first.
#[tokio::test]
async fn a_request_in_flight_outlives_an_idle_flood() {
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits { max_pending_per_address: 4, ..HttpLimits::default() };
    let url = start_limited(surface, Some("t"), limits.clone()).await;
    let addr = authority(&url);
    // Half a request head: the client is mid-request, not yet authenticated.
    let mut legit = TcpStream::connect(&addr).await.unwrap();
    legit.write_all(b"GET /mcp HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut idle = Vec::new();
    for _ in 0..40 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    legit.write_all(b"Authorization: Bearer t\r\n\r\n").await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(5), legit.read_exact(&mut head)).await.unwrap().unwrap();
    assert!(head.starts_with(b"HTTP/1.1 "), "{}", String::from_utf8_lossy(&head));
    // The flood itself was cut to the cap (a refused connection's request is
    // waited for up to the grace before its status and the close).
    tokio::time::sleep(limits.first_byte_grace).await;
    let mut closed = 0;
    for stream in &mut idle {
        if closed_within(stream, Duration::from_millis(20)).await {
            closed += 1;
        }
    }
    assert!(closed >= 40 - 4, "{closed}");
}

/// A POST body that is no JSON-RPC message is a bad request (400) with a
/// JSON-RPC error saying why, as MCP asks; rmcp alone answered 415
/// Unsupported Media Type to a body whose media type was right. A body that
/// is not JSON by its media type keeps its 415.
#[tokio::test]
async fn an_unreadable_body_is_a_bad_request_with_a_json_rpc_error() {
    let (surface, _dir) = surface(Mode::Agent);
    let url = start(surface, None).await;
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let http = reqwest::Client::new();
    let post = |body: &'static str, content_type: &'static str| {
        http.post(&url)
            .header("Content-Type", content_type)
            .header("Accept", "application/json, text/event-stream")
            .body(body)
            .send()
    };
    for (body, code, says) in [
        ("garbage", -32700, "not JSON"),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600, "batches"),
        (r#"{"hello":"there"}"#, -32600, "not a JSON-RPC message"),
    ] {
        let response = post(body, "application/json").await.unwrap();
        assert_eq!(response.status(), 400, "{body}");
        let answer: serde_json::Value = response.json().await.unwrap();
        assert_eq!(answer["id"], serde_json::Value::Null, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{body}: {answer}");
    }
    let response = post("hello", "text/plain").await.unwrap();
    assert_eq!(response.status(), 415);
}
