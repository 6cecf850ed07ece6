//! The official conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance@0.1.8 server --suite all`: the 24
//! active scenarios and the 4 pending ones) run
//! against the gateway — `quiver mcp serve`'s surface over streamable HTTP on
//! loopback — fronting `quiver-conformance-mcp`, a server of ours that
//! implements what the scenarios call, configured with `expose = "direct"`
//! in the user's config file. Every scenario must pass: only what the
//! downstream server says, forwarded unchanged, can pass them.
//! Skips when the npm packages are not installed (fails under
//! `QUIVER_REQUIRE_ALL`); install with `npm ci --prefix crates/mcp/tests/node`.
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

/// `passed` and `failed` from the suite's summary line (`Total: N passed, M failed`).
fn counts(report: &str) -> Option<(u32, u32)> {
    let line = report.lines().rev().find(|l| l.contains(" passed, ") && l.contains(" failed"))?;
    let number_before = |word: &str| -> Option<u32> {
        let at = line.find(word)?;
        line[..at].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty())?.parse().ok()
    };
    Some((number_before(" passed")?, number_before(" failed")?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_active_server_scenario_passes_through_the_gateway() {
    let Some(bin) = quiver_testkit::npm_package_or_skip(".bin/conformance") else { return };
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let surface = direct_gateway(dirs[0].path(), dirs[1].path(), dirs[2].path());
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());

    let results = dirs[3].path().to_path_buf(); // the suite writes results/ into its cwd
    let results_dir = results.clone();
    let suite = std::env::var("QUIVER_CONFORMANCE_SUITE").unwrap_or_else(|_| "all".into());
    let asked = suite.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(bin)
            .args(["server", "--url", &url, "--suite", &asked])
            .current_dir(results)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let (passed, failed) = counts(&report).unwrap_or_else(|| panic!("no summary in the suite's output:\n{report}"));
    eprintln!("{report}\nconformance server ({suite} suite) through the gateway: {passed} passed, {failed} failed");
    assert!(
        out.status.success() && failed == 0 && passed > 0,
        "{passed} passed, {failed} failed:\n{report}\nfailed checks:\n{}",
        failed_checks(&results_dir)
    );
    surface.shutdown().await;
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
