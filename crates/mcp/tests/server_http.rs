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
