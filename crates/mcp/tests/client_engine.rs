//! Downstream tools inside the engine: cached lists make them searchable before
//! their server runs, the host rebuilds the engine when a list changes, and the
//! `mcp_*` tools and `mcp__server__tool` names all go through one dispatch.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::client_support::*;
use quiver_engine::{Audience, CatalogFormat, Mode, Risk};
use quiver_mcp::client::ConnState;
use serde_json::{Value, json};

fn names(result: &quiver_engine::ToolResult) -> Vec<String> {
    result.content["matches"]
        .as_array()
        .map(|m| m.iter().filter_map(|x| x["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_tools_are_searchable_before_the_server_starts() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // First run: connect once, which writes the cache.
    let first = manager(vec![test_server("t", &[])], cache.path());
    discover(&first, "t").await.unwrap();
    first.shutdown().await;
    drop(first);

    // Second run: the tools are registered from the cache; nothing is started.
    let m = manager(vec![test_server("t", &[])], cache.path());
    let host = host(&m);
    let engine = host.engine();
    assert!(engine.registry().get("mcp__t__echo").is_some(), "cached tool not registered");
    assert_eq!(m.server("t").unwrap().status().starts, 0);

    let mut ctx = host_context(&host, ws.path(), Mode::Agent);
    let found = call(&host, &mut ctx, "tool_search", json!({"query": "echo back the text you send"})).await;
    assert!(!found.is_error, "{}", text(&found));
    assert_eq!(names(&found).first().map(String::as_str), Some("mcp__t__echo"), "{}", text(&found));
    assert!(ctx.session.loaded().contains(&"mcp__t__echo".to_string()));
    assert_eq!(m.server("t").unwrap().status().starts, 0, "searching must not start the server");

    // The first call starts it.
    let out = call(&host, &mut ctx, "mcp__t__echo", json!({"text": "hello"})).await;
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(out.content, json!("hello"));
    assert_eq!(out.metadata["mcp_server"], json!("t"));
    assert_eq!(m.server("t").unwrap().status().state, ConnState::Connected);
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_loads_tools_and_the_native_head_stays_byte_identical() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let host = host(&m);
    let before = host.engine();
    assert!(before.registry().get("mcp__t__echo").is_none(), "no cache yet, so no tools yet");
    let audience = Audience::default();
    let head_before = before.catalog(&audience, &[]).to_canonical_string(CatalogFormat::OpenAi);

    let mut ctx = host_context(&host, ws.path(), Mode::Agent);
    let found = call(&host, &mut ctx, "tool_search", json!({"query": "select:mcp_discover"})).await;
    assert!(!found.is_error, "{}", text(&found));
    let out = call(&host, &mut ctx, "mcp_discover", json!({"server": "t"})).await;
    assert!(!out.is_error, "{}", text(&out));
    let listed: Vec<&str> =
        out.content["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(listed.contains(&"mcp__t__echo") && listed.contains(&"mcp__t__wipe"), "{listed:?}");
    assert!(ctx.session.loaded().contains(&"mcp__t__echo".to_string()));

    let after = host.engine();
    assert!(after.registry().get("mcp__t__echo").is_some());
    let catalog = after.catalog(&audience, &ctx.session.loaded());
    let head_after =
        quiver_engine::Catalog { head: catalog.head.clone(), tail: vec![] }.to_canonical_string(CatalogFormat::OpenAi);
    assert_eq!(head_before, head_after, "the head must not move when MCP tools arrive");
    let tail: Vec<String> = catalog.tail.iter().map(|t| t.name.clone()).collect();
    assert_eq!(tail.first().map(String::as_str), Some("mcp_discover"));
    assert!(tail.contains(&"mcp__t__echo".to_string()), "{tail:?}");

    let echoed = call(&host, &mut ctx, "mcp__t__echo", json!({"text": "via name"})).await;
    assert_eq!(echoed.content, json!("via name"));
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_call_is_the_same_dispatch_path() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let host = host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Agent);

    // Never connected and not cached: mcp_call discovers first.
    let out =
        call(&host, &mut ctx, "mcp_call", json!({"server": "t", "tool": "echo", "arguments": {"text": "fallback"}}))
            .await;
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(out.content, json!("fallback"));
    // The full quiver name works too.
    let out = call(
        &host,
        &mut ctx,
        "mcp_call",
        json!({"server": "t", "tool": "mcp__t__add", "arguments": {"a": 2, "b": 40}}),
    )
    .await;
    assert_eq!(out.content, json!({"sum": 42}), "{}", text(&out));

    // Validation is the engine's: a wrong type never reaches the server.
    let bad = call(&host, &mut ctx, "mcp_call", json!({"server": "t", "tool": "echo", "arguments": {"text": 5}})).await;
    assert!(bad.is_error && text(&bad).contains("text"), "{}", text(&bad));
    // Permissions are the engine's: a destructive tool needs approval in agent mode.
    let wipe = call(&host, &mut ctx, "mcp_call", json!({"server": "t", "tool": "wipe"})).await;
    assert!(wipe.is_error && text(&wipe).contains("approval"), "{}", text(&wipe));
    // Unknown server and tool: say what exists.
    let e = call(&host, &mut ctx, "mcp_call", json!({"server": "nope", "tool": "echo"})).await;
    assert!(e.is_error && text(&e).contains("configured: `t`"), "{}", text(&e));
    let e = call(&host, &mut ctx, "mcp_call", json!({"server": "t", "tool": "nope"})).await;
    assert!(e.is_error && text(&e).contains("has no tool `nope`") && text(&e).contains("`echo`"), "{}", text(&e));
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_reports_state_and_counts() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut off = test_server("off", &[]);
    off.enabled = false;
    let m = manager(vec![test_server("t", &[]), off], cache.path());
    let host = host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Plan);
    let listing = |r: &quiver_engine::ToolResult, name: &str| -> Value {
        r.content["servers"].as_array().unwrap().iter().find(|s| s["name"] == json!(name)).cloned().unwrap()
    };

    let r = call(&host, &mut ctx, "mcp_servers", json!({})).await;
    let t = listing(&r, "t");
    assert_eq!(t["state"], json!("not_connected"));
    assert_eq!(t["tools"], Value::Null);
    assert_eq!(t["toolsFrom"], json!("none"));
    assert!(t["transport"].as_str().unwrap().starts_with("stdio: "));
    assert_eq!(listing(&r, "off")["state"], json!("disabled"));

    call(&host, &mut ctx, "mcp_discover", json!({"server": "t"})).await;
    let r = call(&host, &mut ctx, "mcp_servers", json!({})).await;
    let t = listing(&r, "t");
    assert_eq!(t["state"], json!("connected"));
    assert_eq!(t["toolsFrom"], json!("live"));
    assert!(t["tools"].as_u64().unwrap() >= 15);
    assert!(t["pid"].as_u64().is_some());

    // Plan mode refuses a downstream tool that does not declare itself read-only.
    let refused = call(&host, &mut ctx, "mcp__t__crash", json!({})).await;
    assert!(refused.is_error && text(&refused).contains("plan mode"), "{}", text(&refused));
    ctx.audience.mode = Mode::Agent;
    let crash = call(&host, &mut ctx, "mcp__t__crash", json!({})).await;
    assert!(crash.is_error && text(&crash).contains("boom"), "{}", text(&crash));
    let r = call(&host, &mut ctx, "mcp_servers", json!({})).await;
    let t = listing(&r, "t");
    assert_eq!(t["state"], json!("failed"));
    assert!(t["lastError"].as_str().unwrap().contains("exited while running `crash`"));

    let off = call(&host, &mut ctx, "mcp_discover", json!({"server": "off"})).await;
    assert!(off.is_error && text(&off).contains("disabled"), "{}", text(&off));
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_rebuilds_the_engine() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let host = host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Agent);
    call(&host, &mut ctx, "mcp_discover", json!({"server": "t"})).await;
    assert!(host.engine().registry().get("mcp__t__added_later").is_none());
    let r = call(&host, &mut ctx, "mcp__t__change_tools", json!({})).await;
    assert!(!r.is_error, "{}", text(&r));
    let engine = host.engine();
    assert!(engine.registry().get("mcp__t__added_later").is_some(), "list_changed did not reach the engine");
    let r = call(&host, &mut ctx, "mcp__t__added_later", json!({})).await;
    assert_eq!(r.content, json!("I am new"));
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_names_risks_and_modes() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut cfg = test_server("odd.server", &[("QUIVER_TEST_MCP_ODD_NAMES", "1")]);
    cfg.disabled_tools = vec!["crash".into(), "freeze".into()];
    let m = manager(vec![cfg], cache.path());
    discover(&m, "odd.server").await.unwrap();
    let host = host(&m);
    let engine = host.engine();
    let mcp: Vec<String> = engine.registry().names().filter(|n| n.starts_with("mcp__")).map(str::to_string).collect();
    assert!(!mcp.iter().any(|n| n.ends_with("__crash") || n.ends_with("__freeze")), "{mcp:?}");
    for name in &mcp {
        assert!(name.len() <= 64, "{name}");
        assert!(name.starts_with("mcp__odd_server__"), "{name}");
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{name}");
    }
    let risk = |n: &str| engine.registry().get(n).map(|t| t.spec.risk);
    assert_eq!(risk("mcp__odd_server__pid"), Some(Risk::Read));
    assert_eq!(risk("mcp__odd_server__wipe"), Some(Risk::Destructive));
    assert_eq!(risk("mcp__odd_server__echo"), Some(Risk::External));

    // `dot.name` and `dot_name` both sanitize to `dot_name`: both get hashes,
    // and each still reaches its own tool.
    let dotted: Vec<&String> = mcp.iter().filter(|n| n.starts_with("mcp__odd_server__dot_name")).collect();
    assert_eq!(dotted.len(), 2, "{mcp:?}");
    let mut ctx = host_context(&host, ws.path(), Mode::Yolo);
    let mut answers = Vec::new();
    for name in dotted {
        answers.push(text(&call(&host, &mut ctx, name, json!({})).await));
    }
    answers.sort();
    assert_eq!(answers, ["called dot.name", "called dot_name"]);

    // MCP tools are deferred unless the mode is yolo; the native head is the same.
    let agent = engine.catalog(&Audience::default(), &[]);
    let yolo = engine.catalog(&Audience { mode: Mode::Yolo, ..Audience::default() }, &[]);
    assert!(agent.head.iter().all(|t| t.is_native()));
    assert!(yolo.head.iter().any(|t| t.name == "mcp__odd_server__echo"));
    let native = |c: &quiver_engine::Catalog| c.head.iter().filter(|t| t.is_native()).cloned().collect::<Vec<_>>();
    assert_eq!(native(&agent), native(&yolo));
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_kinds_map_onto_results() {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    discover(&m, "t").await.unwrap();
    let host = host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Yolo);

    let img = call(&host, &mut ctx, "mcp__t__image", json!({})).await;
    let body = text(&img);
    assert!(body.contains("a picture:") && body.contains("[image image/png") && body.contains("a note"), "{body}");
    assert_eq!(img.metadata["mcp_content"][0]["type"], json!("image"));

    let fail = call(&host, &mut ctx, "mcp__t__fail", json!({})).await;
    assert!(fail.is_error && text(&fail).contains("failed on purpose"), "{}", text(&fail));

    let sum = call(&host, &mut ctx, "mcp__t__add", json!({"a": 1, "b": 2})).await;
    assert_eq!(sum.content, json!({"sum": 3}));
    m.shutdown().await;
}
