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
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg("read line; exit 0");
    let spawned = spawn(CommandWrap::from(command), std::process::Stdio::null()).unwrap();
    let lane = Arc::clone(&spawned.lane);
    let _typed = drive(spawned.transport);
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
