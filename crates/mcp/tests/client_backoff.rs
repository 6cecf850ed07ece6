//! Restart backoff for a crashing stdio server: exponential, capped, reset
//! after a healthy period, shown in `mcp_servers`.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use quiver_engine::Mode;
use quiver_mcp::client::{Backoff, ConnState, ServerError};
use serde_json::{Value, json};

use crate::client_support::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loop_waits_longer_each_time_up_to_the_cap() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("loop", &[("QUIVER_TEST_MCP_START", "crash")])], cache.path());
    let server = m.server("loop").unwrap();
    server.set_backoff(Backoff { initial: ms(300), max: ms(700), healthy_after: ms(60_000) });

    // First failure: the restart right after is immediate.
    assert!(matches!(server.call("echo", None).await, Err(ServerError::StartFailed { .. })));
    assert_eq!(server.status().consecutive_failures, 1);
    assert_eq!(server.status().restart_in_ms, None);
    assert!(matches!(server.call("echo", None).await, Err(ServerError::StartFailed { .. })));
    assert_eq!(server.status().starts, 2);

    // Second failure: 300 ms before the next start; calls meanwhile fail at
    // once, saying so, and start nothing.
    let status = server.status();
    assert_eq!(status.consecutive_failures, 2);
    let wait = status.restart_in_ms.unwrap();
    assert!(wait > 0 && wait <= 300, "{wait}");
    let e = server.call("echo", None).await.unwrap_err();
    assert!(matches!(&e, ServerError::Backoff { failures: 2, .. }), "{e}");
    assert!(e.to_string().contains("restart backoff"), "{e}");
    assert!(e.to_string().contains("missing FAKE_API_KEY"), "the last failure is quoted: {e}");
    assert_eq!(server.status().starts, 2, "no start during the backoff");

    // Doubling (600 ms), then capped at 700 ms.
    tokio::time::sleep(ms(320)).await;
    assert!(matches!(server.call("echo", None).await, Err(ServerError::StartFailed { .. })));
    let wait = server.status().restart_in_ms.unwrap();
    assert!(wait > 300 && wait <= 600, "doubled: {wait}");
    tokio::time::sleep(ms(620)).await;
    assert!(matches!(server.call("echo", None).await, Err(ServerError::StartFailed { .. })));
    let wait = server.status().restart_in_ms.unwrap();
    assert!(wait > 600 && wait <= 700, "capped: {wait}");
    assert_eq!(server.status().consecutive_failures, 4);

    // mcp_servers shows it.
    let ws = tempfile::tempdir().unwrap();
    let host = full_host(&m);
    let mut ctx = host_context(&host, ws.path(), Mode::Agent);
    let listing: Value = serde_json::from_str(&text(&call(&host, &mut ctx, "mcp_servers", json!({})).await)).unwrap();
    let entry = &listing["servers"][0];
    assert_eq!(entry["state"], "failed", "{listing}");
    assert_eq!(entry["consecutiveFailures"], 4, "{listing}");
    assert!(entry["restartInMs"].as_u64().is_some_and(|w| w > 0 && w <= 700), "{listing}");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_period_forgets_earlier_crashes() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let server = m.server("t").unwrap();
    server.set_backoff(Backoff { initial: ms(400), max: ms(2000), healthy_after: ms(700) });
    let ok =
        |r: Result<rmcp::model::CallToolResult, ServerError>| r.unwrap().content[0].as_text().unwrap().text.clone();

    assert_eq!(ok(server.call("echo", Some(json!({"text": "a"}).as_object().unwrap().clone())).await), "a");
    assert!(server.call("crash", None).await.is_err());
    // Restarted at once; crashes again soon after: now a wait is due.
    assert_eq!(ok(server.call("echo", Some(json!({"text": "b"}).as_object().unwrap().clone())).await), "b");
    assert!(server.call("crash", None).await.is_err());
    assert_eq!(server.status().consecutive_failures, 2);
    assert!(server.status().restart_in_ms.is_some());
    assert!(matches!(server.call("pid", None).await, Err(ServerError::Backoff { .. })));

    tokio::time::sleep(ms(420)).await;
    assert_eq!(ok(server.call("echo", Some(json!({"text": "c"}).as_object().unwrap().clone())).await), "c");
    // Up for longer than the healthy period: the record is clean again...
    tokio::time::sleep(ms(750)).await;
    assert_eq!(server.status().consecutive_failures, 0);
    assert_eq!(server.status().state, ConnState::Connected);
    // ...so the next crash is a first failure, restarted at once.
    assert!(server.call("crash", None).await.is_err());
    assert_eq!(server.status().consecutive_failures, 1);
    assert_eq!(server.status().restart_in_ms, None);
    assert_eq!(ok(server.call("echo", Some(json!({"text": "d"}).as_object().unwrap().clone())).await), "d");
    m.shutdown().await;
}
