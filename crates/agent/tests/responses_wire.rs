//! The Responses wire against the scripted server: text and calls streamed
//! or not, cached tokens, reasoning passed back, retries and broken streams,
//! and the request rules the API enforces.

use quiver_agent::responses::{ResponsesDialect, ResponsesProvider};
use quiver_agent::scripted::{Fault, ScriptedServer, ScriptedTurn};
use quiver_agent::{ApiKey, FinishReason, Message, ModelRequest, ProviderError, ToolCall};
use serde_json::{Value, json};

use crate::support::{complete, fast_options, request};

fn provider(server: &ScriptedServer) -> ResponsesProvider {
    ResponsesProvider::new(
        "openai",
        &server.base_url(),
        ApiKey::new("sk-test"),
        ResponsesDialect::default(),
        fast_options(),
    )
    .unwrap()
}

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "tool_search", "description": "Find tools.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "git_log", "description": "Show the log.",
            "parameters": {"type": "object", "properties": {}}}},
    ])
}

fn req(messages: Vec<Message>, stream: bool) -> ModelRequest {
    request("gpt-5.4", tools(), 2, messages, stream)
}

#[tokio::test]
async fn text_and_calls_streamed_or_not_with_cached_tokens() {
    let server = ScriptedServer::start().await.unwrap();
    let p = provider(&server);
    for stream in [true, false] {
        server.script([
            ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"a.rs"}"#).with_reasoning("Look first."),
            ScriptedTurn::text("Done."),
        ]);
        // Long enough to cache: OpenAI caches prompts of 1024 tokens or more.
        let mut messages = vec![Message::user(format!("Read a.rs.{}", " Carefully.".repeat(400)))];
        let first = complete(&p, &req(messages.clone(), stream)).await.0.unwrap();
        assert_eq!(first.finish_reason, FinishReason::ToolCalls);
        assert_eq!(first.tool_calls[0].arguments, r#"{"path":"a.rs"}"#);
        assert_eq!(first.reasoning.as_deref(), Some("Look first."));
        messages.push(Message::from_response(&first));
        messages.push(Message::tool_result("c1", "fn main() {}", false));
        let second = complete(&p, &req(messages, stream)).await.0.unwrap();
        assert_eq!(second.text, "Done.");
        // The second request repeats the first's prefix: the cache serves it.
        assert!(second.usage_reported && second.usage.cache_hit_tokens > 0, "{:?}", second.usage);
        let body = server.requests().last().unwrap().json();
        assert_eq!(body["stream"], stream);
        let kinds: Vec<&str> = body["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["message", "reasoning", "function_call", "function_call_output"]);
    }
}

#[tokio::test]
async fn a_429_is_retried_and_a_cut_stream_is_an_error() {
    let server = ScriptedServer::start().await.unwrap();
    let p = provider(&server);
    server.script([ScriptedTurn::status(429, Some("0")), ScriptedTurn::text("ok")]);
    let (result, _) = complete(&p, &req(vec![Message::user("hi")], true)).await;
    assert_eq!(result.unwrap().text, "ok");
    server
        .script([ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"a-long-path.rs"}"#)
            .with_fault(Fault::CutMidToolCall)]);
    let err = complete(&p, &req(vec![Message::user("hi")], true)).await.0.unwrap_err();
    assert!(matches!(err, ProviderError::Stream { .. }), "{err}");
    assert!(err.to_string().contains("without response.completed"), "{err}");
}

fn assistant(signature: Option<&str>, calls: Vec<ToolCall>) -> Message {
    Message::Assistant {
        text: String::new(),
        reasoning: None,
        reasoning_signature: signature.map(str::to_string),
        tool_calls: calls,
    }
}

async fn refused(server: &ScriptedServer, request: &ModelRequest) -> String {
    let before = server.remaining();
    let err = complete(&provider(server), request).await.0.unwrap_err();
    assert_eq!(server.remaining(), before, "a refused request takes no turn");
    err.to_string()
}

#[tokio::test]
async fn the_server_refuses_what_the_api_refuses() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("never sent"));
    let ghost = vec![Message::user("hi"), Message::tool_result("ghost", "x", false)];
    assert!(
        refused(&server, &req(ghost, true))
            .await
            .contains("No tool call found for function call output with call_id ghost")
    );

    let unknown = vec![Message::user("hi"), assistant(Some(r#"[{"type":"mystery"}]"#), vec![]), Message::user("again")];
    assert!(refused(&server, &req(unknown, true)).await.contains("Invalid value: 'mystery'"));

    let stored = vec![
        Message::user("hi"),
        assistant(Some(r#"[{"id":"rs_1","summary":[],"type":"reasoning"}]"#), vec![]),
        Message::user("again"),
    ];
    assert!(
        refused(&server, &req(stored, true)).await.contains("Items are not persisted when `store` is set to false")
    );

    let unanswered = vec![
        Message::user("hi"),
        assistant(None, vec![ToolCall { id: "c9".into(), name: "read_file".into(), arguments: "{}".into() }]),
    ];
    assert!(refused(&server, &req(unanswered, true)).await.contains("No tool output found for function call c9"));

    // (A tail tool no search answered is declared in `tools`: a call to it is fine.)
    let unloaded = vec![
        Message::user("hi"),
        assistant(None, vec![ToolCall { id: "c8".into(), name: "never_declared".into(), arguments: "{}".into() }]),
        Message::tool_result("c8", "log", false),
    ];
    assert!(refused(&server, &req(unloaded, true)).await.contains("names no declared or loaded function"));
}

#[tokio::test]
async fn a_tool_search_output_must_not_change_between_requests() {
    let server = ScriptedServer::start().await.unwrap();
    let p = provider(&server);
    let loaded = r#"{"content":[],"is_error":false,"metadata":{"loaded":["git_log"]}}"#;
    let history = vec![
        Message::user("log?"),
        assistant(
            None,
            vec![ToolCall { id: "s1".into(), name: "tool_search".into(), arguments: r#"{"query":"log"}"#.into() }],
        ),
        Message::tool_result("s1", loaded, false),
    ];
    server.push(ScriptedTurn::tool_call("g1", "git_log", "{}"));
    let first = complete(&p, &req(history.clone(), true)).await.0.unwrap();
    assert_eq!(first.tool_calls[0].name, "git_log");
    let body = server.requests().last().unwrap().json();
    assert_eq!(body["input"][2]["type"], "tool_search_output");
    assert_eq!(body["input"][2]["tools"][0]["name"], "git_log");

    // The same search answered with another definition of the tool.
    let mut changed = req(history, true);
    changed.tools[2]["function"]["description"] = json!("Show the log, differently.");
    server.push(ScriptedTurn::text("never sent"));
    assert!(refused(&server, &changed).await.contains("carries other tools than in an earlier request"));
}
