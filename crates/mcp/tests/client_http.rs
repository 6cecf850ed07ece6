//! Streamable HTTP downstream servers: `quiver-test-mcp --http` as the server.
#![allow(clippy::unwrap_used)] // test setup helpers outside #[test] fns

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::client_support::*;
use quiver_mcp::client::ConnState;
use quiver_mcp::config::{ServerConfig, Transport};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Starts the test server over HTTP; returns the child (killed on drop) and its URL.
async fn http_server() -> (tokio::process::Child, String) {
    http_server_with(&[]).await
}

/// [`http_server`] with `env` set for the server.
pub(crate) async fn http_server_with(env: &[(&str, &str)]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(TEST_SERVER)
        .args(["--http", "127.0.0.1:0"])
        .envs(env.iter().copied())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(PATIENCE, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("listening on ") {
                return url.to_string();
            }
        }
        panic!("test server printed no address");
    })
    .await
    .unwrap();
    (child, url)
}

pub(crate) fn http_config(name: &str, url: &str, token_env: Option<&str>) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Http {
            url: url.into(),
            headers: BTreeMap::from([("X-Quiver-Test".to_string(), "1".to_string())]),
            bearer_token_env: token_env.map(str::to_string),
            oauth: Default::default(),
        },
        enabled: true,
        enabled_tools: None,
        disabled_tools: vec![],
        startup_timeout: PATIENCE,
        // Short for `hang`, the one call meant to time out; ordinary calls on
        // these servers go through `call_patiently`.
        tool_timeout: Duration::from_millis(800),
        source: PathBuf::from("test-config.toml"),
        trust: quiver_engine::permissions::trust::Source::User,
        workspace: None,
        expose: Default::default(),
        protocol: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_lists_calls_and_times_out() {
    let (_child, url) = http_server().await;
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![http_config("web", &url, None)], cache.path());
    let tools = discover(&m, "web").await.unwrap_or_else(|e| panic!("discover: {e}"));
    assert!(tools.iter().any(|(n, _)| n == "mcp__web__echo"));
    let server = m.server("web").unwrap();

    let mut args = serde_json::Map::new();
    args.insert("text".into(), "over http".into());
    let result = call_patiently(server, "echo", Some(args)).await.unwrap();
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(value["content"][0]["text"], "over http");

    let e = server.call("hang", None).await.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("did not answer `hang` within 800 ms"), "{e}");
    assert_eq!(server.status().state, ConnState::Connected);
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_token_env_and_dead_urls_are_clear_errors() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(
        vec![
            http_config("needs_token", "http://127.0.0.1:9/mcp", Some("QUIVER_TEST_SURELY_UNSET_TOKEN")),
            http_config("dead", "http://127.0.0.1:9/mcp", None),
        ],
        cache.path(),
    );
    let e = discover(&m, "needs_token").await.err().unwrap_or_default();
    assert!(e.contains("QUIVER_TEST_SURELY_UNSET_TOKEN") && e.contains("needs_token"), "{e}");
    let e = discover(&m, "dead").await.err().unwrap_or_default();
    assert!(e.contains("MCP server `dead`") && e.contains("127.0.0.1:9"), "{e}");
    assert_eq!(m.server("dead").unwrap().status().state, ConnState::Failed);
}

/// The downstream HTTP connection quiver opens has TCP_NODELAY, read back
/// from its socket: without it a kept-alive JSON-RPC exchange can wait out
/// the server's delayed ACK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_transport_sets_nodelay() {
    let (_child, url) = http_server().await;
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![http_config("web", &url, None)], cache.path());
    discover(&m, "web").await.unwrap_or_else(|e| panic!("discover: {e}"));
    let authority = url.strip_prefix("http://").unwrap().split('/').next().unwrap();
    let server: std::net::SocketAddr = authority.parse().unwrap();
    assert_eq!(quiver_testkit::sockets::client_nodelay(server), Ok(true));
    m.shutdown().await;
}
