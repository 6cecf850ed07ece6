//! `tools/call` over stdio is answered beside rmcp's service loop
//! (`server::stdio_calls`): calls run side by side, a client's
//! `notifications/cancelled` stops one (it gets no answer, the others go on),
//! and everything else still goes through rmcp.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use quiver_mcp::config::{Expose, ServerConfig};

use crate::client_support::{direct_surface, surface_exposing, test_server};

/// A raw JSON-RPC client on quiver's stdio (an in-process duplex pipe).
struct Client {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// The next message quiver writes.
    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), self.read.read_line(&mut line)).await;
        assert!(read.expect("a message within 30 s").unwrap() > 0, "quiver closed its stdout");
        serde_json::from_str(&line).unwrap()
    }

    /// Reads until the answer to `id`; the answers read on the way, by id.
    async fn answer(&mut self, id: u64, seen: &mut Vec<Value>) -> Value {
        loop {
            let message = self.next().await;
            if message.get("method").is_some() {
                continue; // a notification or a request of quiver's
            }
            if message["id"] == json!(id) {
                return message;
            }
            seen.push(message);
        }
    }

    fn call(id: u64, name: &str, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
    }
}

/// quiver serving one session on a pipe, with the test server exposed directly.
async fn gateway() -> (Client, tempfile::TempDir, tempfile::TempDir) {
    gateway_with(&[]).await
}

/// [`gateway`] with the test server's environment set to `env`.
async fn gateway_with(env: &[(&str, &str)]) -> (Client, tempfile::TempDir, tempfile::TempDir) {
    gateway_on(test_server("t", env), Expose::Direct).await
}

/// quiver serving one session on a pipe, with `server` exposed as `expose` says.
async fn gateway_on(server: ServerConfig, expose: Expose) -> (Client, tempfile::TempDir, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let surface = match expose {
        Expose::Direct => direct_surface(vec![server], cache.path(), ws.path()),
        other => surface_exposing(vec![ServerConfig { expose: other, ..server }], cache.path(), ws.path()),
    };
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(quiver_mcp::server::serve_io(surface, server_read, server_write));
    let (read, write) = tokio::io::split(client_end);
    let mut client = Client { read: BufReader::new(read), write };
    let params =
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
    client.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})).await;
    let answer = client.answer(0, &mut Vec::new()).await;
    assert!(answer.get("result").is_some(), "{answer}");
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    (client, cache, ws)
}

/// The name quiver lists the test server's `tool` under.
async fn listed(client: &mut Client, tool: &str) -> String {
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    let list = client.answer(1, &mut Vec::new()).await;
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    names
        .iter()
        .find(|n| **n == tool || n.ends_with(&format!("__{tool}")))
        .unwrap_or_else(|| panic!("{tool} in {names:?}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_side_by_side_and_a_cancelled_one_gets_no_answer() {
    let (mut client, _cache, _ws) = gateway().await;
    let (hang, echo) = (listed(&mut client, "hang").await, listed(&mut client, "echo").await);

    // A call that never ends does not hold up the ones after it.
    client.send(Client::call(10, &hang, json!({}))).await;
    client.send(Client::call(11, &echo, json!({"text": "beside the hang"}))).await;
    let mut seen = Vec::new();
    let answer = client.answer(11, &mut seen).await;
    assert_eq!(answer["result"]["content"][0]["text"], "beside the hang", "{answer}");

    // Cancelled: it is never answered, and the session goes on.
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10, "reason": "test"}})).await;
    for id in 12..15 {
        client.send(Client::call(id, &echo, json!({"text": format!("after {id}")}))).await;
        let answer = client.answer(id, &mut seen).await;
        assert_eq!(answer["result"]["content"][0]["text"], format!("after {id}"), "{answer}");
    }
    client.send(json!({"jsonrpc": "2.0", "id": 15, "method": "ping"})).await;
    client.answer(15, &mut seen).await;
    assert!(seen.iter().all(|m| m["id"] != json!(10)), "the cancelled call was answered: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_calls_get_the_same_answers_as_through_rmcp() {
    let (mut client, _cache, _ws) = gateway().await;
    let echo = listed(&mut client, "echo").await;
    // Arguments that do not match the schema of a directly exposed server:
    // its own answer (this test server's reads a number as no text), on the
    // relay and on the general path alike; quiver adds no check of its own.
    client.send(Client::call(20, &echo, json!({"text": 5}))).await;
    let relayed = client.answer(20, &mut Vec::new()).await;
    client.send(dispatched_call(19, &echo, json!({"text": 5}))).await;
    let dispatched = client.answer(19, &mut Vec::new()).await;
    assert_eq!(relayed["result"]["content"][0]["text"], "", "{relayed}");
    assert_eq!(relayed["result"], dispatched["result"], "{relayed} / {dispatched}");
    // Params that are not a tools/call's: a JSON-RPC error from rmcp's parse.
    client.send(json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"arguments": {}}})).await;
    client.send(json!({"jsonrpc": "2.0", "id": 22, "method": "ping"})).await;
    let mut seen = Vec::new();
    client.answer(22, &mut seen).await;
    // An unknown tool: told which names exist.
    client.send(Client::call(23, "no_such_tool", json!({}))).await;
    let answer = client.answer(23, &mut seen).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("unknown tool"), "{answer}");
}

/// A call whose `_meta` carries more than a progress token, which quiver
/// dispatches: the general path, to compare a relayed call with.
fn dispatched_call(id: u64, name: &str, arguments: Value) -> Value {
    let mut call = Client::call(id, name, arguments);
    call["params"]["_meta"] = json!({"progressToken": format!("p{id}"), "io.quiver.test/any": true});
    call
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_call_to_a_direct_server_is_relayed_as_the_client_wrote_it() {
    let (mut client, _cache, _ws) = gateway_with(&[("QUIVER_TEST_MCP_ECHO_META", "1")]).await;
    let echo = listed(&mut client, "echo").await;
    let mut seen = Vec::new();
    // Relayed: the server gets the call with nothing added (no progress token of quiver's).
    client.send(Client::call(30, &echo, json!({"text": "plain"}))).await;
    let relayed = client.answer(30, &mut seen).await;
    assert_eq!(relayed["result"]["content"][0]["text"], "plain", "{relayed}");
    let meta = relayed["result"]["content"][1]["text"].as_str().unwrap();
    assert!(!meta.contains("progressToken"), "the relayed call gained a progress token: {meta}");
    // A call with other `_meta` goes the general way: quiver sends a token of its own.
    client.send(dispatched_call(31, &echo, json!({"text": "with meta"}))).await;
    let dispatched = client.answer(31, &mut seen).await;
    assert_eq!(dispatched["result"]["content"][0]["text"], "with meta", "{dispatched}");
    let meta = dispatched["result"]["content"][1]["text"].as_str().unwrap();
    assert!(meta.contains("quiver-raw-"), "the general path maps the client's token: {meta}");
    // A progress token alone is relayed, mapped the same way.
    let mut call = Client::call(32, &echo, json!({"text": "with progress"}));
    call["params"]["_meta"] = json!({"progressToken": 5});
    client.send(call).await;
    let relayed = client.answer(32, &mut seen).await;
    assert_eq!(relayed["result"]["content"][0]["text"], "with progress", "{relayed}");
    let meta = relayed["result"]["content"][1]["text"].as_str().unwrap();
    assert!(meta.contains("\"progressToken\":\"quiver-raw-") && !meta.contains(":5"), "{meta}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relayed_calls_answer_as_dispatched_ones_do() {
    let (mut client, _cache, _ws) = gateway().await;
    let mut seen = Vec::new();
    let cases = [
        ("echo", json!({"text": "same \"bytes\" \u{e9}"})),
        ("add", json!({"a": 2, "b": 40})),
        ("fail", json!({})),
        ("image", json!({})),
        // Fails the schema: the general path answers (the relay declines).
        ("echo", json!({"text": 5})),
        // A null argument is dropped by dispatch: the relay declines it too.
        ("echo", json!({"text": "nulls", "other": null})),
        // Too large to pass unchecked: spilled the same way on both paths.
        ("big", json!({"bytes": 200_000})),
    ];
    for (n, (tool, arguments)) in cases.iter().enumerate() {
        let name = listed(&mut client, tool).await;
        let id = 40 + 2 * n as u64;
        client.send(Client::call(id, &name, arguments.clone())).await;
        let relayed = client.answer(id, &mut seen).await;
        client.send(dispatched_call(id + 1, &name, arguments.clone())).await;
        let dispatched = client.answer(id + 1, &mut seen).await;
        let unspilled = |v: &Value| v["result"].to_string().replace("out_1", "out_N").replace("out_2", "out_N");
        assert_eq!(unspilled(&relayed), unspilled(&dispatched), "{tool} {arguments}");
    }
    // A call without arguments: relayed as `{}`, as dispatch sends it.
    let pid = listed(&mut client, "pid").await;
    client.send(json!({"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {"name": pid}})).await;
    let answer = client.answer(60, &mut seen).await;
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().parse::<u32>().is_ok(), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_during_a_relayed_call_is_reported_and_restarted() {
    let (mut client, _cache, _ws) = gateway().await;
    let (crash, echo) = (listed(&mut client, "crash").await, listed(&mut client, "echo").await);
    let mut seen = Vec::new();
    client.send(Client::call(70, &crash, json!({"code": 4}))).await;
    let answer = client.answer(70, &mut seen).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("while running `crash`") && text.contains("boom"), "{text}");
    // The next call starts it again (the general path, as the session is gone).
    client.send(Client::call(71, &echo, json!({"text": "back"}))).await;
    let answer = client.answer(71, &mut seen).await;
    assert_eq!(answer["result"]["content"][0]["text"], "back", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_call_past_the_tool_timeout_is_reported_and_the_session_goes_on() {
    let server = ServerConfig { tool_timeout: Duration::from_millis(400), ..test_server("t", &[]) };
    let (mut client, _cache, _ws) = gateway_on(server, Expose::Direct).await;
    let (hang, echo) = (listed(&mut client, "hang").await, listed(&mut client, "echo").await);
    let mut seen = Vec::new();
    client.send(Client::call(80, &hang, json!({}))).await;
    let answer = client.answer(80, &mut seen).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("did not answer `hang` within 400 ms") && text.contains("still responsive"), "{text}");
    // The same session serves the next calls (relayed again).
    for id in 81..84 {
        client.send(Client::call(id, &echo, json!({"text": format!("after {id}")}))).await;
        let answer = client.answer(id, &mut seen).await;
        assert_eq!(answer["result"]["content"][0]["text"], format!("after {id}"), "{answer}");
    }
}

/// A prefixed tool's call is relayed once this session has loaded the tool
/// (before, calling it loads it: the general path), under the server's own
/// name. Both paths send the server the same call and the client the same
/// answer, so what is checked here is that they agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefixed_tool_answers_alike_on_both_paths_before_and_after_it_is_loaded() {
    let server = test_server("t", &[("QUIVER_TEST_MCP_ECHO_META", "1")]);
    let (mut client, _cache, _ws) = gateway_on(server, Expose::Search).await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    client.answer(1, &mut Vec::new()).await;
    let mut seen = Vec::new();
    // Discovery starts the server and registers its tools (deferred).
    client.send(Client::call(89, "mcp_discover", json!({"server": "t"}))).await;
    let found = client.answer(89, &mut seen).await;
    assert!(found.to_string().contains("mcp__t__echo"), "{found}");
    let mut id = 90;
    for tool in ["mcp__t__echo", "mcp__t__fail", "mcp__t__add"] {
        let arguments = match tool {
            "mcp__t__echo" => json!({"text": "same"}),
            "mcp__t__add" => json!({"a": 2, "b": 40}),
            _ => json!({}),
        };
        // First the call that loads the tool, then calls relayed as written
        // (with and without a progress token), then one dispatched.
        let mut answers = Vec::new();
        for variant in 0..4 {
            let call = match variant {
                2 => {
                    let mut call = Client::call(id, tool, arguments.clone());
                    call["params"]["_meta"] = json!({"progressToken": id});
                    call
                }
                3 => dispatched_call(id, tool, arguments.clone()),
                _ => Client::call(id, tool, arguments.clone()),
            };
            client.send(call).await;
            let answer = client.answer(id, &mut seen).await;
            answers.push(answer["result"].clone());
            id += 1;
        }
        // The echo shows the `_meta` the server got: a progress token only where the client gave one.
        let meta_blind = |v: &Value| {
            let mut v = v.clone();
            if let Some(content) = v["content"].as_array_mut() {
                content.truncate(1);
            }
            v
        };
        for answer in &answers[1..] {
            assert_eq!(meta_blind(answer), meta_blind(&answers[0]), "{tool}: {answers:?}");
        }
        assert_eq!(answers[1], answers[0], "{tool}: {answers:?}");
        assert_eq!(answers[0]["isError"], json!(tool == "mcp__t__fail"), "{tool}: {answers:?}");
    }
}

/// A tool quiver exposes under its own prefix is quiver's to describe, so a
/// call its schema refuses gets quiver's reading of the schema (the field and
/// what was expected), not whatever the server would make of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefixed_tools_bad_arguments_get_quivers_schema_check() {
    let (mut client, _cache, _ws) = gateway_on(test_server("t", &[]), Expose::Search).await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    client.answer(1, &mut Vec::new()).await;
    client.send(Client::call(2, "mcp_discover", json!({"server": "t"}))).await;
    client.answer(2, &mut Vec::new()).await;
    client.send(Client::call(3, "mcp__t__echo", json!({"text": 5}))).await;
    let answer = client.answer(3, &mut Vec::new()).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("invalid arguments for mcp__t__echo") && text.contains("`text`"), "{text}");
}
