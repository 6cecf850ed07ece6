//! The client against a server nobody here wrote: the reference
//! `@modelcontextprotocol/server-everything`, run from a local npm install.
//! Skips (with a message) when it is not installed, fails instead under
//! `QUIVER_REQUIRE_ALL` (CI); install it with `npm ci --prefix crates/mcp/tests/node`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::client_support::*;
use quiver_engine::Mode;
use quiver_mcp::config::ServerConfig;
use serde_json::json;

fn everything() -> Option<ServerConfig> {
    let script = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")?;
    let script = script.to_string_lossy().to_string();
    Some(stdio_server("everything", "node", &[&script, "stdio"], &[]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_server_is_found_by_search_and_echoes() {
    let Some(server) = everything() else { return };
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();

    // Connect and list (this also writes the cache).
    let m = manager(vec![server.clone()], cache.path());
    let tools = discover(&m, "everything").await.unwrap_or_else(|e| panic!("discover: {e}"));
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"mcp__everything__echo"), "{names:?}");
    assert!(names.contains(&"mcp__everything__get-sum"), "{names:?}");
    m.shutdown().await;
    drop(m);

    // A fresh process: the tools come from the cache; search finds echo
    // without starting node, and calling it starts node and echoes.
    let m = manager(vec![server], cache.path());
    let host = full_host(&m);
    assert!(host.engine().registry().len() > 30, "expected the whole native surface");
    let mut ctx = host_context(&host, ws.path(), Mode::Agent);
    let found = call(&host, &mut ctx, "tool_search", json!({"query": "echo back the input message"})).await;
    let matches: Vec<String> = found.content["matches"]
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    assert_eq!(matches.first().map(String::as_str), Some("mcp__everything__echo"), "{}", text(&found));
    assert_eq!(m.server("everything").map(|s| s.status().starts), Some(0), "search must not start the server");

    let echoed = call(&host, &mut ctx, "mcp__everything__echo", json!({"message": "hello from quiver"})).await;
    assert!(!echoed.is_error, "{}", text(&echoed));
    assert_eq!(text(&echoed), "Echo: hello from quiver");

    let sum = call(&host, &mut ctx, "mcp__everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert!(!sum.is_error && text(&sum).contains('5'), "{}", text(&sum));

    let image = call(&host, &mut ctx, "mcp__everything__get-tiny-image", json!({})).await;
    assert!(!image.is_error, "{}", text(&image));
    assert!(text(&image).contains("[image image/png"), "{}", text(&image));
    assert!(image.blocks.iter().any(|b| b["type"] == "image" && b["data"].as_str().is_some_and(|d| !d.is_empty())));

    // Schema validation happens before the server is asked.
    let bad = call(&host, &mut ctx, "mcp__everything__echo", json!({"message": 42})).await;
    assert!(bad.is_error && text(&bad).contains("message"), "{}", text(&bad));

    // mcp_call reaches the same tool.
    let via = call(
        &host,
        &mut ctx,
        "mcp_call",
        json!({"server": "everything", "tool": "echo", "arguments": {"message": "fallback"}}),
    )
    .await;
    assert_eq!(text(&via), "Echo: fallback");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_server_over_streamable_http() {
    let Some(stdio) = everything() else { return };
    let quiver_mcp::config::Transport::Stdio { args, .. } = &stdio.transport else { unreachable!() };
    // A free port for the server (it only takes one from PORT).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = tokio::process::Command::new("node")
        .args([args[0].as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    // A ceiling against a hang, far above a cold node start on a loaded machine.
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("listening on port") {
                return;
            }
        }
        panic!("server-everything did not start over HTTP");
    })
    .await
    .unwrap();

    let mut server = stdio.clone();
    server.transport = quiver_mcp::config::Transport::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: Default::default(),
        bearer_token_env: None,
        oauth: Default::default(),
    };
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let m = manager(vec![server], cache.path());
    let host = host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Agent);
    let via = call(
        &host,
        &mut ctx,
        "mcp_call",
        json!({"server": "everything", "tool": "echo", "arguments": {"message": "over http"}}),
    )
    .await;
    assert_eq!(text(&via), "Echo: over http");
    let direct = call(&host, &mut ctx, "mcp__everything__echo", json!({"message": "by name"})).await;
    assert_eq!(text(&direct), "Echo: by name");
    m.shutdown().await;
}
