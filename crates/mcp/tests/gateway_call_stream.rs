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
pub(crate) async fn gateway(dirs: &[tempfile::TempDir]) -> (Arc<Surface>, String) {
    gateway_with(dirs, &[]).await
}

pub(crate) async fn gateway_with(dirs: &[tempfile::TempDir], env: &[(&str, &str)]) -> (Arc<Surface>, String) {
    let mut server = test_server("misbehaver", env);
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
    /// The revision it speaks (its `mcp-protocol-version` header).
    pub version: &'static str,
}

impl RawClient {
    pub async fn post(&self, body: Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", self.version);
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

/// What the test client answers to a request the server relays to it.
pub(crate) fn reply_to(message: &Value) -> Option<Value> {
    let result = match message["method"].as_str()? {
        "roots/list" => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
        "sampling/createMessage" => json!({"role": "assistant", "model": "test",
            "content": {"type": "text", "text": "sampled upstream"}}),
        // quiver's own approval question (a yes/no form), or the server's
        "elicitation/create" => {
            let approval = message["params"]["requestedSchema"]["properties"].get("approve").is_some();
            let content = if approval { json!({"approve": true}) } else { json!({"name": "ada"}) };
            json!({"action": "accept", "content": content})
        }
        _ => return None,
    };
    Some(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
}

/// One call's SSE stream as the client reads it.
pub(crate) struct CallStream {
    response: reqwest::Response,
    buffer: String,
    /// A short name for each message it carried, in order.
    pub seen: Vec<String>,
}

impl CallStream {
    pub async fn start(client: &RawClient, id: i64, tool: &str, progress: &str) -> Self {
        let params = json!({"name": tool, "arguments": {}, "_meta": {"progressToken": progress}});
        CallStream::request(client, id, "tools/call", params).await
    }

    /// Any request's stream (a prompt's, a read's).
    pub async fn request(client: &RawClient, id: i64, method: &str, params: Value) -> Self {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        CallStream { response: client.post(request).await, buffer: String::new(), seen: Vec::new() }
    }

    /// Reads on, answering each request relayed to the client, until the
    /// answer to call `id` (returned), or until a request whose method is
    /// `pause_at` (returned unanswered).
    pub async fn run(&mut self, client: &RawClient, id: i64, pause_at: Option<&str>) -> Value {
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            loop {
                let Some(chunk) = self.response.chunk().await.unwrap() else { return Value::Null };
                self.buffer.push_str(&String::from_utf8_lossy(&chunk));
                for message in take_events(&mut self.buffer) {
                    self.seen.push(describe(&message));
                    if message["id"] == id && message["method"].is_null() {
                        return message;
                    }
                    if pause_at.is_some() && message["method"].as_str() == pause_at {
                        return message;
                    }
                    if let Some(reply) = reply_to(&message) {
                        assert!(client.post(reply).await.status().is_success());
                    }
                }
            }
        })
        .await;
        outcome.unwrap_or_else(|_| panic!("call {id}: nothing awaited within 30 s; its stream carried {:?}", self.seen))
    }
}

pub(crate) async fn open_session(url: &str, name: &str) -> RawClient {
    open_session_at(url, name, "debug").await
}

/// A session whose client asked for log messages at `level` and above.
async fn open_session_at(url: &str, name: &str, level: &str) -> RawClient {
    open_session_version(url, name, level, "2025-06-18").await
}

/// A session at `version`, its client asking for log messages at `level` and above.
pub(crate) async fn open_session_version(url: &str, name: &str, level: &str, version: &'static str) -> RawClient {
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let mut client = RawClient { http: reqwest::Client::new(), url: url.to_string(), session: None, version };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}, "sampling": {}, "roots": {"listChanged": false}},
        "clientInfo": {"name": name, "version": "0"}}});
    let response = client.post(init).await;
    client.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_string());
    assert!(response.text().await.unwrap().contains("\"result\""));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(client.post(initialized).await.status().is_success());
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": level}});
    assert!(client.post(level).await.text().await.unwrap().contains("\"result\""));
    client
}

/// The messages `ask_client` sends, in order, then its answer (to call 3).
const ASKED: [&str; 8] = [
    "log:asking the client",
    "progress:1.0",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
    "progress:2.0",
    "log:the client answered",
    "answer:3",
];

pub(crate) fn said(answer: &Value) -> Value {
    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_a_server_sends_during_a_call_rides_that_calls_stream() {
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let (surface, url) = gateway(&dirs).await;
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let client = open_session(&url, "no-get-stream").await;

    let mut call = CallStream::start(&client, 3, "ask_client", "mine").await;
    let answer = call.run(&client, 3, None).await;
    assert_eq!(
        said(&answer),
        json!({"roots": 1, "sampled": {"type": "text", "text": "sampled upstream"}, "elicited": {"name": "ada"}})
    );
    // In the order the server sent them (quiver's approval question may come
    // first), every one of them before the answer.
    let relayed: Vec<&str> = call.seen.iter().map(String::as_str).collect();
    let tail = &relayed[relayed.len().saturating_sub(ASKED.len())..];
    assert_eq!(tail, ASKED, "the call's stream carried {:?}", call.seen);
    surface.shutdown().await;
}

/// Two clients share the gateway's one connection to a server. While both
/// have a call in flight on it, a request the server sends cannot be told
/// apart (MCP does not say which call it belongs to): quiver refuses it,
/// and keeps the server's log messages in its own log, rather than hand
/// either to a client whose call it may not be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_request_is_refused_rather_than_sent_to_another_clients_call() {
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let (surface, url) = gateway(&dirs).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let alice = open_session(&url, "alice").await;
    let bob = open_session(&url, "bob").await;

    // Alice's call is in flight, waiting on her answer to `roots/list`.
    let mut hers = CallStream::start(&alice, 3, "ask_client", "alice").await;
    let roots = hers.run(&alice, 3, Some("roots/list")).await;

    // Bob's call asks too: refused, with the reason; none of it reaches Alice.
    let mut his = CallStream::start(&bob, 3, "ask_client", "bob").await;
    let answer = his.run(&bob, 3, None).await;
    let text = answer.to_string();
    assert!(text.contains("more than one client"), "Bob's call: {text}");
    assert!(!his.seen.iter().any(|m| m == "roots/list"), "Bob was asked: {:?}", his.seen);

    // Alice answers and gets her own answer; her stream carried only her call's messages.
    assert!(alice.post(reply_to(&roots).unwrap()).await.status().is_success());
    let answer = hers.run(&alice, 3, None).await;
    assert_eq!(said(&answer)["elicited"], json!({"name": "ada"}));
    let relayed: Vec<&str> = hers.seen.iter().map(String::as_str).collect();
    let tail = &relayed[relayed.len().saturating_sub(ASKED.len())..];
    assert_eq!(tail, ASKED, "Alice's stream carried {:?}", hers.seen);
    let asked = hers.seen.iter().filter(|m| *m == "log:asking the client").count();
    assert_eq!(asked, 1, "Bob's call's log reached Alice: {:?}", hers.seen);
    surface.shutdown().await;
}

/// Calls `log_each_level` (a log message at debug, info, warning and error)
/// as `client`: the log messages its stream carried, and the level the
/// server said it was set to.
async fn log_each_level(client: &RawClient, id: i64) -> (Vec<String>, String) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "log_each_level", "arguments": {}}});
    let mut stream = CallStream { response: client.post(call).await, buffer: String::new(), seen: Vec::new() };
    let answer = stream.run(client, id, None).await;
    let level = answer["result"]["content"][0]["text"].as_str().unwrap_or("?").to_string();
    (stream.seen.into_iter().filter(|m| m.starts_with("log:")).collect(), level)
}

/// Every client of an HTTP gateway shares its connection to a server, and a
/// server has one log level per connection: one client's `logging/setLevel`
/// must neither silence nor flood another. The server sends at the most
/// verbose level any client chose; each client gets its own level and
/// above; a client that leaves gives its level back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_gets_log_messages_at_its_own_level() {
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let (surface, url) = gateway_with(&dirs, &[("QUIVER_TEST_MCP_LOGGING", "1")]).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let alice = open_session_at(&url, "alice", "warning").await;
    let bob = open_session_at(&url, "bob", "debug").await;

    let (logs, level) = log_each_level(&alice, 3).await;
    assert_eq!(level, "debug", "the server is not at the most verbose level a client chose");
    assert_eq!(logs, ["log:warning", "log:error"], "Alice asked for warning and above");
    let (logs, _) = log_each_level(&bob, 3).await;
    assert_eq!(logs, ["log:debug", "log:info", "log:warning", "log:error"], "Bob asked for debug");

    // Bob leaves: the server goes back to Alice's level.
    let deleted = bob.http.delete(&bob.url).header("mcp-session-id", bob.session.clone().unwrap()).send().await;
    assert!(deleted.unwrap().status().is_success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut id = 4;
    loop {
        let (logs, level) = log_each_level(&alice, id).await;
        assert_eq!(logs, ["log:warning", "log:error"]);
        if level == "warning" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the server stayed at {level} after Bob left");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        id += 1;
    }
    surface.shutdown().await;
}

/// A server that never answers `logging/setLevel` holds up neither the
/// client's own `setLevel` nor its calls: each wait is bounded (2 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_set_level_holds_nothing_up() {
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let (surface, url) = gateway_with(&dirs, &[("QUIVER_TEST_MCP_LOGGING", "hang")]).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let started = std::time::Instant::now();
    let alice = open_session_at(&url, "alice", "warning").await; // the server starts and is set here
    let (logs, level) = log_each_level(&alice, 3).await;
    assert_eq!(level, "none", "the server never took a level");
    assert_eq!(logs, ["log:warning", "log:error"], "quiver still filters by Alice's level");
    let again = json!({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "error"}});
    assert!(alice.post(again).await.text().await.unwrap().contains("\"result\""));
    let elapsed = started.elapsed();
    assert!(elapsed < std::time::Duration::from_secs(15), "held up for {elapsed:?}");
    surface.shutdown().await;
}
