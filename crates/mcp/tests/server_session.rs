//! `quiver mcp serve`'s handler, driven by a real rmcp client over an in-memory
//! pipe: the handshake, the list (head + tail, byte-stable), list_changed on
//! loads, results and metadata, session isolation and elicitation approvals.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::server_support::*;
use quiver_engine::{CatalogFormat, Mode, canonical};
use serde_json::{Value, json};

#[tokio::test]
async fn initialize_advertises_quiver_and_list_changed() {
    let (surface, _dir) = surface(Mode::Agent);
    let client = connect(surface, TestClient::default()).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "quiver");
    assert_eq!(info.server_info.as_ref().unwrap().version, quiver_engine::VERSION);
    assert!(info.instructions.as_deref().unwrap().contains("tool_search"));
    let tools = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools.list_changed, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tools_list_is_the_engine_head_byte_for_byte() {
    let (surface, _dir) = surface(Mode::Agent);
    let head = surface.engine().catalog(&surface.audience, &[]);
    let client = connect(surface, TestClient::default()).await;
    let listed = list(&client).await;
    assert_eq!(names(&listed), ["explode", "json_info", "say", "tool_search"]);
    let expected: Vec<String> = match head.render(CatalogFormat::Mcp) {
        Value::Array(items) => items.iter().map(canonical::to_string).collect(),
        _ => unreachable!(),
    };
    assert_eq!(listed.iter().map(bytes).collect::<Vec<_>>(), expected);
}

#[tokio::test]
async fn tool_search_loads_notifies_and_appends_to_the_tail() {
    let (surface, _dir) = surface(Mode::Agent);
    let client_handler = TestClient::default();
    let client = connect(surface, client_handler.clone()).await;
    let before = list(&client).await;

    let found = call(&client, "tool_search", json!({"query": "weather forecast for a city"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    assert!(text(&found).contains("weather_lookup"));
    let structured = found.structured_content.clone().expect("tool_search returns a JSON object");
    assert!(structured["loadedAfter"].as_array().unwrap().iter().any(|n| n == "weather_lookup"));
    assert_eq!(found.meta.as_ref().unwrap().0["loaded"], json!(["weather_lookup"]));
    client_handler.wait_list_changed(0).await;

    let after = list(&client).await;
    assert_eq!(after.len(), before.len() + 1);
    let head_bytes: Vec<String> = before.iter().map(bytes).collect();
    let after_head: Vec<String> = after[..before.len()].iter().map(bytes).collect();
    assert_eq!(after_head, head_bytes, "the head must not change when the tail grows");
    assert_eq!(after.last().unwrap().name, "weather_lookup");

    let weather = call(&client, "weather_lookup", json!({"city": "Oslo"})).await;
    assert_eq!(text(&weather), "sunny in Oslo");

    // Searching again for something already loaded changes nothing: no second notice.
    let again = call(&client, "tool_search", json!({"query": "select:weather_lookup"})).await;
    assert_eq!(again.is_error, Some(false));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(client_handler.list_changes(), 1);
}

#[tokio::test]
async fn a_deferred_tool_is_callable_by_name_without_listing_and_then_loaded() {
    let (surface, _dir) = surface(Mode::Agent);
    let client_handler = TestClient::default();
    let client = connect(surface, client_handler.clone()).await;
    // A client that ignores list_changed still reaches any tool by name.
    let quote = call(&client, "stock_quote", json!({"ticker": "QVR"})).await;
    assert_eq!(text(&quote), "QVR 42.00");
    client_handler.wait_list_changed(0).await;
    assert_eq!(names(&list(&client).await).last().unwrap(), "stock_quote");
}

#[tokio::test]
async fn deprecated_alias_keeps_its_notice_in_meta_only() {
    let (surface, _dir) = surface(Mode::Agent);
    let client = connect(surface, TestClient::default()).await;
    let result = call(&client, "old_say", json!({"text": "hi"})).await;
    assert_eq!(result.is_error, Some(false));
    let meta = result.meta.as_ref().expect("_meta").0.clone();
    assert_eq!(meta["_deprecation"]["this_tool"], "old_say");
    assert_eq!(meta["_deprecation"]["use_instead"], "say");
    assert_eq!(meta["_deprecation"]["removed_in"], "TBD");
    // The content is exactly the canonical twin's.
    let twin = call(&client, "say", json!({"text": "hi"})).await;
    assert_eq!(result.content, twin.content);

    // Hidden-compatibility aliases run the same handler and add nothing.
    let quiet = call(&client, "quiet_say", json!({"text": "hi"})).await;
    assert_eq!(text(&quiet), "hi");
    assert!(quiet.meta.is_none());
}

#[tokio::test]
async fn results_carry_json_text_structured_content_and_metadata() {
    let (surface, _dir) = surface(Mode::Agent);
    let client = connect(surface, TestClient::default()).await;
    let result = call(&client, "json_info", json!({})).await;
    assert_eq!(text(&result), r#"{"alpha":{"a":1,"b":2},"zeta":1}"#);
    assert_eq!(result.structured_content, Some(json!({"alpha": {"a": 1, "b": 2}, "zeta": 1})));
    assert_eq!(result.meta.as_ref().unwrap().0["exit_code"], 0);
}

#[tokio::test]
async fn errors_are_error_results_the_model_can_read() {
    let (surface, _dir) = surface(Mode::Agent);
    let client = connect(surface, TestClient::default()).await;
    let unknown = call(&client, "sayy", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text(&unknown).contains("did you mean `say`"), "{}", text(&unknown));

    let invalid = call(&client, "say", json!({"text": 3})).await;
    assert_eq!(invalid.is_error, Some(true));
    assert!(text(&invalid).contains("text"), "{}", text(&invalid));

    let fatal = call(&client, "explode", json!({})).await;
    assert_eq!(fatal.is_error, Some(true));
    assert!(text(&fatal).contains("blew up"), "{}", text(&fatal));
    // The connection survives a fatal tool failure.
    assert_eq!(text(&call(&client, "say", json!({"text": "still here"})).await), "still here");
}

#[tokio::test]
async fn connections_are_isolated_sessions() {
    let (surface, _dir) = surface(Mode::Agent);
    let a = connect(surface.clone(), TestClient::default()).await;
    let b = connect(surface, TestClient::default()).await;
    call(&a, "tool_search", json!({"query": "select:stock_quote"})).await;
    assert_eq!(names(&list(&a).await).last().unwrap(), "stock_quote");
    assert_eq!(names(&list(&b).await), ["explode", "json_info", "say", "tool_search"]);
}

#[tokio::test]
async fn approval_goes_to_the_client_through_elicitation() {
    let (surface, _dir) = surface(Mode::Agent);
    let yes = TestClient::answering(true);
    let client = connect(surface.clone(), yes.clone()).await;
    let result = call(&client, "wipe_cache", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), "cache wiped");
    let questions = yes.questions.lock().unwrap().clone();
    assert_eq!(questions.len(), 1);
    assert!(questions[0].contains("wipe_cache"), "{questions:?}");

    let no = TestClient::answering(false);
    let client = connect(surface, no).await;
    let refused = call(&client, "wipe_cache", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("not approved"), "{}", text(&refused));
}

#[tokio::test]
async fn without_elicitation_the_engine_refuses_clearly() {
    let (surface, _dir) = surface(Mode::Agent);
    let client_handler = TestClient::default();
    let client = connect(surface, client_handler.clone()).await;
    let refused = call(&client, "wipe_cache", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("nobody to ask"), "{}", text(&refused));
    assert!(client_handler.questions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn yolo_runs_without_asking_and_plan_refuses() {
    let (surface, _dir) = surface(Mode::Yolo);
    let client_handler = TestClient::answering(false);
    let client = connect(surface, client_handler.clone()).await;
    assert_eq!(text(&call(&client, "wipe_cache", json!({})).await), "cache wiped");
    assert!(client_handler.questions.lock().unwrap().is_empty());

    let (surface, _dir) = surface_plan();
    let client = connect(surface, TestClient::answering(true)).await;
    let refused = call(&client, "wipe_cache", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("plan mode"), "{}", text(&refused));
}

fn surface_plan() -> (std::sync::Arc<quiver_mcp::server::Surface>, tempfile::TempDir) {
    surface(Mode::Plan)
}

/// A client that writes what rmcp cannot read gets a JSON-RPC error saying
/// what is wrong, instead of nothing (it would wait for ever), and the
/// session goes on.
#[tokio::test]
async fn malformed_lines_get_precise_errors_and_the_session_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (surface, _dir) = surface(Mode::Agent);
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(quiver_mcp::server::serve_io(surface, server_read, server_write));
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut exchange = async |line: &str| -> Value {
        write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let answer = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await;
        serde_json::from_str(&answer.expect("an answer within 10 s").unwrap().expect("a line")).unwrap()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    // the notification is sent with the initialize line: it has no answer
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(exchange(&format!("{init}\n{initialized}")).await.get("result").is_some());

    let cases = [
        ("not json at all", Value::Null, -32700, "not JSON"),
        (r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#, Value::Null, -32600, "batches"),
        (r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#, json!(3), -32601, "`no/such`"),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"say","arguments":"hi"}}"#,
            json!(4),
            -32602,
            "invalid type",
        ),
        (r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}"#, json!(5), -32602, "`name`"),
    ];
    for (line, id, code, says) in cases {
        let answer = exchange(line).await;
        assert_eq!(answer["id"], id, "{line}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{line}: {answer}");
    }
    let said = exchange(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"say","arguments":{"text":"still here"}}}"#,
    )
    .await;
    assert_eq!(said["result"]["content"][0]["text"], "still here", "{said}");
}
