//! `quiver mcp serve` over stdio, the real binary driven by an rmcp client:
//! the list is `quiver catalog --format mcp`, a search sends list_changed and
//! appends to the tail without touching the head, deprecated names keep their
//! notice, and agent-mode approvals go through elicitation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::*;
use serde_json::json;

#[tokio::test]
async fn stdio_session_lists_searches_loads_and_calls() {
    let dir = workspace();
    let handler = TestClient::default();
    let client = stdio(dir.path(), &[], handler.clone()).await;

    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "quiver");
    assert_eq!(info.capabilities.tools.as_ref().unwrap().list_changed, Some(true));

    let head = list(&client).await;
    let head_bytes: Vec<String> = head.iter().map(bytes).collect();
    assert_eq!(head_bytes, catalog_mcp(dir.path(), &[]), "tools/list must be the catalog head, byte for byte");
    assert!(names(&head).contains(&"tool_search".to_string()));

    let found = call(&client, "tool_search", json!({"query": "overview of the project structure"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    assert!(text(&found).contains("project_map"), "{}", text(&found));
    handler.wait_list_changed(0).await;

    let after = list(&client).await;
    let after_bytes: Vec<String> = after.iter().map(bytes).collect();
    assert_eq!(&after_bytes[..head_bytes.len()], &head_bytes[..], "old head must be byte-identical");
    let tail = names(&after[head.len()..]);
    assert!(tail.contains(&"project_map".to_string()), "{tail:?}");
    let loaded_args: Vec<&str> = tail.iter().map(String::as_str).collect();
    assert_eq!(after_bytes, catalog_mcp(dir.path(), &["--loaded", &loaded_args.join(",")]));

    let map = call(&client, "project_map", json!({})).await;
    assert_eq!(map.is_error, Some(false), "{}", text(&map));
    assert!(text(&map).contains("main.rs"), "{}", text(&map));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn deprecated_alias_shows_deprecation_in_meta() {
    let dir = workspace();
    let client = stdio(dir.path(), &[], TestClient::default()).await;
    let result = call(&client, "todo_write", json!({"items": [{"content": "ship it", "status": "pending"}]})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let meta = result.meta.as_ref().expect("_meta").0.clone();
    assert_eq!(meta["_deprecation"]["this_tool"], "todo_write");
    assert_eq!(meta["_deprecation"]["use_instead"], "checklist_write");
    let twin = call(&client, "checklist_write", json!({"items": [{"content": "ship it", "status": "pending"}]})).await;
    assert_eq!(result.content, twin.content, "an alias's content is its canonical twin's");
    assert!(twin.meta.as_ref().is_none_or(|m| m.0.get("_deprecation").is_none()));
    // The alias is never listed.
    assert!(!names(&list(&client).await).contains(&"todo_write".to_string()));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn agent_mode_asks_the_client_through_elicitation() {
    let dir = workspace();
    let yes = TestClient::answering(true);
    let client = stdio(dir.path(), &["--mode", "agent"], yes.clone()).await;
    let result = call(&client, "exec_shell", json!({"command": "touch approved.txt", "escalate": "full"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(dir.path().join("approved.txt").exists());
    let questions = yes.questions.lock().unwrap().clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(questions[0].contains("touch approved.txt"), "{questions:?}");
    client.cancel().await.unwrap();

    let no = TestClient::answering(false);
    let client = stdio(dir.path(), &["--mode", "agent"], no).await;
    let refused = call(&client, "exec_shell", json!({"command": "touch declined.txt", "escalate": "full"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("not approved"), "{}", text(&refused));
    assert!(!dir.path().join("declined.txt").exists());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_elicitation_agent_mode_refuses_with_a_clear_message() {
    let dir = workspace();
    let client = stdio(dir.path(), &["--mode", "agent"], TestClient::default()).await;
    let refused = call(&client, "exec_shell", json!({"command": "touch nobody.txt", "escalate": "full"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("nobody to approve"), "{}", text(&refused));
    assert!(!dir.path().join("nobody.txt").exists());
    // Trusted commands need no approval.
    let ok = call(&client, "exec_shell", json!({"command": "ls"})).await;
    assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_recorded_mcp_session_replays_identically() {
    let dir = workspace();
    let transcripts = tempfile::tempdir().unwrap();
    let client =
        stdio(dir.path(), &["--transcript-dir", transcripts.path().to_str().unwrap()], TestClient::default()).await;
    let items = json!({"items": [{"content": "record me", "status": "pending"}]});
    assert_eq!(call(&client, "todo_write", items).await.is_error, Some(false));
    assert_eq!(call(&client, "tool_search", json!({"query": "select:note"})).await.is_error, Some(false));
    assert_eq!(call(&client, "note", json!({"text": "kept"})).await.is_error, Some(false));
    client.cancel().await.unwrap();

    let files: Vec<_> = std::fs::read_dir(transcripts.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one transcript per session: {files:?}");
    let out = std::process::Command::new(quiver_bin()).arg("replay").arg(&files[0]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("3 identical, 0 differ, 0 failed"), "{stdout}");
    assert!(stdout.contains("todo_write -> checklist_write"), "{stdout}");
}

/// A cloned repository's broken config files must not keep the server from
/// starting: each is reported and left out, and the built-in head is served.
#[tokio::test]
async fn broken_project_files_are_skipped_not_fatal() {
    let clean = workspace();
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".quiver")).unwrap();
    std::fs::write(dir.path().join(".quiver/manifest.toml"), "[profiles.default]\nremove = [\"grep_files\"]\n[oops")
        .unwrap();
    std::fs::write(dir.path().join(".mcp.json"), r#"{"mcpServers": {"#).unwrap();
    std::fs::write(dir.path().join("quiver.toml"), "[mcp_servers.x\n").unwrap();
    let client = stdio(dir.path(), &[], TestClient::default()).await;
    let head: Vec<String> = list(&client).await.iter().map(bytes).collect();
    assert_eq!(head, catalog_mcp(clean.path(), &[]), "the broken overlay is left out whole");
    let read = call(&client, "read_file", json!({"path": "README.md"})).await;
    assert_eq!(read.is_error, Some(false), "{}", text(&read));
    client.cancel().await.unwrap();

    let lint = std::process::Command::new(quiver_bin()).arg("lint").current_dir(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&lint.stderr);
    assert!(!lint.status.success(), "lint fails on what serve skipped: {stderr}");
    assert!(stderr.contains(".quiver/manifest.toml"), "{stderr}");
}
