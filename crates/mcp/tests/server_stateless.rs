//! MCP 2026-07-28 over streamable HTTP, as a raw client sends it: no
//! `initialize`, no `Mcp-Session-Id`, the version and capabilities in each
//! request's `_meta`; and a 2025-11-25 session on the same listener.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crate::server_support::*;
use quiver_engine::Mode;
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const V: &str = "2026-07-28";

async fn start(surface: Arc<Surface>, limits: quiver_mcp::server::http::HttpLimits) -> String {
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind_with_limits(surface, options, limits).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    url
}

async fn started() -> (String, tempfile::TempDir) {
    let (surface, dir) = surface(Mode::Agent);
    (start(surface, Default::default()).await, dir)
}

/// The `_meta` a 2026-07-28 request carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// What came back: the HTTP status, the session id header if any, the
/// content type, and the JSON-RPC message (from a JSON body or the one SSE
/// event that holds a result or an error).
struct Answer {
    status: u16,
    session: Option<String>,
    content_type: String,
    message: Value,
}

/// POSTs one request with `headers` (name, value) and `params` as given.
async fn post(url: &str, method: &str, params: Value, headers: &[(&str, &str)]) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    // reqwest is built without a bundled TLS provider; plain http needs none,
    // but the client builder still wants one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string());
    let session = header("mcp-session-id");
    let content_type = header("content-type").unwrap_or_default();
    let text = response.text().await.unwrap();
    let message = if content_type.starts_with("text/event-stream") {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    Answer { status, session, content_type, message }
}

/// A well-formed 2026-07-28 request of `method` (`name`: the tool's, for the
/// `Mcp-Name` header); `_meta` members in `params` are kept.
async fn request(url: &str, method: &str, name: Option<&str>, mut params: Value) -> Answer {
    let mut full = meta();
    if let Some(given) = params.get("_meta").and_then(Value::as_object) {
        full.as_object_mut().unwrap().extend(given.clone());
    }
    params["_meta"] = full;
    let mut headers = vec![("MCP-Protocol-Version", V), ("Mcp-Method", method)];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    post(url, method, params, &headers).await
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

async fn call_tool(url: &str, name: &str, arguments: Value) -> Answer {
    request(url, "tools/call", Some(name), json!({"name": name, "arguments": arguments})).await
}

fn call_text(answer: &Answer) -> String {
    answer.message["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn discover_answers_without_a_session() {
    let (url, _dir) = started().await;
    let answer = request(&url, "server/discover", None, json!({})).await;
    assert_eq!(answer.status, 200, "{}", answer.message);
    assert_eq!(answer.session, None, "no session is minted");
    assert!(answer.content_type.starts_with("application/json"), "{}", answer.content_type);
    let result = &answer.message["result"];
    let versions: Vec<&str> =
        result["supportedVersions"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(versions.contains(&V) && versions.contains(&"2025-11-25"), "{versions:?}");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["capabilities"]["tools"], json!({"listChanged": true}), "on subscriptions/listen");
    assert!(result["capabilities"].get("logging").is_none(), "{result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "quiver");
    assert!(result["instructions"].as_str().unwrap().contains("tool_search"));
}

#[tokio::test]
async fn tools_list_is_the_head_with_cache_hints() {
    let (url, _dir) = started().await;
    let answer = request(&url, "tools/list", None, json!({})).await;
    assert_eq!(answer.status, 200, "{}", answer.message);
    assert_eq!(answer.session, None);
    assert_eq!(tool_names(&answer.message), ["explode", "json_info", "say", "tool_search"]);
    let result = &answer.message["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], quiver_mcp::server::stateless::STABLE_TTL_MS);
    assert_eq!(result["cacheScope"], "public");
}

/// Calls go through dispatch as a session's do; what a request loads does
/// not outlive it unless the client carries it back (see below), but a
/// found tool is callable by name.
#[tokio::test]
async fn tools_call_goes_through_dispatch() {
    let (url, _dir) = started().await;
    let said = call_tool(&url, "say", json!({"text": "hi"})).await;
    assert_eq!(said.status, 200, "{}", said.message);
    assert_eq!(said.session, None);
    assert_eq!(call_text(&said), "hi");
    assert_eq!(said.message["result"]["resultType"], "complete", "{}", said.message);

    let failed = call_tool(&url, "explode", json!({})).await;
    assert_eq!(failed.message["result"]["isError"], true, "{}", failed.message);

    let found = call_tool(&url, "tool_search", json!({"query": "weather forecast"})).await;
    assert!(call_text(&found).contains("weather_lookup"), "{}", found.message);
    let list = request(&url, "tools/list", None, json!({})).await;
    assert_eq!(tool_names(&list.message), ["explode", "json_info", "say", "tool_search"]);
    let weather = call_tool(&url, "weather_lookup", json!({"city": "Lima"})).await;
    assert_eq!(call_text(&weather), "sunny in Lima", "{}", weather.message);

    // A tool that asks first is refused, not left waiting: a stateless
    // request cannot be asked anything (yet).
    let asked = call_tool(&url, "wipe_cache", json!({})).await;
    assert_eq!(asked.status, 200, "{}", asked.message);
    assert_eq!(asked.message["result"]["isError"], true, "{}", asked.message);
}

#[tokio::test]
async fn errors_are_the_revisions() {
    let (url, _dir) = started().await;

    // A version quiver does not speak: 400, -32022, with what it speaks.
    let mut params = json!({"_meta": meta()});
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let unsupported =
        post(&url, "tools/list", params, &[("MCP-Protocol-Version", "2099-01-01"), ("Mcp-Method", "tools/list")]).await;
    assert_eq!(unsupported.status, 400, "{}", unsupported.message);
    assert_eq!(unsupported.message["error"]["code"], -32022, "{}", unsupported.message);
    let data = unsupported.message["error"]["data"].to_string();
    assert!(data.contains(V) && data.contains("2025-11-25"), "{data}");

    // A method the revision removed: 404, -32601, whatever its params (as
    // the conformance suite sends them: nothing but `_meta`) ...
    for method in ["ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        let removed = request(&url, method, None, json!({})).await;
        assert_eq!(removed.status, 404, "{method}: {}", removed.message);
        assert_eq!(removed.message["error"]["code"], -32601, "{method}: {}", removed.message);
    }
    // ... and with well-formed ones.
    let set_level = request(&url, "logging/setLevel", None, json!({"level": "debug"})).await;
    assert_eq!((set_level.status, &set_level.message["error"]["code"]), (404, &json!(-32601)), "{}", set_level.message);
    let subscribe = request(&url, "resources/subscribe", Some("test://x"), json!({"uri": "test://x"})).await;
    assert_eq!((subscribe.status, &subscribe.message["error"]["code"]), (404, &json!(-32601)), "{}", subscribe.message);

    // Headers that disagree with the body: 400, -32020.
    let mismatch = post(
        &url,
        "tools/list",
        json!({"_meta": meta()}),
        &[("MCP-Protocol-Version", V), ("Mcp-Method", "tools/call")],
    )
    .await;
    assert_eq!(mismatch.status, 400, "{}", mismatch.message);
    assert_eq!(mismatch.message["error"]["code"], -32020, "{}", mismatch.message);
    let wrong_name = post(
        &url,
        "tools/call",
        json!({"_meta": meta(), "name": "say", "arguments": {"text": "x"}}),
        &[("MCP-Protocol-Version", V), ("Mcp-Method", "tools/call"), ("Mcp-Name", "explode")],
    )
    .await;
    assert_eq!(wrong_name.status, 400, "{}", wrong_name.message);
    assert_eq!(wrong_name.message["error"]["code"], -32020, "{}", wrong_name.message);

    // Required `_meta` missing (the client's capabilities): 400, -32602.
    let mut params = json!({"_meta": meta()});
    params["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
    let missing = post(&url, "tools/list", params, &[("MCP-Protocol-Version", V), ("Mcp-Method", "tools/list")]).await;
    assert_eq!(missing.status, 400, "{}", missing.message);
    assert_eq!(missing.message["error"]["code"], -32602, "{}", missing.message);
}

/// One listener, both eras: an rmcp client at 2025-11-25 initializes, lists
/// and calls in its session while stateless requests come and go; and a
/// full session cap refuses a new session, not a stateless request.
#[tokio::test]
async fn a_2025_11_25_session_works_beside_stateless_requests() {
    let (surface, _dir) = surface(Mode::Agent);
    let limits = quiver_mcp::server::http::HttpLimits { max_sessions: 1, ..Default::default() };
    let url = start(surface, limits).await;
    assert_eq!(request(&url, "tools/list", None, json!({})).await.status, 200);

    let transport =
        StreamableHttpClientTransport::from_config(StreamableHttpClientTransportConfig::with_uri(url.clone()));
    let client = TestClient::default().serve(transport).await.expect("2025-11-25 handshake");
    assert_eq!(
        client.peer_info().unwrap().protocol_version.as_str(),
        "2025-11-25",
        "an initialize settles on a session revision"
    );
    assert_eq!(names(&list(&client).await), ["explode", "json_info", "say", "tool_search"]);
    let found = call(&client, "tool_search", json!({"query": "weather forecast"})).await;
    assert!(text(&found).contains("weather_lookup"));
    assert_eq!(names(&list(&client).await).last().unwrap(), "weather_lookup", "a session keeps its tail");

    // The one session slot is taken: a new session is refused, a stateless request is not.
    assert_eq!(raw_initialize(&url, &[]).await, 503);
    let said = call_tool(&url, "say", json!({"text": "still here"})).await;
    assert_eq!(call_text(&said), "still here", "{}", said.message);
    assert_eq!(text(&call(&client, "say", json!({"text": "and here"})).await), "and here");
}

/// What a call loads comes back as a signed tail; sent back, it is that
/// client's list (private), and grows only by its own searches. A tail
/// changed by the client, or none, is the head.
#[tokio::test]
async fn a_client_carries_its_tail() {
    let (url, _dir) = started().await;
    let said = call_tool(&url, "say", json!({"text": "hi"})).await;
    assert!(said.message["result"]["_meta"].get("quiver/tail").is_none(), "nothing loaded: {}", said.message);

    let found = call_tool(&url, "tool_search", json!({"query": "weather forecast"})).await;
    let tail = found.message["result"]["_meta"]["quiver/tail"].clone();
    assert_eq!(tail["loaded"], json!(["weather_lookup"]), "{}", found.message);

    let list = |tail: Value| {
        let url = url.clone();
        async move { request(&url, "tools/list", None, json!({"_meta": {"quiver/tail": tail}})).await }
    };
    let mine = list(tail.clone()).await;
    assert_eq!(tool_names(&mine.message), ["explode", "json_info", "say", "tool_search", "weather_lookup"]);
    assert_eq!(mine.message["result"]["cacheScope"], "private");

    // Another search in the same client's requests adds to its tail.
    let params =
        json!({"name": "tool_search", "arguments": {"query": "stock price quote"}, "_meta": {"quiver/tail": tail}});
    let more = request(&url, "tools/call", Some("tool_search"), params).await;
    let grown = more.message["result"]["_meta"]["quiver/tail"].clone();
    assert_eq!(grown["loaded"], json!(["weather_lookup", "stock_quote"]), "{}", more.message);
    let names = tool_names(&list(grown).await.message);
    assert_eq!(names[4..], ["weather_lookup", "stock_quote"]);

    // Another client (no tail) sees the head; a tail the client rewrote is no tail.
    let other = list(Value::Null).await;
    assert_eq!(tool_names(&other.message), ["explode", "json_info", "say", "tool_search"]);
    assert_eq!(other.message["result"]["cacheScope"], "public");
    let mut forged = tail.clone();
    forged["loaded"] = json!(["wipe_cache"]);
    assert_eq!(tool_names(&list(forged).await.message), ["explode", "json_info", "say", "tool_search"]);
}

/// Over stdio a 2026-07-28 client opens with a request carrying its `_meta`
/// (no `initialize`): rmcp answers `server/discover` and serves the rest in
/// the connection's session, through the same handler.
#[tokio::test]
async fn stdio_speaks_2026_07_28_too() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (surface, _dir) = surface(Mode::Agent);
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(quiver_mcp::server::serve_io(surface, server_read, server_write));
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut ask = async |id: u64, method: &str, mut params: Value| {
        params["_meta"] = meta();
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        loop {
            let next = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line()).await;
            let message: Value = serde_json::from_str(&next.unwrap().unwrap().unwrap()).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    };
    let discover = ask(1, "server/discover", json!({})).await;
    assert!(discover["result"]["supportedVersions"].to_string().contains(V), "{discover}");
    let list = ask(2, "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["explode", "json_info", "say", "tool_search"]);
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["cacheScope"], "public");
    let said = ask(3, "tools/call", json!({"name": "say", "arguments": {"text": "over stdio"}})).await;
    assert_eq!(said["result"]["content"][0]["text"], "over stdio", "{said}");
    let ping = ask(4, "ping", json!({})).await;
    assert_eq!(ping["error"]["code"], -32601, "{ping}");
}

/// `subscriptions/listen` is acknowledged on its stream with what quiver
/// accepted (tool list changes; no resources or prompts with no servers
/// behind), and the stream stays open for what comes.
#[tokio::test]
async fn subscriptions_listen_is_acknowledged() {
    let (url, _dir) = started().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true, "promptsListChanged": true}, "_meta": meta()}});
    let mut response = reqwest::Client::new()
        .post(&url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", V)
        .header("Mcp-Method", "subscriptions/listen")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("mcp-session-id").is_none());
    let mut seen = String::new();
    let ack = loop {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), response.chunk()).await;
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("the acknowledgement within 10 s").unwrap().unwrap()));
        let found = seen
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|m| m["method"] == "notifications/subscriptions/acknowledged");
        if let Some(ack) = found {
            break ack;
        }
    };
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}), "{ack}");
    // Still open: no final result yet.
    let more = tokio::time::timeout(std::time::Duration::from_millis(300), response.chunk()).await;
    assert!(
        more.is_err() || !String::from_utf8_lossy(&more.unwrap().unwrap().unwrap_or_default()).contains("\"result\"")
    );
}
