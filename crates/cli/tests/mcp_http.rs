//! `quiver mcp serve --transport http`, the real binary: the address line on
//! stderr, isolated sessions, the Origin and bearer-token guards, loopback only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::*;
use serde_json::json;

#[tokio::test]
async fn http_sessions_do_not_see_each_others_loads() {
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &[], &[]).await;
    assert!(server.url.starts_with("http://127.0.0.1:") && server.url.ends_with("/mcp"), "{}", server.url);

    let a_handler = TestClient::default();
    let a = http_client(&server.url, None, a_handler.clone()).await;
    let b = http_client(&server.url, None, TestClient::default()).await;
    let head = names(&list(&a).await);
    assert_eq!(names(&list(&b).await), head);

    let found = call(&a, "tool_search", json!({"query": "select:git_status"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    a_handler.wait_list_changed(0).await;
    let a_list = names(&list(&a).await);
    assert_eq!(a_list.last().unwrap(), "git_status");
    assert_eq!(&a_list[..head.len()], &head[..]);
    assert_eq!(names(&list(&b).await), head, "session B must not see A's tail");
}

#[tokio::test]
async fn bad_origin_is_403() {
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &[], &[]).await;
    assert_eq!(raw_initialize(&server.url, &[("Origin", "http://attacker.example")]).await, 403);
    assert_eq!(raw_initialize(&server.url, &[("Origin", "http://localhost:6274")]).await, 200);
}

#[tokio::test]
async fn missing_token_is_401() {
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &["--token-env", "MY_QUIVER_TOKEN"], &[("MY_QUIVER_TOKEN", "tok-123")]).await;
    assert_eq!(raw_initialize(&server.url, &[]).await, 401);
    assert_eq!(raw_initialize(&server.url, &[("Authorization", "Bearer nope")]).await, 401);
    let client = http_client(&server.url, Some("tok-123"), TestClient::default()).await;
    assert!(names(&list(&client).await).contains(&"tool_search".to_string()));
}

#[tokio::test]
async fn default_token_env_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &[], &[("QUIVER_MCP_TOKEN", "from-default")]).await;
    assert_eq!(raw_initialize(&server.url, &[]).await, 401);
    assert_eq!(raw_initialize(&server.url, &[("Authorization", "Bearer from-default")]).await, 200);
}

#[test]
fn non_loopback_listen_is_refused_without_allow_remote() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(quiver_bin())
        .args(["mcp", "serve", "--transport", "http", "--listen", "0.0.0.0:0", "--workspace"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
}

#[cfg(unix)]
#[tokio::test]
async fn sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = http(dir.path(), &[], &[]).await;
    // A connected client keeps its SSE stream open; shutdown must not wait on it.
    let client = http_client(&server.url, None, TestClient::default()).await;
    assert!(!list(&client).await.is_empty());
    let pid = server.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    // A server that waited on the stream would never stop: the ceiling only
    // turns that hang into a failure.
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), server.child.wait())
        .await
        .expect("quiver did not stop within 60 s of SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
}

/// A client ending its session with DELETE is told it worked with 200, as
/// both SDKs' own servers answer (rmcp's 202 made the Python SDK's client warn
/// "Session termination failed: 202" on every close), and the session is gone.
#[tokio::test]
async fn session_delete_is_200_and_ends_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &[], &[]).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let (status, headers) = raw_request(&server.url, "POST", &[], &init.to_string()).await;
    assert_eq!(status, 200, "{headers:?}");
    let session = headers.iter().find(|(k, _)| k == "mcp-session-id").expect("a session id").1.clone();
    let on_session = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    let (status, headers) = raw_request(&server.url, "DELETE", &on_session, "").await;
    assert_eq!(status, 200, "{headers:?}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, headers) = raw_request(&server.url, "POST", &on_session, &list).await;
    assert_eq!(status, 404, "a deleted session is unknown: {headers:?}");
}
