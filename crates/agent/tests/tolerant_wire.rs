//! Both wires against servers that are not the reference APIs: the scripted
//! server's quirks imitate llama-cpp-python, LiteLLM's Anthropic adapter,
//! legacy function calling and strict validators.

use quiver_agent::scripted::{Fault, Quirk, ScriptedServer, ScriptedTurn};
use quiver_agent::{FinishReason, Message, ProviderError, StreamEvent, ToolCall};
use serde_json::{Value, json};

use crate::support::{anthropic, anthropic_tools, complete, deepseek, openai_tools, request};

/// A conversation whose last assistant turn only called a tool.
fn after_a_tool_call() -> Vec<Message> {
    let call = ToolCall { id: "call_1".into(), name: "read_file".into(), arguments: r#"{"path":"a"}"#.into() };
    vec![
        Message::user("read a"),
        Message::Assistant { text: String::new(), reasoning: None, reasoning_signature: None, tool_calls: vec![call] },
        Message::tool_result("call_1", "A", false),
    ]
}

fn retries(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn llama_cpp_python_accepts_a_tool_turn_without_content() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::LlamaNullContent);
    server.push(ScriptedTurn::text("a says A"));
    let provider = deepseek(&server);
    let req = request("smollm2", openai_tools(), 2, after_a_tool_call(), false);
    let response = complete(&provider, &req).await.0.unwrap();
    assert_eq!(response.text, "a says A");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "accepted the first time");
    let assistant = &requests[0].json()["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert!(assistant.get("content").is_none(), "{assistant}");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
}

/// llama-cpp-python 0.3.36 with `chatml-function-calling` (verified against
/// the real server): a tool-only turn without `content` fails in its chat
/// template (500), `""` is accepted. One repaired request, then `""` for the
/// rest of the session.
#[tokio::test]
async fn a_template_that_needs_content_gets_an_empty_string_and_keeps_it() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::TemplateNeedsContent);
    server.script([ScriptedTurn::text("a says A"), ScriptedTurn::text("still A")]);
    let provider = deepseek(&server);
    let req = request("smollm2", openai_tools(), 2, after_a_tool_call(), false);
    let (response, events) = complete(&provider, &req).await;
    assert_eq!(response.unwrap().text, "a says A");
    let reasons = retries(&events);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("`content: \"\"`") && reasons[0].contains("field `content`"), "{reasons:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].json()["messages"][2].get("content").is_none());
    assert_eq!(requests[1].json()["messages"][2]["content"], "");
    // The next request of the session starts with the shape that worked.
    let (response, events) = complete(&provider, &req).await;
    assert_eq!(response.unwrap().text, "still A");
    assert!(retries(&events).is_empty());
    assert_eq!(server.requests()[2].json()["messages"][2]["content"], "");
}

#[tokio::test]
async fn a_500_validation_error_is_not_resent_and_names_the_field() {
    let server = ScriptedServer::start().await.unwrap();
    let message = "1 validation error for CreateChatCompletionRequest\nmessages.1.content\n  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]";
    let refusal = Fault::Status { status: 500, retry_after: None, message: message.into() };
    server.script([ScriptedTurn::default().with_fault(refusal), ScriptedTurn::text("never asked")]);
    let req = request("m", openai_tools(), 2, vec![Message::user("hi")], true);
    let err = complete(&deepseek(&server), &req).await.0.unwrap_err();
    assert!(
        matches!(&err, ProviderError::Rejected { status: 500, field: Some(f), .. } if f == "messages.1.content"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(
            "deepseek: HTTP 500: the server rejected the request (field `messages.1.content`): 1 validation error"
        ),
        "{text}"
    );
    assert_eq!(server.requests().len(), 1, "the same bytes were not sent again");
}

#[tokio::test]
async fn a_server_that_wants_content_gets_an_empty_string_from_then_on() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::RequireContent);
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let provider = deepseek(&server);
    let req = request("m", openai_tools(), 2, after_a_tool_call(), true);
    let (result, events) = complete(&provider, &req).await;
    assert_eq!(result.unwrap().text, "one");
    let notes = retries(&events);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("field `content`") && notes[0].contains("`content: \"\"`"), "{}", notes[0]);
    // The next request uses the shape that worked at once.
    assert_eq!(complete(&provider, &req).await.0.unwrap().text, "two");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].json()["messages"][2].get("content").is_none());
    assert_eq!(requests[1].json()["messages"][2]["content"], "");
    assert_eq!(requests[1].body, requests[2].body);
}

#[tokio::test]
async fn an_empty_stream_with_tools_is_asked_again_unstreamed_for_the_rest_of_the_session() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::EmptyStreamWithTools);
    server.script([
        ScriptedTurn::tool_call("call_1", "read_file", r#"{"path":"a"}"#),
        ScriptedTurn::text("done"),
        ScriptedTurn::text("plain"),
    ]);
    let provider = deepseek(&server);
    let req = request("smollm2", openai_tools(), 2, vec![Message::user("read a")], true);
    let (result, events) = complete(&provider, &req).await;
    let response = result.unwrap();
    assert_eq!(response.tool_calls[0].arguments, r#"{"path":"a"}"#);
    assert!(retries(&events)[0].contains("empty stream"), "{events:?}");
    // The call still reached the sink (replayed from the whole answer).
    assert!(events.iter().any(|e| matches!(e, StreamEvent::ToolCallBegin { name, .. } if name == "read_file")));
    let mut next = req.clone();
    next.messages.extend([Message::from_response(&response), Message::tool_result("call_1", "A", false)]);
    assert_eq!(complete(&provider, &next).await.0.unwrap().text, "done");
    // Without tools the server streams fine, and quiver still streams there.
    let plain = request("smollm2", json!([]), 0, vec![Message::user("hi")], true);
    assert_eq!(complete(&provider, &plain).await.0.unwrap().text, "plain");
    let streamed: Vec<Value> = server.requests().iter().map(|r| r.json()["stream"].clone()).collect();
    assert_eq!(streamed, [json!(true), json!(false), json!(false), json!(true)]);
}

/// LiteLLM's Anthropic adapter (1.108, verified against the real proxy in
/// front of llama-cpp-python) answers a stream whose upstream request failed
/// with a well-formed message that holds nothing and made no tokens. Asked
/// again without streaming, the proxy says what failed: that is the error.
#[tokio::test]
async fn a_stream_that_says_nothing_is_asked_again_unstreamed_and_the_error_surfaces() {
    let server = ScriptedServer::start().await.unwrap();
    let silent = [
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"smollm2","content":[],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":0}}"#,
        r#"{"type":"message_stop"}"#,
    ]
    .iter()
    .map(|d| format!("data: {d}\n\n"))
    .collect::<String>();
    let upstream = "litellm.InternalServerError: Hosted_vllmException - 'dict object' has no attribute 'content'";
    server.script([
        ScriptedTurn::raw(silent),
        ScriptedTurn::default().with_fault(Fault::Status { status: 500, retry_after: None, message: upstream.into() }),
    ]);
    let req = request("smollm2", anthropic_tools(), 2, vec![Message::user("hi")], true);
    let (result, events) = complete(&anthropic(&server), &req).await;
    let err = result.unwrap_err();
    assert!(matches!(&err, ProviderError::Rejected { status: 500, .. }), "{err}");
    assert!(retries(&events)[0].contains("no content at all"), "{events:?}");
    let streamed: Vec<Value> = server.requests().iter().map(|r| r.json()["stream"].clone()).collect();
    assert_eq!(streamed, [json!(true), json!(false)]);
}

#[tokio::test]
async fn a_server_that_says_it_cannot_stream_with_tools_is_asked_again_unstreamed() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::NoStreamWithTools);
    server.push(ScriptedTurn::text("fine"));
    let req = request("c", anthropic_tools(), 2, vec![Message::user("hi")], true);
    let (result, events) = complete(&anthropic(&server), &req).await;
    assert_eq!(result.unwrap().text, "fine");
    assert!(retries(&events)[0].contains("Streaming is not supported with tools"), "{events:?}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn missing_usage_is_unknown_not_zero_on_both_wires() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::NoUsage);
    server.script((0..4).map(|_| ScriptedTurn::text("hi")));
    for stream in [true, false] {
        let (provider, req) = (deepseek(&server), request("m", json!([]), 0, vec![Message::user("q")], stream));
        let response = complete(&provider, &req).await.0.unwrap();
        assert_eq!((response.usage_reported, response.reported_usage()), (false, None), "stream {stream}");
        let req = request("c", anthropic_tools(), 2, vec![Message::user("q")], stream);
        let response = complete(&anthropic(&server), &req).await.0.unwrap();
        assert_eq!((response.usage_reported, response.reported_usage()), (false, None), "stream {stream}");
    }
    server.clear_quirks();
    server.push(ScriptedTurn::text("hi"));
    let response = complete(&deepseek(&server), &request("m", json!([]), 0, vec![Message::user("q")], true)).await;
    assert!(response.0.unwrap().reported_usage().is_some());
}

#[tokio::test]
async fn deltas_repeating_id_and_name_without_an_index_are_one_call_each() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::RepeatCallHeader);
    server.quirk(Quirk::NoCallIndex);
    server.push(ScriptedTurn::tool_call("call_a", "read_file", r#"{"path":"src/main.rs"}"#).and_call(
        "call_b",
        "grep_files",
        r#"{"pattern":"fn main"}"#,
    ));
    let req = request("m", openai_tools(), 2, vec![Message::user("go")], true);
    let (result, events) = complete(&deepseek(&server), &req).await;
    let calls: Vec<(String, String, String)> =
        result.unwrap().tool_calls.into_iter().map(|c| (c.id, c.name, c.arguments)).collect();
    assert_eq!(
        calls,
        [
            ("call_a".into(), "read_file".into(), r#"{"path":"src/main.rs"}"#.into()),
            ("call_b".into(), "grep_files".into(), r#"{"pattern":"fn main"}"#.into()),
        ]
    );
    assert_eq!(events.iter().filter(|e| matches!(e, StreamEvent::ToolCallBegin { .. })).count(), 2);
}

#[tokio::test]
async fn legacy_function_call_is_a_tool_call_streamed_or_not() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::LegacyFunctionCall);
    let turn = ScriptedTurn::tool_call("unused", "read_file", r#"{"path":"README.md"}"#);
    server.script([turn.clone(), turn]);
    let provider = deepseek(&server);
    for stream in [true, false] {
        let req = request("m", openai_tools(), 2, vec![Message::user("go")], stream);
        let response = complete(&provider, &req).await.0.unwrap();
        assert_eq!(response.finish_reason, FinishReason::ToolCalls, "stream {stream}");
        assert_eq!(
            response.tool_calls,
            [ToolCall { id: "call_0".into(), name: "read_file".into(), arguments: r#"{"path":"README.md"}"#.into() }],
            "stream {stream}"
        );
    }
}

#[tokio::test]
async fn litellm_tool_use_blocks_repeating_one_id_are_one_call() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::SplitToolUseBlocks);
    let args = r#"{"path":"a/long/path/to/the/file.rs"}"#;
    server.push(ScriptedTurn::tool_call("toolu_1", "read_file", args));
    let req = request("c", anthropic_tools(), 2, vec![Message::user("read it")], true);
    let (result, events) = complete(&anthropic(&server), &req).await;
    let response = result.unwrap();
    assert_eq!(
        response.tool_calls,
        [ToolCall { id: "toolu_1".into(), name: "read_file".into(), arguments: args.into() }]
    );
    assert_eq!(events.iter().filter(|e| matches!(e, StreamEvent::ToolCallBegin { .. })).count(), 1);
}

#[tokio::test]
async fn distinct_calls_sharing_an_id_get_unique_ids_that_go_back_to_the_provider() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("dup", "read_file", r#"{"path":"a"}"#).and_call("dup", "read_file", r#"{"path":"b"}"#),
        ScriptedTurn::text("ok"),
    ]);
    let provider = deepseek(&server);
    let req = request("m", openai_tools(), 2, vec![Message::user("go")], true);
    let response = complete(&provider, &req).await.0.unwrap();
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["dup", "dup_1"]);
    let mut next = req.clone();
    next.messages.push(Message::from_response(&response));
    for call in &response.tool_calls {
        next.messages.push(Message::tool_result(&call.id, "x", false));
    }
    complete(&provider, &next).await.0.unwrap();
    let sent = server.requests()[1].json();
    let sent_ids: Vec<&str> =
        sent["messages"][2]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(sent_ids, ["dup", "dup_1"]);
}

/// `[providers.NAME] tool_choice = "auto"`: sent with every request that has
/// tools (llama-cpp-python's `chatml-function-calling` ignores tools without
/// one), in each wire's shape; never without tools; other values refused.
#[tokio::test]
async fn a_configured_tool_choice_goes_with_every_request_that_has_tools() {
    use quiver_agent::{AgentConfig, CliOverrides, ConfigLayer, HttpOptions, Trust};
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("a"), ScriptedTurn::text("b"), ScriptedTurn::text("c")]);
    let text = format!(
        "[providers.llama]\nbase_url = \"{0}\"\napi_key_env = \"K\"\ntool_choice = \"auto\"\n\
         [providers.proxy]\nbase_url = \"{0}\"\napi_key_env = \"K\"\nwire = \"anthropic\"\ntool_choice = \"required\"\n",
        server.base_url()
    );
    let layer = ConfigLayer { trust: Trust::User, path: "config.toml", text: &text };
    let build = |name: &str| {
        let cli = CliOverrides { provider: Some(name.into()), model: Some("m".into()), ..Default::default() };
        let config = AgentConfig::load(std::slice::from_ref(&layer), &cli).unwrap();
        config.build_provider(&|_| Some("k".into()), HttpOptions::default()).unwrap()
    };
    let llama = build("llama");
    complete(llama.as_ref(), &request("m", openai_tools(), 2, vec![Message::user("hi")], false)).await.0.unwrap();
    complete(llama.as_ref(), &request("m", json!([]), 0, vec![Message::user("hi")], false)).await.0.unwrap();
    complete(build("proxy").as_ref(), &request("m", anthropic_tools(), 2, vec![Message::user("hi")], false))
        .await
        .0
        .unwrap();
    let sent: Vec<Value> = server.requests().iter().map(|r| r.json()["tool_choice"].clone()).collect();
    assert_eq!(sent, [json!("auto"), Value::Null, json!({"type": "any"})]);
    let bad = "[providers.llama]\nbase_url = \"http://x\"\napi_key_env = \"K\"\ntool_choice = \"sometimes\"\n";
    let layer = ConfigLayer { trust: Trust::User, path: "config.toml", text: bad };
    let err = AgentConfig::load(&[layer], &CliOverrides::default()).unwrap_err();
    assert!(err.to_string().contains("providers.llama.tool_choice"), "{err}");
}
