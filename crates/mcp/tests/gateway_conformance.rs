//! The official conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance@0.2.0-alpha.12 server`) run against
//! the gateway — `quiver mcp serve`'s surface over streamable HTTP on
//! loopback — fronting `quiver-conformance-mcp`, a server of ours that
//! implements what the scenarios call, configured with `expose = "direct"`
//! in the user's config file. Two runs: the active suite at its default
//! revision (the 2025-11-25 session lifecycle) and `--spec-version
//! 2026-07-28` (stateless requests). Only what the downstream server says,
//! forwarded unchanged, can pass them. Both runs take the expected-failures
//! baseline `conformance-baseline.yml` (a reason for each entry): the suite
//! fails a run on a failure not listed, and on a listed one that passes, so
//! a stale excuse fails CI. One run each, no re-run. Skips when the npm
//! packages, or a Node.js 22 to run the suite, are not installed (fails
//! under `QUIVER_REQUIRE_ALL`); install with `npm ci --prefix
//! crates/mcp/tests/node` (see `quiver_testkit::conformance_or_skip`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::config::{ConfigSources, McpConfig};
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};

use crate::client_support::full_host;

pub const CONFORMANCE_SERVER: &str = env!("CARGO_BIN_EXE_quiver-conformance-mcp");

/// A gateway over the conformance server, configured as a user would:
/// `[mcp_servers.conformance]` with `expose = "direct"` in their own config.
pub fn direct_gateway(user_config: &std::path::Path, cache: &std::path::Path, ws: &std::path::Path) -> Arc<Surface> {
    let toml = format!(
        "[mcp_servers.conformance]\ncommand = {}\nexpose = \"direct\"\n",
        serde_json::to_string(CONFORMANCE_SERVER).unwrap()
    );
    let file = user_config.join("config.toml");
    std::fs::write(&file, toml).unwrap();
    let sources = ConfigSources { files: vec![file], project_files: vec![], workspace: Some(ws.to_path_buf()) };
    let config = McpConfig::load(&sources).unwrap();
    let manager = crate::client_support::manager(config.servers.into_values().collect(), cache);
    let host = full_host(&manager);
    let audience = Audience { mode: Mode::Agent, ..Audience::default() };
    Arc::new(Surface::hosted(host, manager, Workspace::new(ws).unwrap(), audience))
}

/// The direct gateway served over streamable HTTP on loopback, with `n`
/// temporary directories (the first three its config, cache and workspace).
pub(crate) async fn http_gateway(n: usize) -> (Vec<tempfile::TempDir>, Arc<Surface>, String) {
    let dirs: Vec<tempfile::TempDir> = (0..n).map(|_| tempfile::tempdir().unwrap()).collect();
    let surface = direct_gateway(dirs[0].path(), dirs[1].path(), dirs[2].path());
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    (dirs, surface, url)
}

/// `passed` and `failed` from the suite's summary line (`Total: N passed, M failed`).
fn counts(report: &str) -> Option<(u32, u32)> {
    let line = report.lines().find(|l| l.starts_with("Total: ") && l.contains(" passed, "))?;
    let number_before = |word: &str| -> Option<u32> {
        let at = line.find(word)?;
        line[..at].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty())?.parse().ok()
    };
    Some((number_before(" passed")?, number_before(" failed")?))
}

/// The expected-failures baseline both runs take.
const BASELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance-baseline.yml");

/// One run of the suite's server scenarios with `args` through a fresh
/// gateway; fails unless the suite exits with success against the baseline.
async fn server_scenarios_pass(revision: &str, args: &[&str]) {
    let Some(suite_bin) = quiver_testkit::conformance_or_skip() else { return };
    let (dirs, surface, url) = http_gateway(4).await;

    let results = dirs[3].path().to_path_buf(); // the suite writes results/ into its cwd
    let results_dir = results.clone();
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.extend(["--expected-failures".to_string(), BASELINE.to_string()]);
    let started = std::time::Instant::now();
    let (ok, report) = tokio::task::spawn_blocking(move || {
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        suite_bin.server(&url, &all, &results)
    })
    .await
    .unwrap();
    let (passed, failed) = counts(&report).unwrap_or_else(|| panic!("no summary in the suite's output:\n{report}"));
    eprintln!(
        "{report}\nconformance server ({revision}) through the gateway: {passed} passed, {failed} failed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        ok && passed > 0,
        "{revision}: {passed} passed, {failed} failed (against {BASELINE}):\n{report}\nfailed checks:\n{}",
        failed_checks(&results_dir)
    );
    surface.shutdown().await;
}

/// The active suite at its default revision: `initialize` sessions.
/// `QUIVER_CONFORMANCE_SUITE` picks another `--suite` by hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_active_server_scenario_passes_through_the_gateway() {
    let suite = std::env::var("QUIVER_CONFORMANCE_SUITE").unwrap_or_else(|_| "active".into());
    server_scenarios_pass(&format!("{suite} suite, default revision"), &["--suite", &suite]).await;
}

/// The scenarios of MCP 2026-07-28 (stateless requests, `server/discover`,
/// `ttlMs` / `cacheScope`, the revision's header and error rules).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_2026_07_28_server_scenario_passes_through_the_gateway() {
    server_scenarios_pass("2026-07-28", &["--spec-version", "2026-07-28"]).await;
}

/// The suite's per-scenario `checks.json` files under `dir` that hold a
/// failed check, whole: the summary line says only which scenario failed.
fn failed_checks(dir: &std::path::Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if text.contains("FAILURE") {
                    out.push_str(&format!("{}:\n{text}\n", path.display()));
                }
            }
        }
    }
    out
}

/// A downstream server's elicitation, relayed during a tool call, reaches the
/// client on that call's own response stream: the client here never opens
/// the standalone GET stream (the spec lets it), so a request sent there
/// would never arrive and the call would hang.
/// (It answers quiver's own approval question too, should one come first.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_elicitation_rides_the_calls_own_stream() {
    let (_dirs, surface, url) = http_gateway(3).await;

    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let http = reqwest::Client::new();
    let post = |session: Option<String>, body: serde_json::Value| {
        let mut req = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.body(body.to_string()).send()
    };
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "no-get-stream", "version": "0"}}});
    let response = post(None, init).await.unwrap();
    let session = response.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_string();
    assert!(response.text().await.unwrap().contains("\"result\""));
    let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(post(Some(session.clone()), note).await.unwrap().status().is_success());

    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "who are you?"}}});
    let mut stream = post(Some(session.clone()), call).await.unwrap();
    let mut seen = String::new();
    let mut answered = std::collections::HashSet::new();
    let mut relayed = false;
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(chunk) = stream.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            for data in seen.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim) {
                let Ok(message) = serde_json::from_str::<serde_json::Value>(data) else { continue };
                if message["method"] == "elicitation/create" && answered.insert(message["id"].to_string()) {
                    // quiver's own approval question (a yes/no form), or the
                    // downstream server's question relayed
                    let approval = message["params"]["requestedSchema"]["properties"].get("approve").is_some();
                    let content = if approval {
                        serde_json::json!({"approve": true})
                    } else {
                        relayed = true;
                        serde_json::json!({"username": "ada", "email": "ada@example.com"})
                    };
                    let reply = serde_json::json!({"jsonrpc": "2.0", "id": message["id"],
                        "result": {"action": "accept", "content": content}});
                    assert!(post(Some(session.clone()), reply).await.unwrap().status().is_success());
                }
                if message["id"] == 2 {
                    return message;
                }
            }
        }
        serde_json::Value::Null
    })
    .await;
    let result = outcome.unwrap_or_else(|_| panic!("no answer on the call's stream within 20 s; it carried:\n{seen}"));
    assert!(relayed, "the downstream server's elicitation never came on the call's stream:\n{seen}");
    assert!(result.to_string().contains("ada"), "{result}");
    surface.shutdown().await;
}
