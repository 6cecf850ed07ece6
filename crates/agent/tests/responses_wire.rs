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

#[tokio::test]
async fn a_prompt_cache_key_over_the_api_limit_is_refused() {
    let server = ScriptedServer::start().await.unwrap();
    let p = provider(&server);
    server.script([ScriptedTurn::text("Hi."), ScriptedTurn::text("Hi again.")]);
    let mut request = req(vec![Message::user("Hello.")], false);
    request.cache_key = Some(quiver_agent::prompt_cache_key("session-1"));
    complete(&p, &request).await.0.unwrap();
    assert_eq!(server.requests()[0].json()["prompt_cache_key"], json!(quiver_agent::prompt_cache_key("session-1")));
    request.cache_key = Some("k".repeat(65));
    let refused = complete(&p, &request).await.0.unwrap_err();
    assert!(refused.to_string().contains("maximum length 64"), "{refused}");
}

/// A search that loaded the MCP tool `mcp__github__create_issue` and the native
/// `git_log`, and listed `mcp__github__close_issue` without loading it.
fn mcp_search_history() -> Vec<Message> {
    let result = json!({"content": {"matches": [
            {"name": "mcp__github__create_issue", "status": "loaded", "description": "Open an issue."},
            {"name": "git_log", "status": "loaded", "description": "Show the log."},
            {"name": "mcp__github__close_issue", "status": "available_lazy", "description": "Close an issue."}],
        "nextInstruction": "Loaded `mcp__github__create_issue`, `git_log`. Also matching, not loaded: `mcp__github__close_issue`; load one with `select:mcp__github__close_issue`."},
        "is_error": false, "metadata": {"loaded": ["mcp__github__create_issue", "git_log"]}});
    vec![
        Message::user("File an issue about the log."),
        assistant(
            None,
            vec![ToolCall { id: "s1".into(), name: "tool_search".into(), arguments: r#"{"query":"issue"}"#.into() }],
        ),
        Message::tool_result("s1", quiver_engine::canonical::to_string(&result), false),
    ]
}

fn mcp_tools() -> Value {
    let mut list = tools().as_array().unwrap().clone();
    list.push(json!({"type": "function", "function": {"name": "mcp__github__create_issue",
        "description": "Open an issue.", "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}}));
    Value::Array(list)
}

#[tokio::test]
async fn mcp_tools_load_as_a_namespace_and_are_called_through_it() {
    let server = ScriptedServer::start().await.unwrap();
    let p = provider(&server);
    let mut history = mcp_search_history();
    server.push(ScriptedTurn::tool_call("i1", "mcp__github__create_issue", r#"{"title":"log"}"#));
    let first = complete(&p, &request("gpt-5.4", mcp_tools(), 2, history.clone(), true)).await.0.unwrap();
    // The model called `create_issue` in the namespace `mcp__github`: quiver's name again.
    assert_eq!(first.tool_calls[0].name, "mcp__github__create_issue");
    let body = server.requests().last().unwrap().json();
    let head = |b: &Value| quiver_engine::canonical::to_string(&b["tools"]);
    let before = complete_head(&server, &p).await;
    assert_eq!(head(&body), before, "loading by namespace leaves `tools` byte-identical");
    insta::assert_json_snapshot!("search_output_with_a_namespace", &body["input"].as_array().unwrap()[2..]);

    history.push(Message::from_response(&first));
    history.push(Message::tool_result("i1", "issue #7", false));
    server.push(ScriptedTurn::text("Filed #7."));
    complete(&p, &request("gpt-5.4", mcp_tools(), 2, history, true)).await.0.unwrap();
    let body = server.requests().last().unwrap().json();
    let call = body["input"].as_array().unwrap().iter().find(|i| i["type"] == "function_call").unwrap().clone();
    assert_eq!((call["namespace"].as_str(), call["name"].as_str()), (Some("mcp__github"), Some("create_issue")));
}

/// The `tools` of a request with nothing loaded yet (the head alone), as sent.
async fn complete_head(server: &ScriptedServer, p: &ResponsesProvider) -> String {
    server.push(ScriptedTurn::text("Hi."));
    let head = Value::Array(tools().as_array().unwrap()[..2].to_vec());
    complete(p, &request("gpt-5.4", head, 2, vec![Message::user("hi")], true)).await.0.unwrap();
    quiver_engine::canonical::to_string(&server.requests().last().unwrap().json()["tools"])
}

#[tokio::test]
async fn an_mcp_tool_no_search_delivered_stays_a_flat_function() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("never sent"));
    let mut history = mcp_search_history();
    history.push(assistant(
        None,
        vec![ToolCall { id: "x1".into(), name: "mcp__jira__search".into(), arguments: "{}".into() }],
    ));
    history.push(Message::tool_result("x1", "none", false));
    let mut tools = mcp_tools();
    tools.as_array_mut().unwrap().push(json!({"type": "function", "function": {"name": "mcp__jira__search",
        "description": "Search Jira.", "parameters": {"type": "object"}}}));
    // `mcp__jira__search` was never loaded by a search: it is appended to `tools`, flat, and callable.
    let (result, _) = complete(&provider(&server), &request("gpt-5.4", tools, 2, history, true)).await;
    assert_eq!(result.unwrap().text, "never sent");
    let body = server.requests().last().unwrap().json();
    assert_eq!(body["tools"].as_array().unwrap().last().unwrap()["name"], "mcp__jira__search");
    let call = body["input"].as_array().unwrap().iter().find(|i| i["call_id"] == "x1").unwrap().clone();
    assert_eq!((call["name"].as_str(), call.get("namespace")), (Some("mcp__jira__search"), None));
}

/// An Anthropic session keeps several thinking blocks as a JSON array in the
/// same field (see `anthropic::thinking`): resumed on this wire, only
/// `reasoning` items of a kept array are input items (an unknown item type
/// is refused: "Invalid value: 'thinking'").
#[tokio::test]
async fn only_reasoning_items_of_a_kept_array_are_sent() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("ok"));
    let kept = r#"[{"data":"EmwK","type":"redacted_thinking"},{"signature":"S1","thinking":"x","type":"thinking"}]"#;
    let history = vec![Message::user("hi"), assistant(Some(kept), vec![]), Message::user("again")];
    let (result, _) = complete(&provider(&server), &req(history, true)).await;
    assert_eq!(result.unwrap().text, "ok");
    let input = server.requests()[0].json()["input"].clone();
    assert!(!input.to_string().contains("thinking"), "{input}");
}
