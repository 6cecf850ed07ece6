//! A downstream server that crashes, hangs, floods or talks garbage costs only
//! its own calls: each failure is a clear error, the next call gets a fresh
//! process, and other servers never notice. All against `quiver-test-mcp`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::client_support::*;
use quiver_mcp::client::{ConnState, ServerError};
use serde_json::{Map, Value, json};

fn args(v: Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

fn ok_text(r: Result<rmcp::model::CallToolResult, ServerError>) -> String {
    match r {
        Ok(result) => serde_json::to_value(&result)
            .ok()
            .and_then(|v| v["content"][0]["text"].as_str().map(str::to_string))
            .unwrap_or_default(),
        Err(e) => panic!("expected success, got: {e}"),
    }
}

fn err_text(r: Result<rmcp::model::CallToolResult, ServerError>) -> String {
    match r {
        Ok(result) => panic!("expected an error, got {result:?}"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_call_shows_stderr_and_the_next_call_restarts() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let server = m.server("t").unwrap();
    let pid1 = host_pid(server, ok_text(server.call("pid", None).await).parse().unwrap());

    let e = err_text(server.call("crash", args(json!({"code": 9}))).await);
    assert!(e.contains("MCP server `t` exited while running `crash`"), "{e}");
    assert!(e.contains("crashing on purpose (boom)"), "stderr tail missing: {e}");
    assert!(e.contains("next call restarts it"), "{e}");
    let status = server.status();
    assert_eq!(status.state, ConnState::Failed);
    assert!(status.last_error.unwrap_or_default().contains("boom"));

    let pid2 = host_pid(server, ok_text(server.call("pid", None).await).parse().unwrap());
    assert_ne!(pid1, pid2, "a new process must serve the next call");
    assert_eq!(server.status().state, ConnState::Connected);
    assert_eq!(server.status().starts, 2);
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_tool_times_out_and_the_responsive_server_is_kept() {
    let cache = tempfile::tempdir().unwrap();
    let mut cfg = test_server("t", &[]);
    // Short for `hang`, which never answers; the ordinary calls around it are
    // patient (`call_patiently`), so a loaded machine cannot fail them.
    cfg.tool_timeout = Duration::from_millis(400);
    let m = manager(vec![cfg], cache.path());
    let server = m.server("t").unwrap();
    let pid1 = ok_text(call_patiently(server, "pid", None).await);

    // `hang` never answers: returning at all shows the timeout is enforced.
    let e = err_text(server.call("hang", None).await);
    assert!(e.contains("did not answer `hang` within 400 ms"), "{e}");
    assert!(e.contains("tool_timeout_ms"), "{e}");
    assert!(e.contains("still responsive"), "{e}");

    assert_eq!(ok_text(call_patiently(server, "echo", args(json!({"text": "still here"}))).await), "still here");
    assert_eq!(ok_text(call_patiently(server, "pid", None).await), pid1, "a slow tool must not cost the process");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_server_is_stopped_and_restarted() {
    let cache = tempfile::tempdir().unwrap();
    let mut cfg = test_server("t", &[]);
    // Short for `freeze`; the ordinary calls around it are patient.
    cfg.tool_timeout = Duration::from_millis(400);
    let m = manager(vec![cfg], cache.path());
    let server = m.server("t").unwrap();
    let pid1 = host_pid(server, ok_text(call_patiently(server, "pid", None).await).parse().unwrap());

    // Without the timeout the call would come back after a minute, thawed, as
    // a success: the error alone shows it was cut short.
    let e = err_text(server.call("freeze", args(json!({"ms": 60000}))).await);
    assert!(e.contains("did not answer a ping either, so it was stopped"), "{e}");
    assert_eq!(server.status().state, ConnState::Failed);

    let pid2 = host_pid(server, ok_text(call_patiently(server, "pid", None).await).parse().unwrap());
    assert_ne!(pid1, pid2);
    // The frozen process was killed, not leaked.
    assert!(eventually(|| !alive(pid1)).await, "frozen server {pid1} still running");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_floods_are_drained_and_bounded() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let server = m.server("t").unwrap();
    let out = ok_text(server.call("flood_stderr", args(json!({"bytes": 8_000_000}))).await);
    assert!(out.starts_with("wrote"), "{out}");
    assert_eq!(ok_text(server.call("echo", args(json!({"text": "after flood"}))).await), "after flood");
    // stderr is drained on its own task, which may lag behind the answers.
    assert!(eventually(|| server.stderr_tail().ends_with("flood done")).await, "no `flood done` on stderr");
    let tail = server.stderr_tail();
    assert!(tail.ends_with("flood done"), "{}", &tail[tail.len().saturating_sub(200)..]);
    assert!(tail.len() <= 2100, "tail is bounded: {}", tail.len());
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdout_junk_is_skipped() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let server = m.server("t").unwrap();
    let out = ok_text(server.call("flood_stdout", args(json!({"lines": 20000}))).await);
    assert_eq!(out, "wrote 20000 junk lines to stdout");
    assert_eq!(ok_text(server.call("echo", args(json!({"text": "clean"}))).await), "clean");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_answer_fails_only_that_call() {
    let cache = tempfile::tempdir().unwrap();
    let mut cfg = test_server("t", &[]);
    // Short for `garbage`, which may never give a usable answer; `echo` is patient.
    cfg.tool_timeout = Duration::from_millis(800);
    let m = manager(vec![cfg], cache.path());
    let server = m.server("t").unwrap();
    let e = err_text(server.call("garbage", None).await);
    eprintln!("garbage answer -> {e}");
    assert!(e.contains("MCP server `t`") && e.contains("`garbage`"), "{e}");
    assert_eq!(ok_text(call_patiently(server, "echo", args(json!({"text": "fine"}))).await), "fine");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_failures_are_clear() {
    let cache = tempfile::tempdir().unwrap();
    let mut hang = test_server("hang", &[("QUIVER_TEST_MCP_START", "hang")]);
    hang.startup_timeout = Duration::from_millis(700);
    let mut garbage = test_server("garbage", &[("QUIVER_TEST_MCP_START", "garbage")]);
    garbage.startup_timeout = Duration::from_millis(700);
    let crash = test_server("crash", &[("QUIVER_TEST_MCP_START", "crash")]);
    let missing = stdio_server("missing", "/nonexistent/quiver-no-such-server", &[], &[]);
    let m = manager(vec![hang, garbage, crash, missing], cache.path());

    let e = err_text(m.server("crash").unwrap().call("echo", None).await);
    assert!(e.contains("MCP server `crash` failed to start"), "{e}");
    assert!(e.contains("missing FAKE_API_KEY"), "stderr tail missing: {e}");

    let e = err_text(m.server("hang").unwrap().call("echo", None).await);
    assert!(e.contains("did not finish starting within 700 ms (startup_timeout_ms in test-config.toml)"), "{e}");
    assert!(e.contains("starting very slowly"), "{e}");

    let e = err_text(m.server("garbage").unwrap().call("echo", None).await);
    assert!(e.contains("did not finish starting") || e.contains("failed to start"), "{e}");

    let e = err_text(m.server("missing").unwrap().call("echo", None).await);
    assert!(e.contains("could not start `/nonexistent/quiver-no-such-server`"), "{e}");

    for name in ["crash", "hang", "garbage", "missing"] {
        assert_eq!(m.server(name).unwrap().status().state, ConnState::Failed, "{name}");
    }
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_servers_are_untouched() {
    let cache = tempfile::tempdir().unwrap();
    let mut bad = test_server("bad", &[]);
    bad.tool_timeout = Duration::from_secs(600); // the kill below ends the frozen call, not a timer
    let m = manager(vec![bad, test_server("good", &[])], cache.path());
    let good = m.server("good").unwrap().clone();
    let good_pid = ok_text(good.call("pid", None).await);

    // While `bad` is frozen, `good` answers. No clock decides this: the frozen
    // call only ends when its process is killed below, so a `good` that
    // waited on `bad` would time out its own calls instead of answering.
    let bad_server = m.server("bad").unwrap().clone();
    let bad_pid = host_pid(&bad_server, ok_text(bad_server.call("pid", None).await).parse().unwrap());
    let frozen = tokio::spawn(async move { bad_server.call("freeze", args(json!({"ms": 600_000}))).await });
    let bad_server = m.server("bad").unwrap();
    assert!(eventually(|| bad_server.stderr_tail().contains("freezing")).await, "`bad` never froze");
    for i in 0..20 {
        let text = format!("ping {i}");
        assert_eq!(ok_text(good.call("echo", args(json!({"text": text}))).await), text);
    }
    assert!(!frozen.is_finished(), "the frozen call ended before its process was killed");
    let _ = std::process::Command::new("kill").args(["-9", &bad_pid.to_string()]).status();
    let e = err_text(frozen.await.unwrap());
    assert!(e.contains("exited while running `freeze`"), "{e}");

    // A crash of `bad` does not touch `good` either.
    let _ = m.server("bad").unwrap().call("crash", None).await;
    assert_eq!(ok_text(good.call("pid", None).await), good_pid);
    assert_eq!(good.status().state, ConnState::Connected);
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_the_whole_process_group() {
    let cache = tempfile::tempdir().unwrap();
    // `sh` stays the parent (the trailing `true` stops it from exec'ing), so
    // the server is a grandchild: only a process-group kill reaches it.
    let script = format!("{TEST_SERVER}; true");
    let m = manager(vec![stdio_server("wrapped", "sh", &["-c", &script], &[])], cache.path());
    let server = m.server("wrapped").unwrap();
    let pid = host_pid(server, ok_text(server.call("pid", None).await).parse().unwrap());
    let sh = server.status().pid.unwrap();
    assert_ne!(pid, sh);
    assert!(alive(pid));
    m.shutdown().await;
    eventually(|| !alive(pid) && !alive(sh)).await;
    assert!(!alive(pid), "grandchild {pid} survived shutdown");
    assert!(!alive(sh), "wrapper {sh} survived shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_manager_kills_its_servers() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let server = m.server("t").unwrap();
    let pid = host_pid(server, ok_text(server.call("pid", None).await).parse().unwrap());
    drop(m);
    assert!(eventually(|| !alive(pid)).await, "server {pid} outlived its manager");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_between_calls_shows_as_failed_and_restarts() {
    let cache = tempfile::tempdir().unwrap();
    let m = manager(vec![test_server("t", &[])], cache.path());
    let server = m.server("t").unwrap();
    let pid = host_pid(server, ok_text(server.call("pid", None).await).parse().unwrap());
    // Killed from outside while idle.
    let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
    eventually(|| server.status().state == ConnState::Failed).await;
    let status = server.status();
    assert_eq!(status.state, ConnState::Failed);
    assert!(status.last_error.unwrap_or_default().contains("exited since its last call"));
    assert_eq!(ok_text(server.call("echo", args(json!({"text": "back"}))).await), "back");
    assert_eq!(server.status().state, ConnState::Connected);
    m.shutdown().await;
}

/// A server's `setsid` child leaves its process group (and session), so the
/// group kill misses it; the server's containment job finds and kills it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_a_setsid_child_of_the_server() {
    let cache = tempfile::tempdir().unwrap();
    let pidfile = cache.path().join("escaped.pid");
    let script = format!("setsid sh -c 'echo $$ > {}; exec sleep 300' & {TEST_SERVER}; true", pidfile.display());
    let m = manager(vec![stdio_server("escaper", "sh", &["-c", &script], &[])], cache.path());
    let server = m.server("escaper").unwrap();
    let _: u32 = ok_text(server.call("pid", None).await).parse().unwrap();
    eventually(|| std::fs::read_to_string(&pidfile).is_ok_and(|s| s.trim().parse::<u32>().is_ok())).await;
    let escaped = host_pid(server, std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap());
    assert!(alive(escaped));
    m.shutdown().await;
    eventually(|| !alive(escaped)).await;
    assert!(!alive(escaped), "the server's setsid child {escaped} survived shutdown");
}

/// A stdio server runs in a PID namespace of its own: quiver (this test
/// process) is not in its `/proc`, cannot be signalled, and the namespace's
/// init, a fork of quiver's, keeps its memory (and environ) to itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_sees_only_its_own_processes() {
    if let Err(why) = &quiver_sandbox::probe().namespaces {
        assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "no namespaces: {why}");
        quiver_testkit::require_or_skip("user namespaces", &why.to_string());
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path();
    let quiver = std::process::id();
    // What the server's own start sees, written where the test reads it.
    let script = format!(
        "ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' ' > {o}/pids; \
         kill -0 {quiver} 2>/dev/null && echo signalled > {o}/signal || echo refused > {o}/signal; \
         cat /proc/{quiver}/cmdline > {o}/cmdline 2>/dev/null; \
         cat /proc/1/environ > {o}/init_environ 2>/dev/null; \
         exec {TEST_SERVER}",
        o = out.display()
    );
    let m = manager(vec![stdio_server("peeker", "sh", &["-c", &script], &[])], cache.path());
    let server = m.server("peeker").unwrap();
    assert_eq!(ok_text(server.call("echo", args(json!({"text": "up"}))).await), "up");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    let pids: Vec<u32> = read("pids").split_whitespace().map(|p| p.parse().unwrap()).collect();
    assert!(!pids.is_empty(), "the server listed no process at all");
    assert!(!pids.contains(&quiver), "quiver ({quiver}) is in the server's /proc: {pids:?}");
    assert!(pids.len() < 10, "the server sees the host's processes: {pids:?}");
    assert_eq!(read("signal").trim(), "refused", "the server could signal quiver");
    assert_eq!(read("cmdline"), "", "the server read quiver's command line");
    assert_eq!(read("init_environ"), "", "the server read its namespace's init (a fork of quiver)");
    // It still works as a server, and quiver still stops it.
    let pid = host_pid(server, ok_text(server.call("pid", None).await).parse().unwrap());
    assert!(alive(pid) && pid != quiver);
    m.shutdown().await;
    assert!(eventually(|| !alive(pid)).await, "server {pid} outlived shutdown");
}
