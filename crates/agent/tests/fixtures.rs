//! The providers' published examples (tests/fixtures/README.md names each
//! source), served verbatim by the scripted server and parsed by the client.

use quiver_agent::openai::{OpenAiDialect, parse_response, request_body};
use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::{FinishReason, Message, ModelRequest};
use serde_json::Value;

use crate::support::{anthropic, anthropic_tools, complete, deepseek, openai_tools, request};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn openai_chat_stream_example() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::raw(fixture("openai_chat_stream.sse")));
    let req = request("gpt-4o-mini", openai_tools(), 2, vec![Message::user("Hello!")], true);
    let response = complete(&deepseek(&server), &req).await.0.unwrap();
    assert_eq!(response.text, "Hello! How can I assist you today?");
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (19, 10));
    assert_eq!((response.usage.cache_hit_tokens, response.usage.cache_miss_tokens), (0, 19));
}

#[tokio::test]
async fn openai_tool_call_stream_example_with_null_ids_and_names() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::raw(fixture("openai_tool_call_stream.sse")));
    let req = request("gpt-4o", openai_tools(), 2, vec![Message::user("weather in Paris?")], true);
    let response = complete(&deepseek(&server), &req).await.0.unwrap();
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].id, "call_DdmO9pD3xa9XTPNJ32zg2hcA");
    assert_eq!(response.tool_calls[0].name, "get_weather");
    assert_eq!(response.tool_calls[0].arguments, r#"{"location":"Paris, France"}"#);
}

#[tokio::test]
async fn deepseek_chat_completion_example() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::raw(fixture("deepseek_chat_completion.json")));
    let req = request("deepseek-chat", openai_tools(), 2, vec![Message::user("Hello")], false);
    let response = complete(&deepseek(&server), &req).await.0.unwrap();
    assert_eq!(response.text, "Hello! How can I help you today?");
    assert_eq!(
        (response.usage.input_tokens, response.usage.cache_miss_tokens, response.usage.output_tokens),
        (16, 16, 10)
    );
}

/// The thinking-mode tool-call flow: every assistant message of the user turn
/// goes back with its `reasoning_content`, and the answer's reasoning is not text.
#[test]
fn deepseek_thinking_tool_turns_send_reasoning_back() {
    let sample: Value = serde_json::from_str(&fixture("deepseek_thinking_tool_turns.json")).unwrap();
    let mut messages = vec![Message::user(sample["user"].as_str().unwrap())];
    let mut last = None;
    for body in sample["responses"].as_array().unwrap() {
        let response = parse_response(body).unwrap();
        messages.push(Message::from_response(&response));
        for call in &response.tool_calls {
            messages.push(Message::tool_result(&call.id, sample["tool_results"][&call.id].as_str().unwrap(), false));
        }
        last = Some(response);
    }
    let last = last.unwrap();
    assert_eq!(last.text, "Tomorrow (2025-12-02) Hangzhou will be cloudy, 7~13°C.");
    assert_eq!(last.usage.cache_hit_tokens, 384);
    messages.push(Message::user("And the day after?"));
    let req = ModelRequest { messages, tools: openai_tools(), head_len: 2, ..ModelRequest::new("deepseek-v4-pro") };
    let body = request_body(&req, &OpenAiDialect::default());
    let sent: Vec<&Value> = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(sent.len(), 3);
    for (message, response) in sent.iter().zip(sample["responses"].as_array().unwrap()) {
        assert_eq!(message["reasoning_content"], response["choices"][0]["message"]["reasoning_content"]);
    }
    assert_eq!(sent[0]["tool_calls"][0]["function"]["name"], "get_date");
}

#[tokio::test]
async fn anthropic_tool_use_stream_example() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::raw(fixture("anthropic_tool_use_stream.sse")));
    let req = request("claude", anthropic_tools(), 1, vec![Message::user("weather in SF?")], true);
    let response = complete(&anthropic(&server), &req).await.0.unwrap();
    assert_eq!(response.text, "Okay, let's check the weather for San Francisco, CA:");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.tool_calls[0].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    let input: Value = serde_json::from_str(&response.tool_calls[0].arguments).unwrap();
    assert_eq!(input, serde_json::json!({"location": "San Francisco, CA", "unit": "fahrenheit"}));
    assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (472, 89));
}

#[tokio::test]
async fn anthropic_thinking_stream_example() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::raw(fixture("anthropic_thinking_stream.sse")));
    let req = request("claude", anthropic_tools(), 1, vec![Message::user("GCD of 1071 and 462?")], true);
    let response = complete(&anthropic(&server), &req).await.0.unwrap();
    assert_eq!(response.text, "The greatest common divisor of 1071 and 462 is **21**.");
    let reasoning = response.reasoning.unwrap();
    assert!(reasoning.starts_with("I need to find the GCD") && reasoning.ends_with("= 21"), "{reasoning}");
    assert!(response.reasoning_signature.unwrap().starts_with("EqQBCgIYAhIM"));
    assert_eq!(response.finish_reason, FinishReason::Stop);
}
