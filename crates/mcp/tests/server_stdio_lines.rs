//! Every line from the client that carries an `id` gets an answer
//! over stdio, even one quiver cannot read: an `id` without a `method`, and
//! a line over the 16 MiB bound (answered as soon as it is seen, under its id
//! when the first bytes hold one), and the session goes on after either.

use std::time::Duration;

use quiver_engine::Mode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

use crate::server_support::surface;

struct Client {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    _dir: tempfile::TempDir,
}

impl Client {
    /// `quiver mcp serve`'s session on a pipe, past `initialize`.
    async fn start() -> Client {
        let (surface, dir) = surface(Mode::Agent);
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(quiver_mcp::server::serve_io(surface, server_read, server_write));
        let (read, write) = tokio::io::split(client_io);
        let mut client = Client { lines: BufReader::new(read).lines(), write, _dir: dir };
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
        client.send(&format!("{init}\n{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))).await;
        assert!(client.next().await.get("result").is_some());
        client
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// The next message quiver writes; a test fails rather than wait for ever.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line()).await;
        serde_json::from_str(&line.expect("an answer within 20 s").unwrap().expect("a line")).unwrap()
    }

    /// A ping answered: the session still reads and answers lines.
    async fn still_answers(&mut self, id: u64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()).await;
        let pong = self.next().await;
        assert_eq!((pong["id"].clone(), pong["result"].clone()), (json!(id), json!({})), "{pong}");
    }
}

#[tokio::test]
async fn a_line_with_an_id_and_no_method_is_answered_as_an_invalid_request() {
    let mut client = Client::start().await;
    client.send(r#"{"jsonrpc":"2.0","id":4}"#).await;
    let answer = client.next().await;
    assert_eq!(answer["id"], 4, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("`method`"), "{answer}");
    // A response to nothing still gets no answer: the next line read is the ping's.
    client.send(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"x"}}"#).await;
    client.still_answers(6).await;
}

/// A `tools/call` whose argument is larger than the bound: its id is read
/// off the start, the answer names the bound, and the next line is served.
/// A line cut before its id is answered with a `null` id.
#[tokio::test]
async fn an_over_long_line_is_answered_and_the_session_goes_on() {
    let mut client = Client::start().await;
    let big = "x".repeat((16 << 20) + 1024);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"say","arguments":{{"text":"{big}"}}}}}}"#
    );
    client.send(&call).await;
    let answer = client.next().await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(7), json!(-32600)), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("16 MiB"), "{answer}");
    client.still_answers(8).await;

    let id_last =
        format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"say","text":"{big}"}},"id":9}}"#);
    client.send(&id_last).await;
    let answer = client.next().await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32600)), "{answer}");
    client.still_answers(10).await;
}
