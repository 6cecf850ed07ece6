//! Deferred tools on the Anthropic wire against the scripted server: the
//! body's shape, the documented refusals, and what the server's prefix cache
//! serves when a tool is loaded by reference rather than appended.

use quiver_agent::deferred::DeferredTools;
use quiver_agent::scripted::{Quirk, ScriptedServer, ScriptedTurn};
use quiver_agent::{Message, ModelRequest, ToolCall};
use serde_json::{Value, json};

use crate::support::{anthropic, anthropic_tools, complete, request};

fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("{name} things"), "input_schema": {"type": "object"}})
}

/// A session after a search that loaded `git_log`: head (3 tools), the tail,
/// every loadable tool, and the search's result.
fn after_search(tail: bool) -> ModelRequest {
    let mut tools = anthropic_tools().as_array().unwrap().clone();
    if tail {
        tools.push(tool("git_log"));
    }
    let mut search = Message::tool_result("toolu_1", "loaded: git_log", false);
    if let Message::Tool { loaded, .. } = &mut search {
        loaded.push("git_log".into());
    }
    let call = ToolCall { id: "toolu_1".into(), name: "tool_search".into(), arguments: r#"{"query":"log"}"#.into() };
    let messages = vec![
        // Over the 1024 tokens the Messages API caches at least.
        Message::user(format!("show the log{}", " please".repeat(800))),
        Message::Assistant { text: String::new(), reasoning: None, reasoning_signature: None, tool_calls: vec![call] },
        search,
    ];
    let mut req = request("claude-sonnet-4-5", Value::Array(tools), 3, messages, false);
    req.deferred_tools = vec![tool("git_log"), tool("web_fetch")];
    req
}

#[tokio::test]
async fn a_load_by_reference_keeps_the_whole_previous_prompt_cached() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let provider = anthropic(&server);
    let mut before = after_search(false);
    before.messages.truncate(1);
    complete(&provider, &before).await.0.unwrap();
    complete(&provider, &after_search(true)).await.0.unwrap();
    let requests = server.requests();
    let body = requests[1].json();
    let names: Vec<&str> = body["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["read_file", "tool_search", "git_diff", "git_log", "web_fetch"]);
    assert_eq!(requests[0].json()["tools"], body["tools"], "the load did not touch `tools`");
    let user = &body["messages"][2]["content"];
    assert_eq!(user[0]["content"], json!([{"type": "tool_reference", "tool_name": "git_log"}]));
    let breakpoint = json!({"type": "ephemeral"});
    assert_eq!(user[1], json!({"type": "text", "text": "loaded: git_log", "cache_control": breakpoint}));
    // The deferred tools are not in the prompt; the previous prompt is all
    // served (the conversation's breakpoint wrote it).
    assert_eq!(requests[1].cached_bytes, requests[0].prompt_bytes);
    assert_eq!(requests[1].extends_previous, Some(true));
    assert!(requests[1].prompt_bytes > requests[0].prompt_bytes);
}

#[tokio::test]
async fn appending_costs_the_cached_messages_on_the_loading_request() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let provider = anthropic(&server).with_deferred_tools(Some(DeferredTools::Append));
    let mut before = after_search(false);
    before.messages.truncate(1);
    before.deferred_tools.clear();
    let mut after = after_search(true);
    after.deferred_tools.clear();
    complete(&provider, &before).await.0.unwrap();
    complete(&provider, &after).await.0.unwrap();
    let requests = server.requests();
    assert!(!String::from_utf8_lossy(&requests[1].body).contains("tool_reference"));
    assert!(requests[1].cached_bytes + 1 < requests[0].prompt_bytes, "the appended tool sits before the messages");
    assert_eq!(requests[1].extends_previous, Some(false));
}

#[tokio::test]
async fn the_server_refuses_what_the_messages_api_documents_as_invalid() {
    let server = ScriptedServer::start().await.unwrap();
    let provider = anthropic(&server);
    let refused = |body: &Value| body["error"]["message"].as_str().unwrap_or_default().to_string();

    // A reference to a tool that is not deferred in `tools`.
    let raw = post(&server, &unknown_reference_body()).await;
    assert!(refused(&raw).contains("tool_reference `nowhere`"), "{raw}");

    // Every tool deferred.
    let all_deferred = json!({"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "a", "description": "", "input_schema": {"type": "object"}, "defer_loading": true}]});
    assert!(refused(&post(&server, &all_deferred).await).contains("at least one tool"));

    // Text before a tool result in a user message.
    let text_first = json!({"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]});
    assert!(refused(&post(&server, &text_first).await).contains("tool_result blocks must come before"));
    // None of them took a turn; what the provider sends is accepted.
    server.push(ScriptedTurn::text("fine"));
    assert_eq!(complete(&provider, &after_search(true)).await.0.unwrap().text, "fine");
}

fn unknown_reference_body() -> Value {
    json!({"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "tool_search", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
            "content": [{"type": "tool_reference", "tool_name": "nowhere"}]}]}],
        "tools": [{"name": "tool_search", "description": "", "input_schema": {"type": "object"}},
            {"name": "git_log", "description": "", "input_schema": {"type": "object"}, "defer_loading": true}]})
}

async fn post(server: &ScriptedServer, body: &Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

#[tokio::test]
async fn a_proxy_without_defer_loading_refuses_it_and_append_works_there() {
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::NoDeferLoading);
    server.push(ScriptedTurn::text("ok"));
    let error = complete(&anthropic(&server), &after_search(true)).await.0.unwrap_err();
    assert!(error.to_string().contains("defer_loading: Extra inputs are not permitted"), "{error}");
    let mut appended = after_search(true);
    appended.deferred_tools.clear();
    let provider = anthropic(&server).with_deferred_tools(Some(DeferredTools::Append));
    assert_eq!(complete(&provider, &appended).await.0.unwrap().text, "ok");
}
