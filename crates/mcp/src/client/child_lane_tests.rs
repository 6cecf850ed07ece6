#![allow(clippy::unwrap_used, clippy::expect_used)]

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, NumberOrString, PingRequest, RequestId};

use super::*;

/// A "server" that answers every request line with the same result, written
/// the way a JavaScript server would (`result` first, an integer and a float).
fn echo_server() -> Spawned {
    let script =
        r#"s/.*"id":\("[^"]*"\|[0-9][0-9]*\).*/{"result":{"b":1,"a":1.0,"z":[true]},"jsonrpc":"2.0","id":\1}/"#;
    let mut command = tokio::process::Command::new("sed");
    command.arg("-u").arg(script);
    spawn(CommandWrap::from(command), std::process::Stdio::null()).expect("sed runs")
}

/// Polls rmcp's side, as rmcp's service does; typed messages come out here.
fn drive(mut transport: ChildLine) -> tokio::sync::mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = transport.receive().await {
            if tx.send(message).is_err() {
                break;
            }
        }
    });
    rx
}

/// A lane to a server that runs `script` in `sh`, with rmcp's side polled.
fn sh_lane(script: &str) -> (Arc<RawLane>, tokio::sync::mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>) {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(script);
    let spawned = spawn(CommandWrap::from(command), std::process::Stdio::null()).unwrap();
    let lane = Arc::clone(&spawned.lane);
    (lane, drive(spawned.transport))
}

#[tokio::test]
async fn a_raw_answer_is_the_bytes_the_server_wrote() {
    let spawned = echo_server();
    let lane = Arc::clone(&spawned.lane);
    let mut typed = drive(spawned.transport);
    let call = lane.request(lane.new_id(), "tools/call", &serde_json::json!({"name": "t"})).await.unwrap();
    assert!(call.id().starts_with(RAW_ID_PREFIX));
    match call.answer().await {
        Some(RawAnswer::Result(raw)) => assert_eq!(raw.get(), r#"{"b":1,"a":1.0,"z":[true]}"#),
        other => panic!("expected a raw result, got {other:?}"),
    }
    // The raw answer never reached rmcp.
    assert!(typed.try_recv().is_err());
}

#[tokio::test]
async fn rmcp_messages_still_go_to_rmcp() {
    let mut spawned = echo_server();
    let request: ClientJsonRpcMessage =
        JsonRpcMessage::request(ClientRequest::PingRequest(PingRequest::default()), RequestId::Number(7));
    spawned.transport.send(request).await.unwrap();
    let mut typed = drive(spawned.transport);
    let message = tokio::time::timeout(std::time::Duration::from_secs(10), typed.recv()).await.unwrap().unwrap();
    match message {
        JsonRpcMessage::Response(response) => assert_eq!(response.id, NumberOrString::Number(7)),
        other => panic!("expected a response, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_exits_wakes_its_raw_callers() {
    let (lane, _typed) = sh_lane("read line; exit 0");
    let call = lane.request(lane.new_id(), "tools/call", &serde_json::json!({})).await.unwrap();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), call.answer()).await.unwrap();
    assert!(answer.is_none(), "{answer:?}");
    assert!(
        lane.request(lane.new_id(), "tools/call", &serde_json::json!({})).await.is_err(),
        "a closed lane refuses new requests"
    );
}

#[tokio::test]
async fn lines_that_are_not_json_rpc_are_skipped() {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(r#"echo 'starting up...'; echo; printf '{"jsonrpc":"2.0","id":3,"result":{}}\r\n'"#);
    let spawned = spawn(CommandWrap::from(command), std::process::Stdio::null()).unwrap();
    let mut typed = drive(spawned.transport);
    let message = tokio::time::timeout(std::time::Duration::from_secs(10), typed.recv()).await.unwrap().unwrap();
    assert!(matches!(message, JsonRpcMessage::Response(r) if r.id == NumberOrString::Number(3)));
    assert!(typed.recv().await.is_none(), "the end of the server's output ends the stream");
}

/// A sink that reports what it was told on a channel.
struct Report(tokio::sync::mpsc::UnboundedSender<(String, Told)>, String);

/// A [`Delivery`], owned.
#[derive(Debug)]
enum Told {
    Result(String),
    Error(serde_json::Value),
    Closed,
    TimedOut,
}

impl AnswerSink for Report {
    fn deliver(self: Box<Self>, delivery: Delivery<'_>) -> Option<Arc<dyn QueuedLines>> {
        let told = match delivery {
            Delivery::Result(raw) => Told::Result(raw.get().to_string()),
            Delivery::Error(error) => Told::Error(error),
            Delivery::Closed => Told::Closed,
            Delivery::TimedOut => Told::TimedOut,
        };
        let _ = self.0.send((self.1, told));
        None
    }
}

fn sink(tx: &tokio::sync::mpsc::UnboundedSender<(String, Told)>, id: &str) -> Box<dyn AnswerSink> {
    Box::new(Report(tx.clone(), id.to_string()))
}

async fn told(rx: &mut tokio::sync::mpsc::UnboundedReceiver<(String, Told)>) -> (String, Told) {
    tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv()).await.expect("told within 10 s").unwrap()
}

/// Queues `line` as it is.
fn put(line: &[u8]) -> impl FnMut(&mut Vec<u8>) + '_ {
    move |queue| queue.extend_from_slice(line)
}

fn far() -> tokio::time::Instant {
    tokio::time::Instant::now() + std::time::Duration::from_secs(60)
}

#[tokio::test]
async fn queued_requests_go_out_when_flushed_and_each_sink_gets_its_answer() {
    let spawned = echo_server();
    let lane = Arc::clone(&spawned.lane);
    let _typed = drive(spawned.transport);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut ids = Vec::new();
    let mut writer = None;
    for _ in 0..3 {
        let id = lane.new_id();
        let line = RawLane::request_line(&id, "tools/call", &serde_json::json!({"name": "t"})).unwrap();
        writer = lane.queue(id.clone(), &mut put(&line), sink(&tx, &id), far());
        ids.push(id.to_string());
    }
    // Nothing was written yet: no answer comes.
    let early = tokio::time::timeout(std::time::Duration::from_millis(200), rx.recv()).await;
    assert!(early.is_err(), "answered before the flush: {early:?}");
    writer.expect("the lane's writer").flush();
    let mut answered = Vec::new();
    for _ in 0..3 {
        let (id, delivery) = told(&mut rx).await;
        match delivery {
            Told::Result(raw) => assert_eq!(raw, r#"{"b":1,"a":1.0,"z":[true]}"#),
            other => panic!("{id}: {other:?}"),
        }
        answered.push(id);
    }
    answered.sort();
    ids.sort();
    assert_eq!(answered, ids);
}

#[tokio::test]
async fn a_sink_past_its_deadline_is_told_and_its_late_answer_dropped() {
    // Reads one line and answers it only after the deadline.
    let (lane, _typed) = sh_lane(
        r#"read line; sleep 1; id=$(printf '%s' "$line" | sed 's/.*"id":"\([^"]*\)".*/\1/'); printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id"; sleep 5"#,
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let id = lane.new_id();
    let line = RawLane::request_line(&id, "tools/call", &serde_json::json!({})).unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(200);
    lane.queue(id.clone(), &mut put(&line), sink(&tx, &id), deadline).unwrap().flush();
    let (told_id, delivery) = told(&mut rx).await;
    assert_eq!(told_id, &*id);
    assert!(matches!(delivery, Told::TimedOut), "{delivery:?}");
    // The answer that comes later finds nobody waiting, and the sink is not told twice.
    let again = tokio::time::timeout(std::time::Duration::from_millis(1500), rx.recv()).await;
    assert!(matches!(again, Err(_) | Ok(None)), "{again:?}");
    assert!(!lane.forget(&id), "forgotten when it timed out");
}

#[tokio::test]
async fn a_server_that_exits_tells_its_sinks_and_later_ones_at_once() {
    let (lane, _typed) = sh_lane("read line; exit 0");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let id = lane.new_id();
    let line = RawLane::request_line(&id, "tools/call", &serde_json::json!({})).unwrap();
    lane.queue(id.clone(), &mut put(&line), sink(&tx, &id), far()).unwrap().flush();
    let (_, delivery) = told(&mut rx).await;
    assert!(matches!(delivery, Told::Closed), "{delivery:?}");
    // A call queued on the closed lane is told at once, and nothing is written.
    let late = lane.new_id();
    assert!(lane.queue(late.clone(), &mut put(b"{}\n"), sink(&tx, &late), far()).is_none());
    let (told_id, delivery) = told(&mut rx).await;
    assert_eq!(told_id, &*late);
    assert!(matches!(delivery, Told::Closed), "{delivery:?}");
}

#[tokio::test]
async fn a_forgotten_request_is_never_delivered() {
    let spawned = echo_server();
    let lane = Arc::clone(&spawned.lane);
    let _typed = drive(spawned.transport);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (gone, kept) = (lane.new_id(), lane.new_id());
    for id in [&gone, &kept] {
        let line = RawLane::request_line(id, "tools/call", &serde_json::json!({})).unwrap();
        lane.queue(id.clone(), &mut put(&line), sink(&tx, id), far()).unwrap();
    }
    assert!(lane.forget(&gone));
    Arc::clone(&lane.stdin).flush();
    let (id, _) = told(&mut rx).await;
    assert_eq!(id, &*kept);
    let more = tokio::time::timeout(std::time::Duration::from_millis(300), rx.recv()).await;
    assert!(more.is_err(), "the forgotten request was delivered: {more:?}");
}

#[tokio::test]
async fn an_error_answer_reaches_its_sink_as_the_error_object() {
    let (lane, _typed) = sh_lane(
        r#"read line; id=$(printf '%s' "$line" | sed 's/.*"id":"\([^"]*\)".*/\1/'); printf '{"jsonrpc":"2.0","id":"%s","error":{"code":-32602,"message":"bad"}}\n' "$id"; sleep 5"#,
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let id = lane.new_id();
    let line = RawLane::request_line(&id, "tools/call", &serde_json::json!({})).unwrap();
    lane.queue(id.clone(), &mut put(&line), sink(&tx, &id), far()).unwrap().flush();
    match told(&mut rx).await {
        (told_id, Told::Error(error)) => {
            assert_eq!(told_id, &*id);
            assert_eq!(error, serde_json::json!({"code": -32602, "message": "bad"}));
        }
        other => panic!("{other:?}"),
    }
}
