//! The HTTP call lane (`server::http_calls`): a session's call that the
//! gateway passes on unchanged is relayed from its POST, beside rmcp, and
//! answered as one JSON object; the session it uses stays alive though rmcp
//! never sees those calls; a client's `notifications/cancelled` reaches a
//! call on the lane. Against quiver's own test server, exposed directly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use quiver_mcp::server::http::{HttpLimits, HttpOptions, HttpServer};
use quiver_mcp::server::http_calls::Lanes;
use serde_json::{Value, json};

use crate::client_support::{direct_surface, test_server};
use crate::gateway_call_stream::{RawClient, open_session_version};

struct Gateway {
    url: String,
    lanes: Arc<Lanes>,
    surface: Arc<quiver_mcp::server::Surface>,
    _dirs: [tempfile::TempDir; 2],
}

async fn gateway(limits: HttpLimits) -> Gateway {
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let surface = direct_surface(vec![test_server("t", &[])], dirs[0].path(), dirs[1].path());
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind_with_limits(Arc::clone(&surface), options, limits).await.unwrap();
    let (url, lanes) = (server.url(), server.lanes());
    tokio::spawn(server.run());
    Gateway { url, lanes, surface, _dirs: dirs }
}

/// An initialized session that has listed its tools (a call before the
/// first list settles the servers behind first, through rmcp).
async fn session(url: &str) -> RawClient {
    let client = open_session_version(url, "lane-test", "info", "2025-11-25").await;
    let list = client.post(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).await;
    let listed = list.text().await.unwrap();
    assert!(listed.contains("\"pid\""), "the direct server's tools are listed: {listed}");
    client
}

async fn call(client: &RawClient, id: i64, tool: &str, arguments: Value) -> reqwest::Response {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    client.post(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_call_is_answered_beside_rmcp_as_one_json_object() {
    let gateway = gateway(HttpLimits::default()).await;
    let client = session(&gateway.url).await;
    let before = gateway.lanes.calls_taken();

    let response = call(&client, 10, "pid", json!({})).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let answer: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(answer["id"], 10);
    assert!(answer["result"]["content"][0]["text"].as_str().is_some_and(|t| t.parse::<u32>().is_ok()), "{answer}");
    assert_eq!(gateway.lanes.calls_taken(), before + 1, "the call went through rmcp, not the lane");

    // quiver's own tools, and a call with a protocol version header the
    // session did not negotiate, are rmcp's: answered as before.
    let own = call(&client, 11, "tool_search", json!({"query": "process id"})).await;
    assert!(own.text().await.unwrap().contains("\"result\""));
    let other_version = client
        .http
        .post(&client.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", client.session.as_deref().unwrap())
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "pid"}}).to_string())
        .send()
        .await
        .unwrap();
    assert!(other_version.text().await.unwrap().contains("\"result\""));
    assert_eq!(gateway.lanes.calls_taken(), before + 1, "only the plain relayed call took the lane");

    // An unknown session is rmcp's 404, whatever the body.
    let mut stranger = RawClient { session: Some("no-such-session".into()), ..client };
    stranger.version = "2025-11-25";
    assert_eq!(call(&stranger, 13, "pid", json!({})).await.status(), 404);
    gateway.surface.shutdown().await;
}

/// rmcp never sees a call on the lane, so its own idle timer would end a
/// session used only by such calls: quiver's sweep counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_busy_on_the_lane_stays_and_an_idle_one_ends() {
    let limits = HttpLimits { session_idle_timeout: Duration::from_millis(800), ..HttpLimits::default() };
    let gateway = gateway(limits).await;
    let busy = session(&gateway.url).await;
    let idle = session(&gateway.url).await;
    let before = gateway.lanes.calls_taken();
    for i in 0..10 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let response = call(&busy, 100 + i, "pid", json!({})).await;
        assert_eq!(response.status(), 200, "call {i}, {} ms in", 200 * (i + 1));
        assert!(response.text().await.unwrap().contains("\"result\""));
    }
    assert_eq!(gateway.lanes.calls_taken(), before + 10);
    // 2 s without a message: ended.
    assert_eq!(call(&idle, 200, "pid", json!({})).await.status(), 404);
    gateway.surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_on_the_lane_ends_with_no_answer() {
    let gateway = gateway(HttpLimits::default()).await;
    let client = Arc::new(session(&gateway.url).await);
    let before = gateway.lanes.calls_taken();
    let hanging = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { call(&client, 20, "hang", json!({})).await })
    };
    // Until the lane has it, a cancellation would find nothing to cancel.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while gateway.lanes.calls_taken() == before {
        assert!(tokio::time::Instant::now() < deadline, "the call never reached the lane");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 20, "reason": "changed my mind"}});
    assert_eq!(client.post(cancel).await.status(), 202);
    let response = tokio::time::timeout(Duration::from_secs(5), hanging).await.expect("ended at once").unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.text().await.unwrap(), "", "a cancelled call gets no answer");
    // The session goes on.
    assert!(call(&client, 21, "pid", json!({})).await.text().await.unwrap().contains("\"result\""));
    gateway.surface.shutdown().await;
}

/// A 2026-07-28 client's request: no session, what it is in `_meta` and
/// the standard headers.
async fn stateless_call(
    gateway: &Gateway,
    id: i64,
    tool: &str,
    arguments: Value,
    capabilities: Value,
    tail: Option<&Value>,
) -> Value {
    let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities});
    if let Some(tail) = tail {
        meta["quiver/tail"] = tail.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta}});
    stateless_post(gateway, "tools/call", Some(tool), body).await
}

async fn stateless_post(gateway: &Gateway, method: &str, name: Option<&str>, body: Value) -> Value {
    let mut request = reqwest::Client::new()
        .post(&gateway.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let response = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    // A plain answer, or the `data:` of an SSE stream's last event.
    let json = text.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The first stateless list pins the head every stateless request is shown.
async fn stateless_list(gateway: &Gateway) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let listed = stateless_post(gateway, "tools/list", None, body).await;
    assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {answer}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_calls_take_the_lane_each_answered_under_its_own_id() {
    let gateway = gateway(HttpLimits::default()).await;
    stateless_list(&gateway).await;
    let before = gateway.lanes.calls_taken();
    let answer = stateless_call(&gateway, 3, "pid", json!({}), json!({}), None).await;
    assert_eq!(answer["id"], 3);
    assert!(text_of(&answer).parse::<u32>().is_ok(), "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert!(answer["result"].get("_meta").is_none(), "nothing loaded, no tail: {answer}");
    assert_eq!(gateway.lanes.calls_taken(), before + 1, "the stateless call went through rmcp");

    // Two clients, one id, at once: each gets its own answer.
    let (slow, big) = tokio::join!(
        stateless_call(&gateway, 1, "slow", json!({"ms": 300}), json!({}), None),
        stateless_call(&gateway, 1, "big", json!({"bytes": 7}), json!({}), None),
    );
    assert_eq!(text_of(&slow), "done");
    assert_eq!(text_of(&big).len(), 7, "{big}");
    assert_eq!(gateway.lanes.calls_taken(), before + 3);

    // A client that could be asked something is rmcp's, answered the same way.
    let asked = stateless_call(&gateway, 4, "pid", json!({}), json!({"elicitation": {}}), None).await;
    assert_eq!(text_of(&asked), text_of(&answer));
    assert_eq!(gateway.lanes.calls_taken(), before + 3);
    gateway.surface.shutdown().await;
}

/// A tool behind search: calling it by name loads it, and the answer
/// carries the tail the client must send back, as rmcp's path answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_call_that_loads_answers_with_the_tail_as_the_general_path_does() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    // Agent mode: a tool behind search is deferred (in yolo every MCP tool is active).
    let manager = crate::client_support::manager(vec![test_server("t", &[])], dirs[0].path());
    let host = crate::client_support::full_host(&manager);
    let audience = quiver_engine::Audience { mode: quiver_engine::Mode::Agent, ..Default::default() };
    let workspace = quiver_engine::Workspace::new(dirs[1].path()).unwrap();
    let surface = Arc::new(quiver_mcp::server::Surface::hosted(host, manager, workspace, audience));
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let (url, lanes) = (server.url(), server.lanes());
    tokio::spawn(server.run());
    let gateway = Gateway { url, lanes, surface, _dirs: dirs };
    stateless_list(&gateway).await;

    // Discovering starts the server and makes its tools known (quiver's own
    // tool: rmcp's path); calling one by name then loads it.
    let discovered = stateless_call(&gateway, 1, "mcp_discover", json!({"server": "t"}), json!({}), None).await;
    assert!(discovered["result"]["isError"] != json!(true), "{discovered}");
    let first = stateless_call(&gateway, 2, "mcp__t__pid", json!({}), json!({}), None).await;
    let tail = first["result"]["_meta"]["quiver/tail"].clone();
    assert_eq!(tail["loaded"], json!(["mcp__t__pid"]), "{first}");
    let before = gateway.lanes.calls_taken();
    let again = stateless_call(&gateway, 3, "mcp__t__pid", json!({}), json!({}), None).await;
    assert_eq!(gateway.lanes.calls_taken(), before + 1, "not relayed: {again}");
    assert!(before >= 1, "the first call by name was relayed too");
    assert_eq!(again["result"]["_meta"]["quiver/tail"], tail, "the same tail, signed the same");
    assert_eq!(text_of(&again), text_of(&first));
    // Sending the tail back: the tool is loaded already; the answer keeps the tail.
    let carried = stateless_call(&gateway, 4, "mcp__t__pid", json!({}), json!({}), Some(&tail)).await;
    assert_eq!(carried["result"]["_meta"]["quiver/tail"], tail);
    assert_eq!(gateway.lanes.calls_taken(), before + 2);
    // A forged tail is ignored, as the general path ignores it.
    let forged = json!({"loaded": ["mcp__t__pid", "mcp__t__wipe"], "mac": "00"});
    let ignored = stateless_call(&gateway, 5, "mcp__t__pid", json!({}), json!({}), Some(&forged)).await;
    assert_eq!(ignored["result"]["_meta"]["quiver/tail"], tail);
    gateway.surface.shutdown().await;
}

/// rmcp ends its sessions' streams at shutdown; a call on the lane ends too
/// (cancelled downstream), so the listener stops at once, not after the
/// connections' grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_on_the_lane_ends_when_the_listener_shuts_down() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let surface = direct_surface(vec![test_server("t", &[])], dirs[0].path(), dirs[1].path());
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let (url, lanes) = (server.url(), server.lanes());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run_until(async move {
        let _ = stopped.await;
    }));
    let client = Arc::new(session(&url).await);
    let before = lanes.calls_taken();
    let hanging = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { call(&client, 30, "hang", json!({})).await })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while lanes.calls_taken() == before {
        assert!(tokio::time::Instant::now() < deadline, "the call never reached the lane");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let asked = std::time::Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), serving).await.expect("stopped within 5 s").unwrap().unwrap();
    assert!(asked.elapsed() < Duration::from_secs(5));
    // The call's response ended without an answer.
    let response = hanging.await.unwrap();
    let body = response.text().await.unwrap_or_default();
    assert!(!body.contains("\"result\""), "{body}");
    surface.shutdown().await;
}

/// A server that dies mid-call: the lane's call is answered as the general
/// path answers it (an error result naming the crash and the server's last
/// words), and the next call restarts the server, over the lane again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_mid_call_is_explained_and_restarted() {
    let gateway = gateway(HttpLimits::default()).await;
    let client = session(&gateway.url).await;
    let before = gateway.lanes.calls_taken();
    let response = call(&client, 40, "crash", json!({"code": 4})).await;
    assert_eq!(response.status(), 200);
    let answer: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(answer["id"], 40);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("while running `crash`") && text.contains("boom"), "{text}");
    assert_eq!(gateway.lanes.calls_taken(), before + 1);
    // The next call starts the server again; once it runs, calls take the lane.
    let mut answered = 0;
    for id in 41..60 {
        let response = call(&client, id, "pid", json!({})).await;
        let answer: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        if answer["result"]["isError"] != json!(true) && answer["result"]["content"][0]["text"].is_string() {
            answered += 1;
        }
        if answered >= 2 && gateway.lanes.calls_taken() > before + 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered >= 2, "the server was not restarted");
    assert!(gateway.lanes.calls_taken() > before + 1, "calls never took the lane again");
    gateway.surface.shutdown().await;
}

/// Over stdio, a 2026-07-28 client's relayed call takes the same stateless
/// lane: answered under its own id with `resultType`, and cancelled by its
/// own id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_stdio_call_takes_the_lane_and_is_cancelled_by_its_id() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let surface = direct_surface(vec![test_server("t", &[])], dirs[0].path(), dirs[1].path());
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(quiver_mcp::server::serve_io(Arc::clone(&surface), server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client_side);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stdio", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut send = async |message: Value| {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        client_write.write_all(&line).await.unwrap();
    };
    // The answer to `id` and its line, skipping anything else.
    let mut answer_line = async |id: i64| -> (Value, String) {
        loop {
            let line =
                tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.unwrap().unwrap().unwrap();
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id && value.get("method").is_none() {
                return (value, line);
            }
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})).await;
    assert!(answer_line(1).await.0["result"]["tools"].is_array());
    let call = |id: i64, tool: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": meta}})
    };
    // The first call may start the server (rmcp's path); once it runs, calls take the lane.
    send(call(5, "pid")).await;
    assert!(answer_line(5).await.0["result"]["content"][0]["text"].is_string());
    let before = surface.stateless_lane_calls();
    send(call(2, "pid")).await;
    let (pid, line) = answer_line(2).await;
    assert!(pid["result"]["content"][0]["text"].is_string(), "{pid}");
    assert_eq!(pid["result"]["resultType"], "complete", "{line}");
    assert_eq!(surface.stateless_lane_calls(), before + 1, "answered by rmcp's path: {line}");

    // A hanging call cancelled by its id gets no answer; the next call does.
    send(call(3, "hang")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})).await;
    send(call(4, "pid")).await;
    let next = loop {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.unwrap().unwrap().unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(value["id"], 3, "a cancelled call was answered: {value}");
        if value["id"] == 4 {
            break value;
        }
    };
    assert!(next["result"]["content"][0]["text"].is_string(), "{next}");
    // The client closes its side: the session ends.
    client_write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving).await.expect("the session ended").unwrap().unwrap();
    surface.shutdown().await;
}
