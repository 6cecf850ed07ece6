//! `quiver mcp serve` checked by MCP tools nobody here wrote: the official
//! conformance suite and the inspector CLI. Both come from npm; when they are
//! not installed the tests say so and pass without running, or fail under
//! `QUIVER_REQUIRE_ALL` (`.ci/run` installs them: `npm ci --prefix crates/mcp/tests/node`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use crate::mcp_support::*;
use serde_json::Value;

fn node_bin(name: &str) -> Option<PathBuf> {
    quiver_testkit::npm_package_or_skip(&format!(".bin/{name}"))
}

fn conformance(url: &str, scenario: &str) -> (bool, String) {
    let Some(bin) = node_bin("conformance") else { return (true, String::new()) };
    let results = tempfile::tempdir().unwrap(); // the suite writes results/ into its cwd
    let out = Command::new(bin)
        .args(["server", "--url", url, "--scenario", scenario])
        .current_dir(results.path())
        .output()
        .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success() && report.contains("0 failed"), report)
}

#[tokio::test]
async fn conformance_server_initialize_and_tools_list_pass() {
    if node_bin("conformance").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &[], &[]).await;
    let url = server.url.clone();
    for scenario in ["server-initialize", "tools-list"] {
        let url = url.clone();
        let (ok, report) = tokio::task::spawn_blocking(move || conformance(&url, scenario)).await.unwrap();
        assert!(ok, "conformance scenario {scenario} failed:\n{report}");
    }
}

#[test]
fn inspector_cli_lists_the_head() {
    let Some(inspector) = node_bin("mcp-inspector") else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(inspector)
        .arg("--cli")
        .arg(quiver_bin())
        .args(["mcp", "serve", "--workspace"])
        .arg(dir.path())
        .args(["--method", "tools/list"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "inspector failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let listed: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspector output is not JSON ({e}):\n{stdout}"));
    let tools: Vec<String> = listed["tools"].as_array().expect("tools array").iter().map(canonical).collect();
    assert_eq!(tools, catalog_mcp(dir.path(), &[]), "the inspector must see exactly the catalog head");
}
