//! A downstream server that asks its client something mid-call, through
//! `quiver mcp serve --transport http`, as each revision's client sees it: a
//! 2026-07-28 (stateless) client gets an `InputRequiredResult` for each
//! request and retries the call with its answers and the `requestState`; a
//! 2025-11-25 client gets the requests on the call's own stream. Both are
//! raw HTTP clients (reqwest) that never open the GET stream. A prompt and a
//! resource of the server that ask before they answer are asked the same way.

use std::sync::Arc;
use std::time::Duration;

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::config::Expose;
use quiver_mcp::server::input_required::InputLimits;
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};
use serde_json::{Value, json};

use crate::client_support::{full_host, manager, test_server};
use crate::gateway_call_stream::{CallStream, open_session, open_session_version, said};

const V: &str = "2026-07-28";

/// The gateway over streamable HTTP, fronting the test server as a direct
/// server, its stateless calls waiting for input within `limits`.
async fn gateway(dirs: &[tempfile::TempDir], limits: InputLimits) -> (Arc<Surface>, String) {
    gateway_env(dirs, limits, &[]).await
}

/// [`gateway`], the test server started with `env`.
async fn gateway_env(dirs: &[tempfile::TempDir], limits: InputLimits, env: &[(&str, &str)]) -> (Arc<Surface>, String) {
    let mut server = test_server("misbehaver", env);
    server.expose = Expose::Direct;
    let manager = manager(vec![server], dirs[0].path());
    let host = full_host(&manager);
    let audience = Audience { mode: Mode::Agent, ..Audience::default() };
    let workspace = Workspace::new(dirs[1].path()).unwrap();
    let surface = Arc::new(Surface::hosted(host, manager, workspace, audience).with_input_limits(limits));
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(&surface), options).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    (surface, url)
}

fn dirs() -> Vec<tempfile::TempDir> {
    (0..2).map(|_| tempfile::tempdir().unwrap()).collect()
}

/// A stateless client: its name and what it declares in each request.
pub(crate) struct Stateless {
    url: String,
    name: &'static str,
    pub capabilities: Value,
    /// More `_meta` for each request (a progress token, a log level).
    meta: Value,
}

impl Stateless {
    pub fn new(url: &str, name: &'static str) -> Self {
        let capabilities = json!({"elicitation": {}, "sampling": {}, "roots": {}});
        Stateless { url: url.to_string(), name, capabilities, meta: json!({}) }
    }

    /// One `tools/call` of `tool` (no arguments) with `extra` params (answers
    /// and state): the JSON-RPC message that came back.
    async fn call(&self, tool: &str, extra: Value) -> Value {
        self.call_streamed(tool, extra).await.pop().unwrap()
    }

    /// Every message the call's response carried, its answer last: plain
    /// JSON when that is all, else its SSE stream's messages in order.
    async fn call_streamed(&self, tool: &str, extra: Value) -> Vec<Value> {
        self.send("tools/call", json!({"name": tool, "arguments": {}}), extra).await
    }

    /// One request of `method` with `params` and `extra` params (answers
    /// and state), as [`Self::call_streamed`] reads it.
    async fn send(&self, method: &str, mut params: Value, extra: Value) -> Vec<Value> {
        let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
        // The standard headers name the tool or prompt, or the resource's URI.
        let name = params.get("name").or(params.get("uri")).and_then(Value::as_str).unwrap_or_default().to_string();
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientInfo": {"name": self.name, "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        });
        params["_meta"].as_object_mut().unwrap().extend(self.meta.as_object().cloned().unwrap_or_default());
        params.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let response = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V)
            .header("mcp-method", method)
            .header("mcp-name", name)
            .body(body.to_string())
            .send();
        let response =
            tokio::time::timeout(Duration::from_secs(30), response).await.expect("no answer in 30 s").unwrap();
        assert!(response.headers().get("mcp-session-id").is_none(), "a stateless call opened a session");
        let kind = response.headers()["content-type"].to_str().unwrap().to_string();
        let text = response.text().await.unwrap();
        if kind.starts_with("application/json") {
            return vec![serde_json::from_str(&text).unwrap()];
        }
        assert!(self.meta != json!({}), "{kind}: nothing was asked to come before the answer, so plain JSON: {text}");
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// The one input request of an `InputRequiredResult`: its key, method and params.
fn input_request(message: &Value) -> (String, String, Value) {
    let result = &message["result"];
    assert_eq!(result["resultType"], "input_required", "{message}");
    let requests = result["inputRequests"].as_object().unwrap_or_else(|| panic!("no inputRequests: {message}"));
    assert_eq!(requests.len(), 1, "{message}");
    let (key, request) = requests.iter().next().unwrap();
    (key.clone(), request["method"].as_str().unwrap().to_string(), request["params"].clone())
}

fn state(message: &Value) -> String {
    message["result"]["requestState"].as_str().unwrap_or_else(|| panic!("no requestState: {message}")).to_string()
}

/// Whether an elicitation is quiver's own approval question (a yes/no form).
fn is_approval(params: &Value) -> bool {
    params["requestedSchema"]["properties"].get("approve").is_some()
}

/// What the client answers each request `ask_client` sends (and quiver's
/// approval question, if agent mode asks one: yes).
pub(crate) fn answer_to(method: &str, params: &Value) -> Value {
    match method {
        "elicitation/create" if is_approval(params) => json!({"action": "accept", "content": {"approve": true}}),
        "roots/list" => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
        "sampling/createMessage" => json!({"role": "assistant", "model": "test",
            "content": {"type": "text", "text": "sampled upstream"}}),
        "elicitation/create" => json!({"action": "accept", "content": {"name": "ada"}}),
        other => panic!("unexpected input request {other}"),
    }
}

fn retry(key: &str, answer: Value, state: &str) -> Value {
    json!({"inputResponses": {key: answer}, "requestState": state})
}

/// Runs `ask_client` as `client`, answering each round with `answer`; the
/// methods asked in order, and the final message.
pub(crate) async fn ask_client_rounds(
    client: &Stateless,
    answer: impl Fn(&str, &Value) -> Value,
) -> (Vec<String>, Value) {
    rounds_of(client, "tools/call", json!({"name": "ask_client", "arguments": {}}), answer).await
}

/// [`ask_client_rounds`] for any request of `method` with `params`.
pub(crate) async fn rounds_of(
    client: &Stateless,
    method: &str,
    request: Value,
    answer: impl Fn(&str, &Value) -> Value,
) -> (Vec<String>, Value) {
    let send = |extra: Value| {
        let request = request.clone();
        async move { client.send(method, request, extra).await.pop().unwrap() }
    };
    let mut asked = Vec::new();
    let mut states = Vec::new();
    let mut message = send(json!({})).await;
    while message["result"]["resultType"] == "input_required" {
        let (key, method, params) = input_request(&message);
        let state = state(&message);
        assert!(!states.contains(&state), "a requestState came twice: {state}");
        states.push(state.clone());
        message = send(retry(&key, answer(&method, &params), &state)).await;
        if !is_approval(&params) {
            asked.push(method);
        }
        assert!(asked.len() < 10, "rounds without end: {asked:?}");
    }
    (asked, message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_answers_each_request_of_the_server_in_a_round() {
    let dirs = dirs();
    let (surface, url) = gateway(&dirs, InputLimits::default()).await;
    let client = Stateless::new(&url, "alice");
    let (asked, answer) = ask_client_rounds(&client, answer_to).await;
    assert_eq!(asked, ["roots/list", "sampling/createMessage", "elicitation/create"]);
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(
        said(&answer),
        json!({"roots": 1, "sampled": {"type": "text", "text": "sampled upstream"}, "elicited": {"name": "ada"}})
    );
    assert_eq!(surface.input_rounds().parked(), 0);
    surface.shutdown().await;
}

/// quiver's approval question, if it asked one, answered yes; else the call's
/// first input request.
async fn first_server_request(client: &Stateless) -> Value {
    let mut message = client.call("ask_client", json!({})).await;
    let (key, method, params) = input_request(&message);
    if is_approval(&params) {
        message = client.call("ask_client", retry(&key, answer_to(&method, &params), &state(&message))).await;
    }
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_is_refused_when_changed_or_anothers_and_once_used() {
    let dirs = dirs();
    let (surface, url) = gateway(&dirs, InputLimits::default()).await;
    let alice = Stateless::new(&url, "alice");
    let first = first_server_request(&alice).await;
    let (key, method, _) = input_request(&first);
    assert_eq!(method, "roots/list");
    let good = state(&first);

    let tampered =
        alice.call("ask_client", retry(&key, answer_to(&method, &Value::Null), &format!("{good}-TAMPERED"))).await;
    assert_eq!(tampered["error"]["code"], -32602, "{tampered}");
    assert!(tampered["error"]["message"].as_str().unwrap().contains("does not verify"), "{tampered}");
    let mallory = Stateless::new(&url, "mallory");
    let foreign = mallory.call("ask_client", retry(&key, answer_to(&method, &Value::Null), &good)).await;
    assert_eq!(foreign["error"]["code"], -32602, "another client resumed Alice's call: {foreign}");
    let other_tool = alice.call("fail", retry(&key, answer_to(&method, &Value::Null), &good)).await;
    assert_eq!(other_tool["error"]["code"], -32602, "another tool resumed the call: {other_tool}");

    // None of that touched the call: Alice resumes it.
    let next = alice.call("ask_client", retry(&key, answer_to(&method, &Value::Null), &good)).await;
    assert_eq!(input_request(&next).1, "sampling/createMessage", "{next}");
    let used = alice.call("ask_client", retry(&key, answer_to(&method, &Value::Null), &good)).await;
    assert!(used["error"]["message"].as_str().unwrap().contains("answered already"), "{used}");
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_elicitation_reaches_the_server_as_declined() {
    let dirs = dirs();
    let (surface, url) = gateway(&dirs, InputLimits::default()).await;
    let client = Stateless::new(&url, "alice");
    let declining = |method: &str, params: &Value| match method {
        "elicitation/create" if !is_approval(params) => json!({"action": "decline"}),
        other => answer_to(other, params),
    };
    let (asked, message) = ask_client_rounds(&client, declining).await;
    assert!(asked.ends_with(&["elicitation/create".to_string()]), "{asked:?}");
    assert_eq!(said(&message)["elicited"], Value::Null, "the server saw content: {message}");
    assert_eq!(said(&message)["roots"], 1, "{message}");
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_client_never_retries_is_abandoned_and_its_state_refused() {
    let dirs = dirs();
    let limits = InputLimits { wait: Duration::from_millis(500), max_parked: 4 };
    let (surface, url) = gateway(&dirs, limits).await;
    let alice = Stateless::new(&url, "alice");
    let first = first_server_request(&alice).await;
    let (key, method, _) = input_request(&first);
    assert_eq!(surface.input_rounds().parked(), 1);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(surface.input_rounds().parked(), 0, "the call still waits past its limit");
    let late = alice.call("ask_client", retry(&key, answer_to(&method, &Value::Null), &state(&first))).await;
    assert!(late["error"]["message"].as_str().unwrap().contains("waited longer than 500 ms"), "{late}");
    // The server's call was cancelled: a new call runs as if nothing happened.
    let (_, answer) = ask_client_rounds(&alice, answer_to).await;
    assert_eq!(said(&answer)["elicited"], json!({"name": "ada"}));
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_declares_nothing_is_asked_nothing() {
    let dirs = dirs();
    let (surface, url) = gateway(&dirs, InputLimits::default()).await;
    let mut client = Stateless::new(&url, "bare");
    client.capabilities = json!({});
    let answer = client.call("ask_client", json!({})).await;
    // No approver (no elicitation), and the server's roots/list refused: an error result, never a round.
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer.to_string();
    assert!(text.contains("approval") || text.contains("did not declare that capability"), "{text}");
    surface.shutdown().await;
}

/// One gateway, both revisions in turn: the 2025-11-25 client is asked on
/// the call's stream, the 2026-07-28 client in rounds; each gets its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_revision_is_asked_its_own_way_on_one_gateway() {
    let dirs = dirs();
    let (surface, url) = gateway(&dirs, InputLimits::default()).await;
    let session = open_session(&url, "session-client").await;
    let mut call = CallStream::start(&session, 3, "ask_client", "p").await;
    let answer = call.run(&session, 3, None).await;
    assert_eq!(said(&answer)["elicited"], json!({"name": "ada"}));
    assert!(call.seen.iter().any(|m| m == "elicitation/create"), "{:?}", call.seen);

    let (asked, answer) = ask_client_rounds(&Stateless::new(&url, "stateless-client"), answer_to).await;
    assert!(asked.ends_with(&["elicitation/create".to_string()]), "{asked:?}");
    assert_eq!(said(&answer)["elicited"], json!({"name": "ada"}));

    // And the session client again, after the stateless one.
    let mut call = CallStream::start(&session, 4, "ask_client", "q").await;
    assert_eq!(said(&call.run(&session, 4, None).await)["sampled"]["text"], "sampled upstream");
    surface.shutdown().await;
}

/// Progress and log messages of a call that waits for input go on the
/// request it is answering at the time: the first, then each retry, under
/// that request's progress token, at the log level its `_meta` asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_call_reports_on_the_retry_that_resumed_it() {
    let dirs = dirs();
    let (surface, url) = gateway(&dirs, InputLimits::default()).await;
    let mut client = Stateless::new(&url, "alice");
    client.meta = json!({"progressToken": "first", "io.modelcontextprotocol/logLevel": "info"});
    let mut streams = vec![client.call_streamed("ask_client", json!({})).await];
    let mut token = 0;
    while let Some(message) = streams.last().unwrap().last().filter(|m| m["result"]["resultType"] == "input_required") {
        let (key, method, params) = input_request(message);
        let state = state(message);
        token += 1;
        client.meta["progressToken"] = json!(format!("retry-{token}"));
        streams.push(client.call_streamed("ask_client", retry(&key, answer_to(&method, &params), &state)).await);
    }
    let shown: Vec<Vec<String>> = streams
        .iter()
        .map(|stream| {
            stream
                .iter()
                .map(|m| match m["method"].as_str() {
                    Some("notifications/message") => format!("log:{}", m["params"]["data"].as_str().unwrap()),
                    Some("notifications/progress") => {
                        format!(
                            "progress:{}:{}",
                            m["params"]["progressToken"].as_str().unwrap(),
                            m["params"]["progress"]
                        )
                    }
                    _ => m["result"]["resultType"].as_str().unwrap_or("?").to_string(),
                })
                .collect()
        })
        .collect();
    let last = format!("retry-{token}");
    assert_eq!(shown.first().unwrap(), &["log:asking the client", "progress:first:1.0", "input_required"], "{shown:?}");
    assert_eq!(
        shown.last().unwrap(),
        &[format!("progress:{last}:2.0"), "log:the client answered".into(), "complete".into()],
        "{shown:?}"
    );
    surface.shutdown().await;
}

/// The test server's prompt and resource that ask the client's name first.
pub(crate) const ASKING: [(&str, &str); 1] = [("QUIVER_TEST_MCP_ASKING", "1")];

pub(crate) fn greeting() -> Value {
    json!({"name": "greeting", "arguments": {}})
}

pub(crate) fn profile() -> Value {
    json!({"uri": "test://profile"})
}

/// What a prompt or a read answered: the prompt's text, the resource's text and URI.
pub(crate) fn prompt_text(message: &Value) -> &str {
    message["result"]["messages"][0]["content"]["text"].as_str().unwrap_or_else(|| panic!("no prompt: {message}"))
}

pub(crate) fn resource(message: &Value) -> (&str, &str) {
    let contents = &message["result"]["contents"][0];
    let text = contents["text"].as_str().unwrap_or_else(|| panic!("no resource: {message}"));
    (text, contents["uri"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_prompt_or_read_asks_in_rounds_like_a_call() {
    let dirs = dirs();
    let (surface, url) = gateway_env(&dirs, InputLimits::default(), &ASKING).await;
    let client = Stateless::new(&url, "alice");
    let (asked, message) = rounds_of(&client, "prompts/get", greeting(), answer_to).await;
    assert_eq!(asked, ["elicitation/create"], "{message}");
    assert_eq!(message["result"]["resultType"], "complete", "{message}");
    assert_eq!(prompt_text(&message), "Greet ada.");

    let (asked, message) = rounds_of(&client, "resources/read", profile(), answer_to).await;
    assert_eq!(asked, ["elicitation/create"], "{message}");
    assert_eq!(message["result"]["resultType"], "complete", "{message}");
    assert_eq!(resource(&message), ("name: ada", "test://profile"));

    // A declined question reaches the server as declined.
    let declining = |method: &str, params: &Value| match method {
        "elicitation/create" if !is_approval(params) => json!({"action": "decline"}),
        other => answer_to(other, params),
    };
    let (_, message) = rounds_of(&client, "resources/read", profile(), declining).await;
    assert_eq!(resource(&message).0, "name: (declined)");
    assert_eq!(surface.input_rounds().parked(), 0);

    // A prompt's state resumes that prompt only: not a read, nor a call.
    let first = client.send("prompts/get", greeting(), json!({})).await.pop().unwrap();
    let (key, method, params) = input_request(&first);
    let retry = retry(&key, answer_to(&method, &params), &state(&first));
    for (method, request) in [("resources/read", profile()), ("tools/call", json!({"name": "greeting"}))] {
        let refused = client.send(method, request, retry.clone()).await.pop().unwrap();
        assert_eq!(refused["error"]["code"], -32602, "{method} resumed a prompt: {refused}");
    }
    let message = client.send("prompts/get", greeting(), retry).await.pop().unwrap();
    assert_eq!(prompt_text(&message), "Greet ada.");
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_client_is_asked_on_its_prompts_and_reads_own_stream() {
    let dirs = dirs();
    let (surface, url) = gateway_env(&dirs, InputLimits::default(), &ASKING).await;
    let session = open_session_version(&url, "session-client", "debug", "2025-11-25").await;
    let mut prompt = CallStream::request(&session, 3, "prompts/get", greeting()).await;
    let answer = prompt.run(&session, 3, None).await;
    assert_eq!(prompt.seen, ["elicitation/create", "answer:3"], "{answer}");
    assert_eq!(prompt_text(&answer), "Greet ada.");

    let mut read = CallStream::request(&session, 4, "resources/read", profile()).await;
    let answer = read.run(&session, 4, None).await;
    assert_eq!(read.seen, ["elicitation/create", "answer:4"], "{answer}");
    assert_eq!(resource(&answer), ("name: ada", "test://profile"));
    surface.shutdown().await;
}
