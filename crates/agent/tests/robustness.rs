//! Retries, timeouts and broken streams: every failure is a `ProviderError`
//! naming the provider and what broke, never a panic or a hang.

use std::time::{Duration, Instant};

use quiver_agent::scripted::{Fault, ScriptedServer, ScriptedTurn};
use quiver_agent::{HttpOptions, Message, ProviderError, StreamEvent};

use crate::support::{
    anthropic, anthropic_tools, complete, deepseek, deepseek_with, fast_options, openai_tools, request,
};

fn simple() -> quiver_agent::ModelRequest {
    request("deepseek-chat", openai_tools(), 2, vec![Message::user("hi")], true)
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_succeeds() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::status(429, Some("1")), ScriptedTurn::text("hello")]);
    let provider = deepseek(&server);
    let started = Instant::now();
    let (result, events) = complete(&provider, &simple()).await;
    assert_eq!(result.unwrap().text, "hello");
    // The test policy's own backoff is at most 50 ms: the wait was Retry-After's.
    assert!(started.elapsed() >= Duration::from_millis(950), "{:?}", started.elapsed());
    let retries: Vec<_> = events.iter().filter(|e| matches!(e, StreamEvent::Retrying { .. })).collect();
    assert_eq!(retries.len(), 1);
    assert!(matches!(retries[0], StreamEvent::Retrying { attempt: 1, wait, reason }
        if *wait == Duration::from_secs(1) && reason.contains("429")));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].body, server.requests()[1].body, "a retry resends the same bytes");
}

#[tokio::test]
async fn a_retry_after_beyond_the_time_budget_gives_up_at_once() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::status(429, Some("3600")), ScriptedTurn::text("never")]);
    let provider = deepseek(&server);
    let started = Instant::now();
    let err = complete(&provider, &simple()).await.0.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(&err, ProviderError::RetriesExhausted { attempts: 1, .. }), "{err}");
    assert!(err.to_string().contains("HTTP 429"), "{err}");
}

#[tokio::test]
async fn repeated_500s_exhaust_the_attempts_with_a_clear_error() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::status(500, None), ScriptedTurn::status(502, None), ScriptedTurn::status(503, None)]);
    let provider = deepseek(&server);
    let err = complete(&provider, &simple()).await.0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ProviderError::RetriesExhausted { attempts: 3, .. }));
    assert!(text.starts_with("deepseek: gave up after 3 attempts"), "{text}");
    assert!(text.contains("HTTP 503: scripted status 503"), "{text}");
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn a_400_is_not_retried_and_its_message_is_surfaced() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::status(400, None), ScriptedTurn::text("unused")]);
    let err = complete(&deepseek(&server), &simple()).await.0.unwrap_err();
    assert_eq!(err.to_string(), "deepseek: HTTP 400: scripted status 400");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_connection_refused_is_retried_then_reported() {
    let server = ScriptedServer::start().await.unwrap();
    let provider = deepseek(&server);
    drop(server); // nothing listens on that port any more
    tokio::time::sleep(Duration::from_millis(50)).await;
    let err = complete(&provider, &simple()).await.0.unwrap_err();
    assert!(matches!(err, ProviderError::RetriesExhausted { attempts: 3, .. }), "{err}");
    assert!(err.to_string().contains("connection failed"), "{err}");
}

#[tokio::test]
async fn a_stream_cut_mid_tool_call_names_the_provider_and_the_call() {
    let server = ScriptedServer::start().await.unwrap();
    let turn = ScriptedTurn::tool_call("call_1", "read_file", r#"{"path":"a/long/path/to/some/file.rs"}"#);
    server.push(turn.clone().with_fault(Fault::CutMidToolCall));
    let err = complete(&deepseek(&server), &simple()).await.0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ProviderError::Stream { .. }));
    assert!(text.starts_with("deepseek: stream broken:"), "{text}");
    assert!(text.contains("tool call `read_file` was cut"), "{text}");

    server.push(turn.with_fault(Fault::CutMidToolCall));
    let req = request("c", anthropic_tools(), 1, vec![Message::user("hi")], true);
    let text = complete(&anthropic(&server), &req).await.0.unwrap_err().to_string();
    assert!(text.starts_with("anthropic: stream broken:"), "{text}");
    assert!(text.contains("tool_use `read_file` was cut"), "{text}");
}

#[tokio::test]
async fn a_garbage_line_is_a_stream_error_not_a_panic() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::text("hello world, this is long").with_fault(Fault::GarbageLine));
    let text = complete(&deepseek(&server), &simple()).await.0.unwrap_err().to_string();
    assert!(text.contains("deepseek: stream broken:") && text.contains("not JSON"), "{text}");
}

#[tokio::test]
async fn a_silent_stream_hits_the_idle_timeout() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(
        ScriptedTurn::text("hello world, more text").with_fault(Fault::StallAfterFirstChunk(Duration::from_secs(5))),
    );
    let options = HttpOptions { idle_timeout: Duration::from_millis(200), ..fast_options() };
    let err = complete(&deepseek_with(&server, options), &simple()).await.0.unwrap_err();
    assert!(matches!(err, ProviderError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("deepseek: the stream"), "{err}");
}

#[tokio::test]
async fn a_slow_first_byte_hits_the_request_timeout_and_is_retried() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([ScriptedTurn::text("late").with_delay(Duration::from_secs(2)), ScriptedTurn::text("on time")]);
    let options = HttpOptions { request_timeout: Duration::from_millis(300), ..fast_options() };
    let response = complete(&deepseek_with(&server, options), &simple()).await.0.unwrap();
    assert_eq!(response.text, "on time");
}

/// An error chunk mid-stream: a kind OpenAI calls temporary (`server_error`)
/// is retried like a 500, and when every try breaks the error names it; any
/// other kind is reported at once.
#[tokio::test]
async fn an_error_event_mid_stream_is_reported() {
    let server = ScriptedServer::start().await.unwrap();
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n\
                data: {\"error\":{\"message\":\"Overloaded\",\"type\":\"server_error\"}}\n\n";
    let tries = fast_options().retry.max_attempts;
    server.script((0..tries).map(|_| ScriptedTurn::raw(body)));
    let text = complete(&deepseek(&server), &simple()).await.0.unwrap_err().to_string();
    assert_eq!(text, "deepseek: stream broken: the provider sent an error mid-stream (server_error): Overloaded");
    assert_eq!(server.requests().len(), usize::try_from(tries).unwrap());

    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::raw(body.replace("server_error", "invalid_request_error")));
    let text = complete(&deepseek(&server), &simple()).await.0.unwrap_err().to_string();
    assert!(text.contains("mid-stream (invalid_request_error): Overloaded"), "{text}");
    assert_eq!(server.requests().len(), 1);
}

/// An overload after the 200 is retried like a 529 (see `exec`'s test of a
/// retry that succeeds); when every try is overloaded, the error names it.
#[tokio::test]
async fn an_anthropic_error_event_is_reported_with_its_type() {
    let server = ScriptedServer::start().await.unwrap();
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n\
                event: ping\ndata: {\"type\": \"ping\"}\n\n\
                event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let tries = fast_options().retry.max_attempts;
    server.script((0..tries).map(|_| ScriptedTurn::raw(body)));
    let req = request("c", anthropic_tools(), 1, vec![Message::user("hi")], true);
    let (result, events) = complete(&anthropic(&server), &req).await;
    let text = result.unwrap_err().to_string();
    assert_eq!(text, "anthropic: stream broken: the provider sent overloaded_error mid-stream: Overloaded");
    assert_eq!(server.requests().len(), usize::try_from(tries).unwrap());
    let retries = events.iter().filter(|e| matches!(e, StreamEvent::Retrying { .. })).count();
    assert_eq!(retries, usize::try_from(tries - 1).unwrap());
}
