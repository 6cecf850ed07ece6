//! A server exposed directly (`expose = "direct"`) is transparent to the
//! byte: over stdio, what `quiver mcp serve` answers to a `tools/call` is
//! what `@modelcontextprotocol/server-everything` answers to the same call
//! made directly, over stdio and over streamable HTTP: no `_meta` or `isError` added, every field kept, keys in
//! the server's order and numbers as it wrote them (`1`, not `1.0`). Both
//! sides are read as raw JSON-RPC lines, never parsed into rmcp's types.
//! Skips without the npm packages (fails under `QUIVER_REQUIRE_ALL`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use crate::client_support::{direct_surface, stdio_server};
use crate::gateway_call_stream::RawClient;

/// A JSON-RPC client that writes and reads lines.
struct LineClient<R, W> {
    read: BufReader<R>,
    write: W,
    next: u64,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineClient<R, W> {
    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// The answer line to a new request, as the peer wrote it (other lines,
    /// notifications and the peer's own requests, are skipped).
    async fn request(&mut self, method: &str, params: Value) -> String {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let mut line = String::new();
            let read = tokio::time::timeout(Duration::from_secs(30), self.read.read_line(&mut line)).await;
            assert!(read.expect("an answer within 30 s").unwrap() > 0, "the peer closed before answering {method}");
            let parsed: Value = serde_json::from_str(&line).unwrap();
            if parsed.get("id") == Some(&json!(id)) && parsed.get("method").is_none() {
                return line.trim_end().to_string();
            }
        }
    }

    async fn initialize(&mut self) {
        let params =
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
        let answer = self.request("initialize", params).await;
        assert!(answer.contains("\"result\""), "{answer}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    }
}

/// The `result` member of an answer line, as text: everything after
/// `"result":` up to the envelope's closing brace (both peers write the
/// envelope's other members first or last; the text between is compared).
fn result_text(line: &str) -> String {
    let value: Value = serde_json::from_str(line).unwrap();
    assert!(value.get("result").is_some(), "not a result: {line}");
    // Find the result member's own bytes: parse with a raw-value envelope.
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        result: &'a serde_json::value::RawValue,
    }
    let envelope: Envelope<'_> = serde_json::from_str(line).unwrap();
    untimed(envelope.result.get())
}

/// server-everything stamps dynamic resources with the time they were made.
fn untimed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" created at ") {
        out.push_str(&rest[..at]);
        out.push_str(" created at <time>");
        rest = &rest[at + " created at ".len()..];
        let end = rest.find('"').unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `surface` served over an in-memory stdio pair, with an initialized client.
async fn gateway_over_stdio(
    surface: &Arc<quiver_mcp::server::Surface>,
) -> (tokio::task::JoinHandle<anyhow::Result<()>>, LineClient<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving = tokio::spawn(quiver_mcp::server::serve_io(Arc::clone(surface), server_read, server_write));
    let (read, write) = tokio::io::split(client_end);
    let mut gateway = LineClient { read: BufReader::new(read), write, next: 0 };
    gateway.initialize().await;
    (serving, gateway)
}

/// server-everything started by the test itself, called with no gateway.
async fn everything_direct(
    script: &str,
) -> (tokio::process::Child, LineClient<tokio::process::ChildStdout, tokio::process::ChildStdin>) {
    let mut child = tokio::process::Command::new("node")
        .args([script, "stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut direct =
        LineClient { read: BufReader::new(child.stdout.take().unwrap()), write: child.stdin.take().unwrap(), next: 0 };
    direct.initialize().await;
    (child, direct)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_servers_results_pass_through_byte_for_byte() {
    let Some(script) = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")
    else {
        return;
    };
    let script = script.to_string_lossy().to_string();
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = stdio_server("everything", "node", &[&script, "stdio"], &[]);
    let surface = direct_surface(vec![config], cache.path(), ws.path());

    let (serving, mut gateway) = gateway_over_stdio(&surface).await;

    let (_child, mut direct) = everything_direct(&script).await;

    let cases = [
        ("echo", json!({"message": "hi \u{e9}\u{1f600} \"quoted\""})),
        ("get-sum", json!({"a": 2, "b": 3.5})),
        ("get-tiny-image", json!({})),
        ("get-annotated-message", json!({"messageType": "error", "includeImage": true})),
        ("get-annotated-message", json!({"messageType": "success", "includeImage": false})),
        ("get-structured-content", json!({"location": "Chicago"})),
        ("get-resource-links", json!({"count": 2})),
        ("get-resource-reference", json!({"resourceType": "Text", "resourceId": 2})),
        // Calls the server's schema refuses: its own answer, not quiver's check.
        ("echo", json!({"message": 5})),
        ("get-sum", json!({"a": "two"})),
        ("get-sum", json!({})),
    ];
    for (tool, args) in &cases {
        let params = json!({"name": tool, "arguments": args});
        let want = result_text(&direct.request("tools/call", params.clone()).await);
        let got = result_text(&gateway.request("tools/call", params).await);
        assert_eq!(got, want, "{tool} {args}: the gateway changed the bytes of the result");
        assert!(!got.contains("\"_meta\""), "{got}");
    }

    // tools/list: each of the server's entries is listed as it wrote it
    // (`execution`, annotations, `$schema`, key order), beside quiver's own.
    #[derive(serde::Deserialize)]
    struct Tools<'a> {
        #[serde(borrow)]
        tools: Vec<&'a serde_json::value::RawValue>,
    }
    let want_line = direct.request("tools/list", json!({})).await;
    let got_line = gateway.request("tools/list", json!({})).await;
    let want: Value = serde_json::from_str(&want_line).unwrap();
    let got: Value = serde_json::from_str(&got_line).unwrap();
    let (want_result, got_result) = (result_text(&want_line), result_text(&got_line));
    let want_tools: Tools<'_> = serde_json::from_str(&want_result).unwrap();
    let got_tools: Tools<'_> = serde_json::from_str(&got_result).unwrap();
    let got_entries: Vec<&str> = got_tools.tools.iter().map(|t| t.get()).collect();
    assert!(want_tools.tools.len() >= 10, "{want}");
    for entry in &want_tools.tools {
        assert!(
            got_entries.contains(&entry.get()),
            "the gateway's list lacks {} as written; it has {got}",
            entry.get()
        );
    }
    assert!(got_entries.len() > want_tools.tools.len(), "quiver's own tools are listed too");

    // The same calls over streamable HTTP: each answer's SSE `data:` line
    // holds the server's bytes too.
    // reqwest is built without a default TLS provider; this test must not
    // lean on another test of the binary having installed one first.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let options = quiver_mcp::server::HttpOptions { listen: None, allow_remote: false, token: None };
    let http = quiver_mcp::server::HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let url = http.url();
    tokio::spawn(http.run());
    let mut client = HttpLineClient {
        raw: RawClient { http: reqwest::Client::new(), url, session: None, version: "2025-06-18" },
        next: 0,
    };
    client.initialize().await;
    for (tool, args) in &cases[..3] {
        let params = json!({"name": tool, "arguments": args});
        let want = result_text(&direct.request("tools/call", params.clone()).await);
        let got = result_text(&client.request("tools/call", params).await);
        assert_eq!(got, want, "{tool} {args} over HTTP: the gateway changed the bytes of the result");
    }

    drop(gateway);
    let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
    surface.shutdown().await;
}

/// The `tools` entries of a `tools/list` answer line, each as its text.
fn listed_entries(line: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Tools<'a> {
        #[serde(borrow)]
        tools: Vec<&'a serde_json::value::RawValue>,
    }
    let result = result_text(line);
    let tools: Tools<'_> = serde_json::from_str(&result).unwrap();
    tools.tools.iter().map(|t| t.get().to_string()).collect()
}

/// With a warm tool cache, quiver answers a client's first `tools/list`
/// before the server behind is started, and most clients keep that list for
/// the whole session: its entries must be the server's as written too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_cache_lists_a_direct_servers_tools_as_it_wrote_them() {
    let Some(script) = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")
    else {
        return;
    };
    let script = script.to_string_lossy().to_string();
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();

    let (_child, mut direct) = everything_direct(&script).await;
    let want = listed_entries(&direct.request("tools/list", json!({})).await);
    assert!(want.len() >= 10 && want.iter().any(|e| e.contains("\"execution\"")), "{want:?}");

    // Two gateways in turn on one cache: the first discovers the server (a
    // cold cache) and leaves its list in the cache; the second answers from it.
    for run in ["cold", "warm"] {
        let config = stdio_server("everything", "node", &[&script, "stdio"], &[]);
        let surface = direct_surface(vec![config], cache.path(), ws.path());
        let (serving, mut gateway) = gateway_over_stdio(&surface).await;
        let got = listed_entries(&gateway.request("tools/list", json!({})).await);
        for entry in &want {
            assert!(got.contains(entry), "{run} cache: the first list lacks {entry} as written; it has {got:?}");
        }
        if run == "cold" {
            let cached = std::fs::read_dir(cache.path()).map(|d| d.count()).unwrap_or(0);
            assert!(cached > 0, "the first gateway left no tool list in the cache");
        }
        drop(gateway);
        let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
        surface.shutdown().await;
    }
}

/// A streamable-HTTP JSON-RPC client that keeps each answer's `data:` text.
struct HttpLineClient {
    raw: RawClient,
    next: u64,
}

impl HttpLineClient {
    async fn post(&self, body: Value) -> reqwest::Response {
        self.raw.post(body).await
    }

    /// The answer's JSON text as it came in its `data:` line (or the body).
    async fn request(&mut self, method: &str, params: Value) -> String {
        self.next += 1;
        let id = self.next;
        let response = self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.raw.session = Some(session.to_str().unwrap().to_string());
        }
        let body = response.text().await.unwrap();
        let answer = body.lines().map(|line| line.strip_prefix("data:").map_or(line, str::trim_start)).find(|data| {
            serde_json::from_str::<Value>(data)
                .is_ok_and(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
        });
        answer.unwrap_or_else(|| panic!("no answer to {method} in {body}")).to_string()
    }

    async fn initialize(&mut self) {
        let params =
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
        let answer = self.request("initialize", params).await;
        assert!(answer.contains("\"result\""), "{answer}");
        let response = self.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert!(response.status().is_success(), "{}", response.status());
    }
}
