//! quiver as a gateway: the reference `server-everything` configured
//! downstream, driven end to end through the real binary over stdio.
//! Skips (passing, with a message) when the npm packages are not installed;
//! fails instead under `QUIVER_REQUIRE_ALL` (CI).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use crate::mcp_support::*;
use serde_json::json;

fn everything_js() -> Option<PathBuf> {
    quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")
}

fn workspace_with_everything(js: &std::path::Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
        serde_json::to_string(&js.display().to_string()).unwrap()
    );
    // The user's own config (the isolated QUIVER_CONFIG_DIR of mcp_support):
    // a server the workspace itself defines would need the user's approval.
    std::fs::create_dir_all(dir.path().join(".test-user-config")).unwrap();
    std::fs::write(dir.path().join(".test-user-config/config.toml"), config).unwrap();
    dir
}

#[tokio::test]
async fn downstream_tools_are_found_loaded_announced_and_called() {
    let Some(js) = everything_js() else { return };
    let dir = workspace_with_everything(&js);

    // First session: nothing cached yet, so discover the server explicitly.
    let first = TestClient::default();
    let client = stdio(dir.path(), &[], first.clone()).await;
    let head = list(&client).await;
    assert!(!names(&head).iter().any(|n| n.starts_with("mcp__")), "MCP tools are deferred outside yolo");
    let discovered = call(&client, "mcp_discover", json!({"server": "everything"})).await;
    assert_eq!(discovered.is_error, Some(false), "{}", text(&discovered));
    first.wait_list_changed(0).await;
    let after = names(&list(&client).await);
    assert!(after.contains(&"mcp__everything__echo".to_string()), "{after:?}");
    client.cancel().await.unwrap();

    // Second session (new process, warm tool cache): the everyday case, a
    // search finds the cached server's tool, loads it, and the call reaches it.
    let handler = TestClient::default();
    let client = stdio(dir.path(), &[], handler.clone()).await;
    let head = list(&client).await;
    let head_bytes: Vec<String> = head.iter().map(bytes).collect();
    let found = call(&client, "tool_search", json!({"query": "echo back the input message"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    let matches = found.structured_content.as_ref().unwrap()["matches"].as_array().unwrap().clone();
    assert_eq!(matches[0]["name"], "mcp__everything__echo", "{}", text(&found));
    handler.wait_list_changed(0).await;

    let listed = list(&client).await;
    let listed_bytes: Vec<String> = listed.iter().map(bytes).collect();
    assert_eq!(&listed_bytes[..head_bytes.len()], &head_bytes[..], "the old head must be unchanged");
    assert!(names(&listed[head.len()..]).contains(&"mcp__everything__echo".to_string()));

    let echoed = call(&client, "mcp__everything__echo", json!({"message": "hello through quiver"})).await;
    // The server's answer as it wrote it: server-everything sends no `isError`.
    assert_ne!(echoed.is_error, Some(true), "{}", text(&echoed));
    assert!(text(&echoed).contains("hello through quiver"), "{}", text(&echoed));

    // The fallback path for clients that never refresh their list.
    let fallback = call(
        &client,
        "mcp_call",
        json!({"server": "everything", "tool": "echo", "arguments": {"message": "via mcp_call"}}),
    )
    .await;
    assert!(text(&fallback).contains("via mcp_call"), "{}", text(&fallback));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn yolo_puts_cached_downstream_tools_in_the_head() {
    let Some(js) = everything_js() else { return };
    let dir = workspace_with_everything(&js);
    // Warm the cache through a first session.
    let client = stdio(dir.path(), &[], TestClient::default()).await;
    call(&client, "mcp_discover", json!({"server": "everything"})).await;
    client.cancel().await.unwrap();

    let client = stdio(dir.path(), &["--mode", "yolo"], TestClient::default()).await;
    let head = names(&list(&client).await);
    let first_mcp = head.iter().position(|n| n.starts_with("mcp__")).expect("MCP tools in the yolo head");
    assert!(head[..first_mcp].iter().all(|n| !n.starts_with("mcp__")), "native tools first, then MCP");
    assert!(head.contains(&"mcp__everything__echo".to_string()));
    client.cancel().await.unwrap();
}
