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

fn conformance(suite: &quiver_testkit::Conformance, url: &str, scenario: &str) -> (bool, String) {
    let results = tempfile::tempdir().unwrap(); // the suite writes results/ into its cwd
    let (ok, report) = suite.server(url, &["--scenario", scenario], results.path());
    (ok && report.contains("0 failed"), report)
}

#[tokio::test]
async fn conformance_server_initialize_and_tools_list_pass() {
    let Some(suite) = quiver_testkit::conformance_or_skip() else { return };
    let suite = std::sync::Arc::new(suite);
    let dir = tempfile::tempdir().unwrap();
    let server = http(dir.path(), &[], &[]).await;
    let url = server.url.clone();
    for scenario in ["server-initialize", "tools-list"] {
        let (url, suite) = (url.clone(), suite.clone());
        let (ok, report) = tokio::task::spawn_blocking(move || conformance(&suite, &url, scenario)).await.unwrap();
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

/// The real binary, configured as a user would (`expose = "direct"` in their
/// own config file), in front of `quiver-conformance-mcp`: the whole active
/// server suite passes. The test server is a binary of `quiver-mcp`, built
/// beside `quiver` by `cargo test --workspace` (`cargo build -p quiver-mcp
/// --bin quiver-conformance-mcp` otherwise). It once failed now and then on
/// `tools-call-with-progress`: the last progress notification reached the
/// client after the answer (see `quiver_mcp::client::ordered`).
#[tokio::test]
async fn conformance_server_suite_passes_through_quiver_mcp_serve() {
    let Some(suite) = quiver_testkit::conformance_or_skip() else { return };
    let downstream = quiver_bin().with_file_name("quiver-conformance-mcp");
    if !downstream.is_file() {
        quiver_testkit::require_or_skip(
            "the quiver-conformance-mcp test server beside quiver",
            "cargo build -p quiver-mcp --bin quiver-conformance-mcp",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join(".test-user-config");
    std::fs::create_dir_all(&user).unwrap();
    let config = format!(
        "[mcp_servers.conformance]\ncommand = {}\nexpose = \"direct\"\n",
        serde_json::to_string(&downstream.display().to_string()).unwrap()
    );
    std::fs::write(user.join("config.toml"), config).unwrap();
    let server = http(dir.path(), &[], &[]).await;
    let url = server.url.clone();
    let results = tempfile::tempdir().unwrap();
    let (ok, report) = tokio::task::spawn_blocking(move || suite.server(&url, &[], results.path())).await.unwrap();
    let total = report.lines().find(|l| l.starts_with("Total: ")).unwrap_or_default().to_string();
    assert!(ok && !total.is_empty() && !total.starts_with("Total: 0 "), "{report}");
}
