//! The OpenAI-compatible wire against the scripted server: streamed tool calls,
//! DeepSeek reasoning, usage, and byte-stable request bodies.

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::{Effort, FinishReason, Message, Provider, StreamEvent, ToolCall, Usage};
use serde_json::{Value, json};

use crate::support::{complete, deepseek, openai_tools, request};

#[tokio::test]
async fn split_tool_call_deltas_are_assembled_by_index() {
    let server = ScriptedServer::start().await.unwrap();
    let args = r#"{"path":"src/main.rs","note":"a \"quoted\" ünïcode value"}"#;
    server.push(ScriptedTurn::tool_call("call_1", "read_file", args));
    let provider = deepseek(&server);
    let req = request("deepseek-chat", openai_tools(), 1, vec![Message::user("read it")], true);
    let (result, events) = complete(&provider, &req).await;
    let response = result.unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.tool_calls,
        vec![ToolCall { id: "call_1".into(), name: "read_file".into(), arguments: args.into() }]
    );
    // The arguments really arrived in pieces, split inside the JSON.
    let fragments: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallArgumentsDelta { fragment, .. } => Some(fragment.as_str()),
            _ => None,
        })
        .collect();
    assert!(fragments.len() > 5, "{fragments:?}");
    assert!(fragments.iter().any(|f| serde_json::from_str::<Value>(f).is_err()));
    assert_eq!(fragments.concat(), args);
    assert!(matches!(&events[0], StreamEvent::ToolCallBegin { index: 0, name, .. } if name == "read_file"));
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order_and_ids() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(
        ScriptedTurn::tool_call("call_a", "read_file", r#"{"path":"a.rs"}"#)
            .and_call("call_b", "grep_files", r#"{"pattern":"fn main"}"#)
            .and_call("call_c", "read_file", r#"{"path":"c.rs"}"#),
    );
    let provider = deepseek(&server);
    let req = request("deepseek-chat", openai_tools(), 1, vec![Message::user("go")], true);
    let response = complete(&provider, &req).await.0.unwrap();
    let got: Vec<(&str, &str, &str)> =
        response.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect();
    assert_eq!(
        got,
        vec![
            ("call_a", "read_file", r#"{"path":"a.rs"}"#),
            ("call_b", "grep_files", r#"{"pattern":"fn main"}"#),
            ("call_c", "read_file", r#"{"path":"c.rs"}"#),
        ]
    );
}

#[tokio::test]
async fn streamed_and_unstreamed_answers_have_the_same_shape() {
    let server = ScriptedServer::start().await.unwrap();
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 7,
        cache_hit_tokens: 64,
        cache_miss_tokens: 36,
        ..Default::default()
    };
    let turn = ScriptedTurn::text("The answer is 42.").with_reasoning("Think: 6*7.").with_usage(usage);
    server.script([turn.clone(), turn]);
    let provider = deepseek(&server);
    let streamed = complete(&provider, &request("m", json!([]), 0, vec![Message::user("q")], true)).await.0.unwrap();
    let plain = complete(&provider, &request("m", json!([]), 0, vec![Message::user("q")], false)).await.0.unwrap();
    assert_eq!(streamed, plain);
    assert_eq!(streamed.text, "The answer is 42.");
    assert_eq!(streamed.usage, usage);
    let requests = server.requests();
    assert_eq!(requests[0].json()["stream_options"], json!({"include_usage": true}));
    assert!(requests[1].json().get("stream_options").is_none());
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
}

#[tokio::test]
async fn finish_reasons_length_and_content_filter_are_reported() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::text("truncat").with_finish("length"),
        ScriptedTurn::text("").with_finish("content_filter"),
    ]);
    let provider = deepseek(&server);
    let req = request("m", json!([]), 0, vec![Message::user("q")], true);
    assert_eq!(complete(&provider, &req).await.0.unwrap().finish_reason, FinishReason::Length);
    assert_eq!(complete(&provider, &req).await.0.unwrap().finish_reason, FinishReason::ContentFilter);
}

/// DeepSeek thinking mode: reasoning never becomes the answer, and goes back
/// on the assistant messages of a user turn that made tool calls, but not on
/// a turn without tool calls (thinking_mode guide, "Tool Calls").
#[tokio::test]
async fn reasoning_stays_out_of_the_answer_and_goes_back_per_the_deepseek_rule() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::text("Paris.").with_reasoning("Capital of France: Paris."),
        ScriptedTurn::tool_call("call_1", "read_file", r#"{"path":"x"}"#).with_reasoning("I should read x."),
        ScriptedTurn::text("x says hi.").with_reasoning("The file says hi."),
        ScriptedTurn::text("ok"),
    ]);
    let provider = deepseek(&server);
    let mut history = vec![Message::user("capital of France?")];
    let first =
        complete(&provider, &request("deepseek-v4-pro", openai_tools(), 2, history.clone(), true)).await.0.unwrap();
    assert_eq!(first.text, "Paris.");
    assert_eq!(first.reasoning.as_deref(), Some("Capital of France: Paris."));
    history.push(Message::from_response(&first));
    history.push(Message::user("what does x say?"));
    let second =
        complete(&provider, &request("deepseek-v4-pro", openai_tools(), 2, history.clone(), true)).await.0.unwrap();
    assert!(second.text.is_empty());
    history.push(Message::from_response(&second));
    history.push(Message::tool_result("call_1", "hi", false));
    let third =
        complete(&provider, &request("deepseek-v4-pro", openai_tools(), 2, history.clone(), true)).await.0.unwrap();
    history.push(Message::from_response(&third));
    history.push(Message::user("thanks"));
    complete(&provider, &request("deepseek-v4-pro", openai_tools(), 2, history, true)).await.0.unwrap();

    let last = server.requests().pop().unwrap().json();
    let assistants: Vec<&Value> =
        last["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(assistants.len(), 3);
    // No tool calls in the first user turn: no reasoning sent back.
    assert!(assistants[0].get("reasoning_content").is_none());
    assert_eq!(assistants[0]["content"], "Paris.");
    // The tool-call turn and the answer after it: reasoning sent back verbatim.
    assert_eq!(assistants[1]["reasoning_content"], "I should read x.");
    // A turn that only calls tools leaves `content` out (see `ToolTurnContent`).
    assert!(assistants[1].get("content").is_none(), "{}", assistants[1]);
    assert_eq!(assistants[2]["reasoning_content"], "The file says hi.");
    assert_eq!(assistants[2]["content"], "x says hi.");
}

#[tokio::test]
async fn identical_conversations_give_identical_bytes_and_turns_extend_the_prefix() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("call_1", "read_file", r#"{"path":"a"}"#),
        ScriptedTurn::text("done"),
        ScriptedTurn::tool_call("call_1", "read_file", r#"{"path":"a"}"#),
    ]);
    let provider = deepseek(&server);
    let mut req = request("deepseek-chat", openai_tools(), 2, vec![Message::user("go")], true);
    req.effort = Some(Effort::High);
    req.max_output_tokens = Some(4096);
    let first = complete(&provider, &req).await.0.unwrap();
    let mut next = req.clone();
    next.messages.push(Message::from_response(&first));
    next.messages.push(Message::tool_result("call_1", "contents of a", false));
    complete(&provider, &next).await.0.unwrap();
    complete(&provider, &req).await.0.unwrap();

    let requests = server.requests();
    assert_eq!(requests[0].body, requests[2].body, "same input, same bytes");
    let body = String::from_utf8(requests[0].body.clone()).unwrap();
    assert_eq!(body, quiver_engine::canonical::to_string(&requests[0].json()), "canonical, sorted keys");
    let messages = |i: usize| quiver_engine::canonical::to_string(&requests[i].json()["messages"]);
    let (a, b) = (messages(0), messages(1));
    assert!(b.starts_with(&a[..a.len() - 1]), "messages of turn 2 extend turn 1's:\n{a}\n{b}");
    assert_eq!(requests[0].json()["tools"], requests[1].json()["tools"]);
    assert_eq!(requests[0].json()["reasoning_effort"], "high");
    assert_eq!(requests[0].json()["max_tokens"], 4096);
}

#[tokio::test]
async fn cache_hits_come_from_the_shared_prefix() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let provider = deepseek(&server);
    let mut history = vec![Message::user("first question")];
    let first = complete(&provider, &request("m", openai_tools(), 2, history.clone(), true)).await.0.unwrap();
    assert_eq!(first.usage.cache_hit_tokens, 0);
    assert_eq!(first.usage.cache_miss_tokens, first.usage.input_tokens);
    history.push(Message::from_response(&first));
    history.push(Message::user("second question"));
    let second = complete(&provider, &request("m", openai_tools(), 2, history, true)).await.0.unwrap();
    assert!(second.usage.cache_hit_tokens > first.usage.input_tokens / 2, "{:?}", second.usage);
    assert_eq!(second.usage.cache_hit_tokens + second.usage.cache_miss_tokens, second.usage.input_tokens);
}

#[tokio::test]
async fn fim_uses_the_beta_completions_endpoint() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("    return a + b\n"));
    let provider = deepseek(&server);
    let middle = provider.fim("def add(a, b):\n", "\nprint(add(1, 2))", 64).await.unwrap();
    assert_eq!(middle, "    return a + b\n");
    let req = &server.requests()[0];
    assert_eq!(req.path, "/beta/completions");
    assert_eq!(req.json()["suffix"], "\nprint(add(1, 2))");
    assert_eq!(req.json()["max_tokens"], 64);
}
