//! `quiver mcp serve` driven by the official MCP SDK clients, as agent hosts
//! built on them would drive it: the Python SDK (PyPI `mcp`, `.ci/run`
//! installs it into a venv and names its interpreter in `QUIVER_TEST_MCP_PY`)
//! and the TypeScript SDK (`@modelcontextprotocol/client` from the npm test
//! packages), each over stdio and HTTP at 2025-11-25 (initialize) and
//! 2026-07-28 (stateless). Each run of a client script
//! (`mcp_support/sdk_client.py`, `crates/mcp/tests/node/sdk_client.mjs`)
//! lists, searches, calls the tool the search loaded, a deprecated alias and a
//! tool with a bad argument, and prints what it saw as JSON; the assertions
//! are here. Missing SDKs skip, or fail under `QUIVER_REQUIRE_ALL`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::mcp_support::*;
use serde_json::Value;

/// Names the Python interpreter that has the `mcp` package (`.ci/run` sets it).
const MCP_PY: &str = "QUIVER_TEST_MCP_PY";
const LEGACY: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";

enum Sdk {
    Python,
    TypeScript,
}

/// The interpreter and the script, or `None` after `require_or_skip`.
fn sdk_or_skip(sdk: &Sdk) -> Option<(PathBuf, PathBuf)> {
    match sdk {
        Sdk::Python => {
            let how = "python3 -m venv DIR && DIR/bin/pip install mcp==2.3.0, then QUIVER_TEST_MCP_PY=DIR/bin/python; \
                       .ci/run does so";
            let python = std::env::var_os(MCP_PY).filter(|p| !p.is_empty()).map(PathBuf::from);
            let importable = python.as_ref().is_some_and(|python| {
                std::process::Command::new(python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success())
            });
            if !importable {
                quiver_testkit::require_or_skip("the MCP Python SDK (PyPI mcp) in $QUIVER_TEST_MCP_PY", how);
                return None;
            }
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_support/sdk_client.py");
            Some((python.unwrap(), script))
        }
        Sdk::TypeScript => {
            quiver_testkit::npm_package_or_skip("@modelcontextprotocol/client/package.json")?;
            // Beside package.json, so that its bare imports resolve to the pinned SDK.
            let script = quiver_testkit::node_modules().join("../sdk_client.mjs");
            // The SDK needs Node.js 20; CI's Node.js 22 where the machine's is older.
            let node = match std::env::var_os(quiver_testkit::CONFORMANCE_NODE) {
                Some(node) if !node.is_empty() => PathBuf::from(node),
                _ => quiver_testkit::program_or_skip("node", "install Node.js, which brings npm")?,
            };
            Some((node, script.canonicalize().unwrap_or(script)))
        }
    }
}

/// Runs the SDK's script against `target` (`--url URL` or `-- quiver mcp
/// serve ...`) and returns its summary. The environment keeps the user's own
/// config out of a stdio server, which inherits it through the SDK. Also
/// returns what the client wrote on stderr (the SDKs log their warnings there).
async fn run_client(
    interpreter: &Path,
    script: &Path,
    revision: &str,
    target: &[String],
    workspace: &Path,
) -> (Value, String) {
    let mut cmd = tokio::process::Command::new(interpreter);
    cmd.arg(script)
        .arg(revision)
        .args(target)
        .current_dir(workspace)
        .env("QUIVER_CONFIG_DIR", workspace.join(".test-user-config"))
        .env("QUIVER_CACHE_DIR", workspace.join(".test-cache"))
        .env("QUIVER_STATE_DIR", workspace.join(".test-state"))
        .env("QUIVER_LOG", "warn")
        .env_remove("QUIVER_MCP_TOKEN")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    // A ceiling against a client that hangs, not a guess at how long it takes.
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .expect("the SDK client did not finish within 180 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK client failed ({}):\n{stdout}\n{stderr}", out.status);
    let last = stdout.lines().last().unwrap_or_default();
    let summary = serde_json::from_str(last).unwrap_or_else(|e| panic!("no JSON summary ({e}):\n{stdout}\n{stderr}"));
    (summary, stderr.into_owned())
}

fn names_of(list: &Value) -> Vec<String> {
    list.as_array().expect("a list of names").iter().map(|n| n.as_str().unwrap().to_string()).collect()
}

/// The catalog head's names, what every client's first `tools/list` must show.
fn head_names(workspace: &Path) -> Vec<String> {
    catalog_mcp(workspace, &[])
        .iter()
        .map(|tool| serde_json::from_str::<Value>(tool).unwrap()["name"].as_str().unwrap().to_string())
        .collect()
}

/// Checks one run's summary: what issue 43 asks of every SDK at every revision.
fn check(s: &Value, revision: &str, head: &[String]) {
    let all = serde_json::to_string_pretty(s).unwrap();
    assert!(s.get("fatal").is_none(), "the SDK client broke:\n{all}");
    assert_eq!(s["protocol_version"], revision, "{all}");
    assert_eq!(names_of(&s["head"]), head, "tools/list must be the catalog head:\n{all}");

    assert_eq!(s["search"]["is_error"], false, "{all}");
    assert!(s["search"]["text"].as_str().unwrap().contains("project_map"), "{all}");
    let after = names_of(&s["after_search"]);
    assert_eq!(&after[..head.len()], head, "the head must not move:\n{all}");
    assert!(after[head.len()..].contains(&"project_map".to_string()), "the loaded tool must be listed:\n{all}");
    if revision == LEGACY {
        assert_eq!(s["list_changed_seen"], 1, "a session is told the list changed:\n{all}");
    } else {
        // No session to keep the tail in: the client carries it (and sent it back above).
        assert_eq!(s["search"]["tail_token"], true, "{all}");
    }

    assert_eq!(s["loaded_call"]["is_error"], false, "{all}");
    assert!(s["loaded_call"]["text"].as_str().unwrap().contains("main.rs"), "{all}");

    let alias = &s["alias_call"];
    assert_eq!(alias["is_error"], false, "{all}");
    assert_eq!(alias["meta"]["_deprecation"]["this_tool"], "todo_write", "the alias's notice:\n{all}");
    assert_eq!(alias["meta"]["_deprecation"]["use_instead"], "checklist_write", "{all}");
    assert_eq!(alias["text"], s["canonical_call"]["text"], "an alias answers as its canonical twin:\n{all}");
    assert!(s["canonical_call"]["meta"].get("_deprecation").is_none(), "{all}");

    // A wrong type is the model's mistake to correct: a tool error naming the
    // argument, which the SDK hands back as a result rather than an exception.
    let bad = &s["bad_argument"];
    assert_eq!(bad["is_error"], true, "a bad argument must be a tool error:\n{all}");
    let said = bad["text"].as_str().unwrap();
    assert!(said.contains("`path`") && said.contains("expected string"), "the error must say what is wrong:\n{all}");
}

async fn over_stdio(sdk: Sdk, revision: &str) {
    let Some((interpreter, script)) = sdk_or_skip(&sdk) else { return };
    let dir = workspace();
    let quiver = quiver_bin().display().to_string();
    let target = ["--", &quiver, "mcp", "serve", "--workspace", &dir.path().display().to_string()].map(String::from);
    let (summary, _) = run_client(&interpreter, &script, revision, &target, dir.path()).await;
    check(&summary, revision, &head_names(dir.path()));
}

async fn over_http(sdk: Sdk, revision: &str) {
    let Some((interpreter, script)) = sdk_or_skip(&sdk) else { return };
    let dir = workspace();
    let server = http(dir.path(), &[], &[]).await;
    let target = ["--url".to_string(), server.url.clone()];
    let (summary, stderr) = run_client(&interpreter, &script, revision, &target, dir.path()).await;
    check(&summary, revision, &head_names(dir.path()));
    // Closing a session (2025-11-25) deletes it; the Python SDK warned
    // "Session termination failed: 202" while quiver answered 202.
    assert!(!stderr.contains("termination failed"), "closing the session must succeed:\n{stderr}");
}

#[tokio::test]
async fn python_sdk_stdio_2025_11_25() {
    over_stdio(Sdk::Python, LEGACY).await;
}

#[tokio::test]
async fn python_sdk_stdio_2026_07_28() {
    over_stdio(Sdk::Python, STATELESS).await;
}

#[tokio::test]
async fn python_sdk_http_2025_11_25() {
    over_http(Sdk::Python, LEGACY).await;
}

#[tokio::test]
async fn python_sdk_http_2026_07_28() {
    over_http(Sdk::Python, STATELESS).await;
}

#[tokio::test]
async fn typescript_sdk_stdio_2025_11_25() {
    over_stdio(Sdk::TypeScript, LEGACY).await;
}

#[tokio::test]
async fn typescript_sdk_stdio_2026_07_28() {
    over_stdio(Sdk::TypeScript, STATELESS).await;
}

#[tokio::test]
async fn typescript_sdk_http_2025_11_25() {
    over_http(Sdk::TypeScript, LEGACY).await;
}

#[tokio::test]
async fn typescript_sdk_http_2026_07_28() {
    over_http(Sdk::TypeScript, STATELESS).await;
}
