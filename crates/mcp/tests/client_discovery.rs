//! First use: the first `tool_search` discovers the user's own servers that
//! have no cached tool list, waits for them, and says which failed; a
//! project's server is never started by it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::client_support::*;
use quiver_engine::Mode;
use quiver_engine::permissions::trust::Source;
use quiver_mcp::client::discovery::Discovery;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_search_discovers_user_servers_and_names_failures() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut project = test_server("proj", &[]);
    project.trust = Source::Project;
    let servers =
        vec![test_server("t", &[]), stdio_server("broken", "/nonexistent/quiver-no-such-server", &[], &[]), project];
    let m = manager(servers, cache.path());
    let host = host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Agent);

    let found = call(&host, &mut ctx, "tool_search", json!({"query": "echo back the text you send"})).await;
    let next = found.content["nextInstruction"].as_str().unwrap_or_default().to_string();
    assert!(next.contains("failed to start: `broken`"), "{next}");
    let names: Vec<&str> =
        found.content["matches"].as_array().unwrap().iter().filter_map(|m| m["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("mcp__t__")), "the started server's tools are found: {names:?}");

    let state = m.discovery();
    assert_eq!(state.get("t"), Some(&Discovery::Done));
    assert!(matches!(state.get("broken"), Some(Discovery::Failed(_))));
    assert_eq!(state.get("proj"), Some(&Discovery::Skipped));
    assert_eq!(m.server("proj").unwrap().status().starts, 0, "a project's server never starts unapproved");
    // The list was written for the next process.
    let t = m.server("t").unwrap();
    assert!(quiver_mcp::client::ToolCache::at(cache.path()).load(t.config()).is_some());
    m.shutdown().await;
}
