//! Shared helpers: providers pointed at a scripted server, with retry delays
//! short enough for tests.

use std::time::Duration;

use quiver_agent::anthropic::AnthropicProvider;
use quiver_agent::openai::{OpenAiDialect, OpenAiProvider};
use quiver_agent::scripted::ScriptedServer;
use quiver_agent::{
    ApiKey, HttpOptions, Message, ModelRequest, ModelResponse, Provider, ProviderError, RetryPolicy, StreamEvent,
};
use serde_json::{Value, json};

pub fn fast_options() -> HttpOptions {
    HttpOptions {
        request_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_total: Duration::from_secs(10),
        },
    }
}

pub fn deepseek(server: &ScriptedServer) -> OpenAiProvider {
    deepseek_with(server, fast_options())
}

pub fn deepseek_with(server: &ScriptedServer, options: HttpOptions) -> OpenAiProvider {
    let dialect = OpenAiDialect {
        max_completion_tokens: false,
        fim_path: Some("/beta/completions".into()),
        fim_model: Some("deepseek-chat".into()),
        vision: None,
        tool_choice: None,
    };
    OpenAiProvider::new("deepseek", &server.base_url(), ApiKey::new("sk-test"), dialect, options).unwrap()
}

pub fn anthropic(server: &ScriptedServer) -> AnthropicProvider {
    AnthropicProvider::new("anthropic", &server.base_url(), ApiKey::new("sk-ant-test"), fast_options()).unwrap()
}

/// Two tools in the OpenAI format; `head_len` 1 makes the first the head.
pub fn openai_tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
        {"type": "function", "function": {"name": "grep_files", "description": "Search files.",
            "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}}},
    ])
}

pub fn anthropic_tools() -> Value {
    json!([
        {"name": "read_file", "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "tool_search", "description": "Find tools.",
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}},
        {"name": "git_diff", "description": "Show a diff.",
            "input_schema": {"type": "object", "properties": {}}},
    ])
}

pub fn request(model: &str, tools: Value, head_len: usize, messages: Vec<Message>, stream: bool) -> ModelRequest {
    ModelRequest {
        system: "You are a coding agent.".into(),
        messages,
        tools,
        head_len,
        stream,
        ..ModelRequest::new(model)
    }
}

/// Runs one call, collecting what went through the sink.
pub async fn complete(
    provider: &dyn Provider,
    req: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let result = provider.complete(req, &mut sink).await;
    (result, events)
}

/// Each request's `messages` extend the previous request's, byte for byte
/// (canonical JSON; the closing bracket of the shorter list aside).
pub fn assert_messages_only_grow(requests: &[Value]) {
    for pair in requests.windows(2) {
        let (a, b) = (
            quiver_engine::canonical::to_string(&pair[0]["messages"]),
            quiver_engine::canonical::to_string(&pair[1]["messages"]),
        );
        assert!(b.starts_with(&a[..a.len() - 1]), "not a prefix:\n{a}\n{b}");
    }
}
