//! What a downstream server sends its client during a tool call reaches the
//! client in front of `quiver mcp serve --transport http` on that call's own
//! SSE stream, before the call's answer: log messages, progress,
//! `roots/list`, `sampling/createMessage` and `elicitation/create`. The
//! client here is raw HTTP (reqwest) and never opens the standalone GET
//! stream (the spec lets it): anything sent there would never arrive.

use std::sync::Arc;

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::config::Expose;
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};
use serde_json::{Value, json};

use crate::client_support::{full_host, manager, test_server};

/// The gateway over streamable HTTP, fronting the test server as a direct
/// server (its tools keep their names).
async fn gateway(dirs: &[tempfile::TempDir]) -> (Arc<Surface>, String) {
    let mut server = test_server("misbehaver", &[]);
    server.expose = Expose::Direct;
    let manager = manager(vec![server], dirs[0].path());
    let host = full_host(&manager);
    let audience = Audience { mode: Mode::Agent, ..Audience::default() };
    let surface = Arc::new(Surface::hosted(host, manager, Workspace::new(dirs[1].path()).unwrap(), audience));
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    (surface, url)
}

/// A streamable-HTTP client of raw POSTs (also `gateway_verbatim`'s).
pub(crate) struct RawClient {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
}

impl RawClient {
    pub async fn post(&self, body: Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request.body(body.to_string()).send().await.unwrap()
    }
}

/// The JSON-RPC messages of complete SSE events in `buffer`, which keeps the
/// unfinished rest.
fn take_events(buffer: &mut String) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Some(end) = buffer.find("\n\n") {
        let event: String = buffer.drain(..end + 2).collect();
        let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
        if let Ok(message) = serde_json::from_str::<Value>(&data.join("\n")) {
            messages.push(message);
        }
    }
    messages
}

/// A short name for each message, in the order it came.
fn describe(message: &Value) -> String {
    match message["method"].as_str() {
        Some("notifications/message") => format!("log:{}", message["params"]["data"].as_str().unwrap_or("?")),
        Some("notifications/progress") => format!("progress:{}", message["params"]["progress"]),
        Some(method) => method.to_string(),
        None => format!("answer:{}", message["id"]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_a_server_sends_during_a_call_rides_that_calls_stream() {
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let (surface, url) = gateway(&dirs).await;
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let mut client = RawClient { http: reqwest::Client::new(), url, session: None };

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"elicitation": {}, "sampling": {}, "roots": {"listChanged": false}},
        "clientInfo": {"name": "no-get-stream", "version": "0"}}});
    let response = client.post(init).await;
    client.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_string());
    assert!(response.text().await.unwrap().contains("\"result\""));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(client.post(initialized).await.status().is_success());
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}});
    assert!(client.post(level).await.text().await.unwrap().contains("\"result\""));

    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "ask_client", "arguments": {}, "_meta": {"progressToken": "mine"}}});
    let mut stream = client.post(call).await;
    let mut buffer = String::new();
    let mut seen: Vec<String> = Vec::new();
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Some(chunk) = stream.chunk().await.unwrap() {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            for message in take_events(&mut buffer) {
                seen.push(describe(&message));
                let result = match message["method"].as_str() {
                    Some("roots/list") => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
                    Some("sampling/createMessage") => json!({"role": "assistant", "model": "test",
                        "content": {"type": "text", "text": "sampled upstream"}}),
                    // quiver's own approval question (a yes/no form), or the server's
                    Some("elicitation/create") => {
                        let approval = message["params"]["requestedSchema"]["properties"].get("approve").is_some();
                        let content = if approval { json!({"approve": true}) } else { json!({"name": "ada"}) };
                        json!({"action": "accept", "content": content})
                    }
                    _ if message["id"] == 3 => return message,
                    _ => continue,
                };
                let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                assert!(client.post(reply).await.status().is_success());
            }
        }
        Value::Null
    })
    .await;
    let answer = outcome.unwrap_or_else(|_| panic!("no answer on the call's stream within 30 s; it carried {seen:?}"));
    let said: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        said,
        json!({"roots": 1, "sampled": {"type": "text", "text": "sampled upstream"},
        "elicited": {"name": "ada"}})
    );

    // In the order the server sent them (quiver's approval question may come
    // first), every one of them before the answer.
    let relayed: Vec<&str> = seen.iter().map(String::as_str).collect();
    let expected = [
        "log:asking the client",
        "progress:1.0",
        "roots/list",
        "sampling/createMessage",
        "elicitation/create",
        "progress:2.0",
        "log:the client answered",
        "answer:3",
    ];
    let tail = &relayed[relayed.len().saturating_sub(expected.len())..];
    assert_eq!(tail, expected, "the call's stream carried {seen:?}");
    surface.shutdown().await;
}
