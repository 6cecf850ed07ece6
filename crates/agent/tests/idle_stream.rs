//! The stream idle timeout: any byte keeps a stream alive (an SSE
//! comment too, which llama-cpp-python sends every 15 s while the model
//! works), the wait is `[providers.NAME] stream_idle_timeout_secs`, and a
//! stream silent before any output is asked again like other temporary
//! failures.

use std::time::Duration;

use quiver_agent::scripted::{Fault, ScriptedServer, ScriptedTurn};
use quiver_agent::{AgentConfig, CliOverrides, ConfigLayer, HttpOptions, Message, ProviderError, StreamEvent, Trust};

use crate::support::{complete, deepseek_with, fast_options, openai_tools, request};

fn simple() -> quiver_agent::ModelRequest {
    request("deepseek-chat", openai_tools(), 2, vec![Message::user("hi")], true)
}

fn short_idle(ms: u64) -> HttpOptions {
    HttpOptions { idle_timeout: Duration::from_millis(ms), ..fast_options() }
}

/// Comments for three times the idle timeout, then the answer: a server at
/// work, not a dead one.
#[tokio::test]
async fn sse_comments_keep_a_slow_stream_alive() {
    let server = ScriptedServer::start().await.unwrap();
    let pings = Fault::PingsFirst { every: Duration::from_millis(100), count: 9 };
    server.push(ScriptedTurn::text("worth the wait").with_fault(pings));
    let (result, events) = complete(&deepseek_with(&server, short_idle(300)), &simple()).await;
    assert_eq!(result.unwrap().text, "worth the wait");
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::Retrying { .. })), "{events:?}");
    assert_eq!(server.requests().len(), 1, "never asked again");
}

/// The same on the Anthropic wire (its own assembler, the same reader).
#[tokio::test]
async fn sse_comments_keep_an_anthropic_stream_alive() {
    let server = ScriptedServer::start().await.unwrap();
    let pings = Fault::PingsFirst { every: Duration::from_millis(100), count: 9 };
    server.push(ScriptedTurn::text("still here").with_fault(pings));
    let provider = quiver_agent::anthropic::AnthropicProvider::new(
        "anthropic",
        &server.base_url(),
        quiver_agent::ApiKey::new("sk-ant-test"),
        short_idle(300),
    )
    .unwrap();
    let req = request("c", crate::support::anthropic_tools(), 1, vec![Message::user("hi")], true);
    assert_eq!(complete(&provider, &req).await.0.unwrap().text, "still here");
}

/// Silent from the first byte on: nothing reached the caller, so the request
/// goes again, and a second try that answers is the answer.
#[tokio::test]
async fn a_stream_silent_before_any_output_is_asked_again() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::text("lost").with_fault(Fault::SilentFirst(Duration::from_secs(3))),
        ScriptedTurn::text("second try"),
    ]);
    let (result, events) = complete(&deepseek_with(&server, short_idle(200)), &simple()).await;
    assert_eq!(result.unwrap().text, "second try");
    let reasons: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("no byte for 200"), "{reasons:?}");
}

/// Silent on every try: the error says how long the stream was silent, after
/// how much, and which setting sets the wait.
#[tokio::test]
async fn a_stream_silent_on_every_try_times_out_with_a_precise_message() {
    let server = ScriptedServer::start().await.unwrap();
    let tries = fast_options().retry.max_attempts;
    server
        .script((0..tries).map(|_| ScriptedTurn::text("lost").with_fault(Fault::SilentFirst(Duration::from_secs(3)))));
    let err = complete(&deepseek_with(&server, short_idle(200)), &simple()).await.0.unwrap_err();
    assert!(matches!(err, ProviderError::Timeout { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "deepseek: the stream (no byte for 200.0ms after 0 events, 0 bytes, try 3 of 3; \
         `stream_idle_timeout_secs` sets the wait) timed out after 200.0ms"
    );
    assert_eq!(server.requests().len(), usize::try_from(tries).unwrap());
}

/// Output already went to the caller: asking again would repeat it, so a
/// stall mid-answer is reported, not retried.
#[tokio::test]
async fn a_stall_after_output_is_not_asked_again() {
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::text("hello world, more text").with_fault(Fault::StallAfterFirstChunk(Duration::from_secs(3))),
        ScriptedTurn::text("must not be asked"),
    ]);
    let err = complete(&deepseek_with(&server, short_idle(200)), &simple()).await.0.unwrap_err();
    assert!(err.to_string().starts_with("deepseek: the stream (no byte for 200.0ms after 3 events"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

/// `stream_idle_timeout_secs` reaches the provider: with one second, pings
/// every 0.4 s for 2 s keep the stream alive, and silence for 3 s does not.
#[tokio::test]
async fn stream_idle_timeout_secs_is_read_from_the_provider_table() {
    let text = "[providers.local]\nbase_url = \"URL\"\napi_key_env = \"K\"\nstream_idle_timeout_secs = 1\n\
                [model]\nprovider = \"local\"\nmodel = \"m\"\n";
    let server = ScriptedServer::start().await.unwrap();
    let text = text.replace("URL", &server.base_url());
    let layer = ConfigLayer { trust: Trust::User, path: "user.toml", text: &text };
    let config = AgentConfig::load(&[layer], &CliOverrides::default()).unwrap();
    assert_eq!(config.selected().unwrap().stream_idle_timeout_secs, Some(1));
    // Long defaults, so that only the configured second can time out.
    let options = HttpOptions { idle_timeout: Duration::from_secs(60), ..fast_options() };
    let provider = config.build_provider(&|_| Some("k".into()), options).unwrap();
    let req = request("m", openai_tools(), 2, vec![Message::user("hi")], true);

    let pings = Fault::PingsFirst { every: Duration::from_millis(400), count: 5 };
    let silent = || ScriptedTurn::text("lost").with_fault(Fault::SilentFirst(Duration::from_secs(3)));
    server.script([ScriptedTurn::text("alive").with_fault(pings), silent(), silent(), silent()]);
    assert_eq!(complete(provider.as_ref(), &req).await.0.unwrap().text, "alive");
    let err = complete(provider.as_ref(), &req).await.0.unwrap_err().to_string();
    assert!(err.contains("no byte for 1.0s") && err.ends_with("timed out after 1.0s"), "{err}");
}

#[test]
fn stream_idle_timeout_secs_must_be_positive() {
    let text = "[providers.deepseek]\nstream_idle_timeout_secs = 0\n";
    let layer = ConfigLayer { trust: Trust::User, path: "user.toml", text };
    let err = AgentConfig::load(&[layer], &CliOverrides::default()).unwrap_err().to_string();
    assert!(err.contains("providers.deepseek.stream_idle_timeout_secs"), "{err}");
}
