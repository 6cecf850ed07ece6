//! Shared by the `quiver mcp serve` binary tests: a recording rmcp client, and
//! helpers that start the real binary over stdio or HTTP.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolResult, Tool};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

pub fn quiver_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_quiver"))
}

pub use quiver_testkit::mcp_client::{Client, TestClient, call, list};
#[allow(unused_imports)] // only the HTTP tests use it
pub use quiver_testkit::raw_http::{raw_initialize, raw_request};

/// `quiver mcp serve` (stdio) in `workspace`, with extra args.
pub async fn stdio(workspace: &Path, extra: &[&str], handler: TestClient) -> Client {
    stdio_env(workspace, extra, &[], handler).await
}

/// Keeps the user's own config, approvals and tool cache out of the test: no
/// servers but the test's, and a cache private to this workspace (callers may
/// override either with their own env).
fn isolate(cmd: &mut tokio::process::Command, workspace: &Path) {
    cmd.env("QUIVER_CONFIG_DIR", workspace.join(".test-user-config"))
        .env("QUIVER_CACHE_DIR", workspace.join(".test-cache"))
        .env("QUIVER_STATE_DIR", workspace.join(".test-state"));
}

/// `quiver mcp serve` (stdio) with extra environment variables.
pub async fn stdio_env(workspace: &Path, extra: &[&str], envs: &[(&str, &str)], handler: TestClient) -> Client {
    let mut cmd = tokio::process::Command::new(quiver_bin());
    cmd.args(["mcp", "serve", "--workspace"]).arg(workspace).args(extra).env("QUIVER_LOG", "warn");
    isolate(&mut cmd, workspace);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::inherit()).spawn().unwrap();
    handler.serve(transport).await.expect("stdio handshake with quiver")
}

/// A running `quiver mcp serve --transport http`; killed on drop.
pub struct HttpQuiver {
    pub child: tokio::process::Child,
    pub url: String,
}

pub async fn http(workspace: &Path, extra: &[&str], envs: &[(&str, &str)]) -> HttpQuiver {
    let mut cmd = tokio::process::Command::new(quiver_bin());
    cmd.args(["mcp", "serve", "--transport", "http", "--workspace"])
        .arg(workspace)
        .args(extra)
        .env("QUIVER_LOG", "warn")
        .env_remove("QUIVER_MCP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    isolate(&mut cmd, workspace);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    // A ceiling against a server that never starts, not a guess at start time.
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("listening on ") {
                return url.trim().to_string();
            }
            eprintln!("quiver: {line}");
        }
        panic!("quiver exited before printing its address");
    })
    .await
    .expect("quiver printed no `listening on` line within 60 s");
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    HttpQuiver { child, url }
}

pub async fn http_client(url: &str, token: Option<&str>, handler: TestClient) -> Client {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    handler.serve(StreamableHttpClientTransport::from_config(config)).await.expect("HTTP handshake with quiver")
}

/// Canonical bytes: key-sorted, compact (what `quiver catalog` prints).
pub fn canonical(value: &Value) -> String {
    quiver_engine::canonical::to_string(value)
}

pub fn bytes(tool: &Tool) -> String {
    canonical(&serde_json::to_value(tool).unwrap())
}

pub fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .filter_map(|v| v.get("text").and_then(Value::as_str).map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `quiver catalog --format mcp` in `workspace`, one canonical string per tool.
pub fn catalog_mcp(workspace: &Path, extra: &[&str]) -> Vec<String> {
    let out = std::process::Command::new(quiver_bin())
        .args(["catalog", "--format", "mcp"])
        .args(extra)
        .current_dir(workspace)
        .env("QUIVER_CONFIG_DIR", workspace.join(".test-user-config"))
        .env("QUIVER_CACHE_DIR", workspace.join(".test-cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array().unwrap().iter().map(canonical).collect()
}

/// A small Rust project to serve: `src/main.rs` and a README.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "# demo\n").unwrap();
    dir
}
