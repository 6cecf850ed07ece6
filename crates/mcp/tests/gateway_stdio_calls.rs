//! `tools/call` over stdio is answered beside rmcp's service loop
//! (`server::stdio_calls`): calls run side by side, a client's
//! `notifications/cancelled` stops one (it gets no answer, the others go on),
//! and everything else still goes through rmcp.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use crate::client_support::{direct_surface, test_server};

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
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let surface = direct_surface(vec![test_server("t", &[])], cache.path(), ws.path());
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
    // Arguments that do not match the schema: a tool error the model can read.
    client.send(Client::call(20, &echo, json!({"text": 5}))).await;
    let answer = client.answer(20, &mut Vec::new()).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
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
