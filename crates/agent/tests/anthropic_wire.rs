//! The Anthropic Messages wire against the scripted server.

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::{FinishReason, Message, Provider, StreamEvent, Usage};
use serde_json::{Value, json};

use crate::support::{anthropic, anthropic_tools, complete, request};

#[tokio::test]
async fn streamed_tool_use_thinking_and_usage_are_assembled() {
    let server = ScriptedServer::start().await.unwrap();
    let usage = Usage {
        input_tokens: 1000,
        output_tokens: 50,
        cache_hit_tokens: 800,
        cache_miss_tokens: 200,
        cache_write_tokens: 150,
    };
    let args = r#"{"query":"git diff of the \"staged\" changes"}"#;
    server.push(
        ScriptedTurn::tool_call("toolu_1", "tool_search", args)
            .and_call("toolu_2", "read_file", r#"{"path":"README.md"}"#)
            .with_reasoning("Search first, read the readme too.")
            .with_usage(usage),
    );
    let provider = anthropic(&server);
    let req = request("claude-sonnet-4-5", anthropic_tools(), 2, vec![Message::user("show the diff")], true);
    let (result, events) = complete(&provider, &req).await;
    let response = result.unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.text, "");
    assert_eq!(response.reasoning.as_deref(), Some("Search first, read the readme too."));
    assert_eq!(response.reasoning_signature.as_deref(), Some("scripted-signature"));
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(response.tool_calls[0].arguments, args);
    assert_eq!(response.tool_calls[1].id, "toolu_2");
    assert_eq!(response.usage, usage);
    assert!(
        events.iter().any(|e| matches!(e, StreamEvent::ToolCallBegin { index: 1, name, .. } if name == "read_file"))
    );
}

#[tokio::test]
async fn unstreamed_message_has_the_same_shape() {
    let server = ScriptedServer::start().await.unwrap();
    let usage = Usage {
        input_tokens: 30,
        output_tokens: 5,
        cache_hit_tokens: 20,
        cache_miss_tokens: 10,
        cache_write_tokens: 4,
    };
    let turn =
        ScriptedTurn::text("Hi there.").and_call("toolu_9", "git_diff", "{}").with_reasoning("hmm").with_usage(usage);
    server.script([turn.clone(), turn]);
    let provider = anthropic(&server);
    let streamed =
        complete(&provider, &request("c", anthropic_tools(), 2, vec![Message::user("x")], true)).await.0.unwrap();
    let plain =
        complete(&provider, &request("c", anthropic_tools(), 2, vec![Message::user("x")], false)).await.0.unwrap();
    assert_eq!(streamed, plain);
    assert_eq!(streamed.tool_calls[0].arguments, "{}");
}

#[tokio::test]
async fn request_shape_system_cache_breakpoint_and_grouped_tool_results() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("ok"));
    let provider = anthropic(&server);
    let history = vec![
        Message::user("look at a and b"),
        quiver_agent::Message::Assistant {
            text: "Reading both.".into(),
            reasoning: Some("two reads".into()),
            reasoning_signature: Some("sig".into()),
            tool_calls: vec![
                quiver_agent::ToolCall {
                    id: "t1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                },
                quiver_agent::ToolCall {
                    id: "t2".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"b"}"#.into(),
                },
            ],
        },
        Message::tool_result("t1", "A", false),
        Message::tool_result("t2", "no such file", true),
    ];
    complete(&provider, &request("claude-sonnet-4-5", anthropic_tools(), 2, history, true)).await.0.unwrap();
    let recorded = &server.requests()[0];
    assert_eq!(recorded.path, "/v1/messages");
    assert_eq!(recorded.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    let body = recorded.json();
    assert_eq!(body["system"], "You are a coding agent.");
    assert_eq!(body["max_tokens"], 8192);
    // The breakpoint is on the last head tool only.
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[1]["cache_control"], json!({"type": "ephemeral"}));
    assert!(tools[0].get("cache_control").is_none() && tools[2].get("cache_control").is_none());
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "user, assistant, one user with both results");
    let assistant = messages[1]["content"].as_array().unwrap();
    assert_eq!(assistant[0], json!({"type": "thinking", "thinking": "two reads", "signature": "sig"}));
    assert_eq!(assistant[2]["input"], json!({"path": "a"}));
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0], json!({"type": "tool_result", "tool_use_id": "t1", "content": "A"}));
    assert_eq!(results[1]["is_error"], Value::Bool(true));
}

#[tokio::test]
async fn computed_usage_reads_the_previous_conversation_from_cache() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let provider = anthropic(&server);
    // Over the 1024 tokens Sonnet caches at least.
    let mut history = vec![Message::user(format!("first{}", " and more".repeat(600)))];
    let first = complete(&provider, &request("claude-sonnet-4-5", anthropic_tools(), 3, history.clone(), true))
        .await
        .0
        .unwrap();
    assert_eq!(first.usage.cache_hit_tokens, 0);
    assert!(first.usage.cache_write_tokens > 0);
    history.push(Message::from_response(&first));
    history.push(Message::user("second"));
    let second =
        complete(&provider, &request("claude-sonnet-4-5", anthropic_tools(), 3, history, true)).await.0.unwrap();
    // The breakpoint on the conversation's end wrote it all; the next
    // request reads it and writes only its new turn.
    assert!(second.usage.cache_hit_tokens >= first.usage.cache_write_tokens, "{:?}", second.usage);
    assert!(second.usage.cache_write_tokens > 0 && second.usage.cache_write_tokens < 50, "{:?}", second.usage);
    let requests = server.requests();
    assert_eq!(requests[1].cached_bytes, requests[0].prompt_bytes, "the whole previous prompt is served");
}

#[tokio::test]
async fn short_prompts_are_not_cached_on_the_messages_api() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let provider = anthropic(&server);
    let history = vec![Message::user("first")];
    let first = complete(&provider, &request("c", anthropic_tools(), 3, history.clone(), true)).await.0.unwrap();
    assert_eq!((first.usage.cache_hit_tokens, first.usage.cache_write_tokens), (0, 0));
    let again = complete(&provider, &request("c", anthropic_tools(), 3, history, true)).await.0.unwrap();
    assert_eq!(again.usage.cache_hit_tokens, 0, "under the model's minimum nothing was written");
}

#[tokio::test]
async fn anthropic_has_no_fim() {
    let server = ScriptedServer::start().await.unwrap();
    let err = anthropic(&server).fim("a", "b", 5).await.unwrap_err().to_string();
    assert!(err.contains("anthropic") && err.contains("fill-in-the-middle"), "{err}");
}

#[tokio::test]
async fn identical_input_identical_bytes_and_messages_extend_across_turns() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("t1", "read_file", r#"{"path":"a"}"#),
        ScriptedTurn::text("done"),
        ScriptedTurn::tool_call("t1", "read_file", r#"{"path":"a"}"#),
    ]);
    let provider = anthropic(&server);
    let first_req = request("c", anthropic_tools(), 2, vec![Message::user("go")], true);
    let first = complete(&provider, &first_req).await.0.unwrap();
    let mut history = first_req.messages.clone();
    history.push(Message::from_response(&first));
    history.push(Message::tool_result("t1", "A", false));
    complete(&provider, &request("c", anthropic_tools(), 2, history, true)).await.0.unwrap();
    complete(&provider, &first_req).await.0.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].body, requests[2].body);
    // The one breakpoint in the messages is on the last block; the rest only
    // appends (the marker is not part of the cache key).
    let marked = |i: usize| requests[i].json()["messages"].to_string().matches("cache_control").count();
    assert_eq!((marked(0), marked(1)), (1, 1));
    let last = requests[1].json()["messages"].as_array().unwrap().last().unwrap()["content"][0].clone();
    assert_eq!(last["cache_control"], json!({"type": "ephemeral"}));
    let messages = |i: usize| {
        let mut messages = requests[i].json()["messages"].clone();
        for message in messages.as_array_mut().unwrap() {
            for block in message["content"].as_array_mut().unwrap() {
                block.as_object_mut().unwrap().remove("cache_control");
            }
        }
        quiver_engine::canonical::to_string(&messages)
    };
    let (a, b) = (messages(0), messages(1));
    assert!(b.starts_with(&a[..a.len() - 1]), "{a}\n{b}");
    assert_eq!(requests[0].json()["tools"], requests[1].json()["tools"]);
}
