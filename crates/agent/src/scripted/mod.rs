//! A scripted, faithful model server for tests (feature `scripted`).
//!
//! It speaks every wire on 127.0.0.1 (`/chat/completions`,
//! `/v1/chat/completions`, `/beta/completions` for FIM, `/v1/messages`,
//! `/responses` and `/v1/responses`) with
//! the framing real providers use: several SSE events per network write,
//! tool-call arguments split mid-JSON, `[DONE]` / `message_stop`. Each request
//! takes the next scripted turn; faults (error statuses with `Retry-After`,
//! cut streams, garbage lines, stalls) are turns too. Every request body is
//! recorded byte for byte, and unless a turn fixes its usage, cache-hit tokens
//! are what the wire's documented prefix cache would serve (`prefix_cache`:
//! Anthropic's breakpoints and lookback, OpenAI's 128-token blocks; the
//! prefix shared with the previous request on Chat Completions).
//!
//! [`Quirk`]s switch on behaviours of real servers the project does not write
//! (llama-cpp-python, LiteLLM, legacy function calling), server-wide: see
//! `quirks.rs`. A request a quirk refuses (or answers with nothing) does not
//! take a turn from the script, as a real server's model never saw it.

mod anthropic;
mod messages_rules;
mod openai;
mod prefix_cache;
mod quirks;
mod responses;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::message::{ToolCall, Usage};

pub use quirks::Quirk;
use quirks::Quirks;

/// What goes wrong instead of (or in the middle of) a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Answer with this status (and `Retry-After`, if given) and a JSON error body.
    Status { status: u16, retry_after: Option<String>, message: String },
    /// Stream half of the first tool call's arguments, then end the body.
    CutMidToolCall,
    /// A `data:` line that is not JSON, after the first chunk.
    GarbageLine,
    /// Go silent for this long after the first chunk.
    StallAfterFirstChunk(Duration),
    /// Before the answer, `count` SSE comments (`: ping`), one every `every`:
    /// what llama-cpp-python sends every 15 s while the model works.
    PingsFirst { every: Duration, count: u32 },
    /// Headers sent, then no byte at all for this long before the answer.
    SilentFirst(Duration),
}

/// One scripted model answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptedTurn {
    pub text: String,
    pub reasoning: Option<String>,
    /// Anthropic thinking signature (a made-up one is used when absent).
    pub signature: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// The wire's finish/stop reason; derived from the content when `None`.
    pub finish_reason: Option<String>,
    /// Fixed usage; computed from the prompt prefix when `None`.
    pub usage: Option<Usage>,
    pub fault: Option<Fault>,
    /// Wait this long before answering at all.
    pub delay: Option<Duration>,
    /// Serve these bytes verbatim instead (a provider's published example):
    /// as `text/event-stream` for a streaming request, JSON otherwise.
    pub raw_body: Option<String>,
}

impl ScriptedTurn {
    pub fn text(text: impl Into<String>) -> Self {
        ScriptedTurn { text: text.into(), ..Default::default() }
    }

    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Self {
        ScriptedTurn::default().and_call(id, name, arguments)
    }

    pub fn raw(body: impl Into<String>) -> Self {
        ScriptedTurn { raw_body: Some(body.into()), ..Default::default() }
    }

    pub fn status(status: u16, retry_after: Option<&str>) -> Self {
        ScriptedTurn {
            fault: Some(Fault::Status {
                status,
                retry_after: retry_after.map(str::to_string),
                message: format!("scripted status {status}"),
            }),
            ..Default::default()
        }
    }

    pub fn and_call(mut self, id: &str, name: &str, arguments: &str) -> Self {
        self.tool_calls.push(ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() });
        self
    }

    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    pub fn with_finish(mut self, reason: &str) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }
}

/// One request as received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub path: String,
    /// The exact bytes sent.
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
    /// The bytes the provider's prefix cache keys on (the wire's documented
    /// order; deferred tools left out), and how many of them the previous
    /// request's prompt already held: what a prefix cache would serve.
    /// Both 0 for a request refused before it reached the model.
    pub prompt_bytes: usize,
    pub cached_bytes: usize,
    /// How many bytes of the prompt the previous request's prompt began
    /// with: what a cache holding the whole previous prompt would serve.
    /// `cached_bytes` is less where the wire's documented cache serves less
    /// (Anthropic's breakpoints, OpenAI's 128-token blocks).
    pub shared_bytes: usize,
    /// Whether this prompt holds all of the previous one (up to the bracket
    /// that closed its message list), so a cache of the previous request
    /// serves it whole: `false` is a broken cached prefix. `None` for the
    /// first request and for refused ones.
    pub extends_previous: Option<bool>,
}

impl RecordedRequest {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Inner {
    script: VecDeque<ScriptedTurn>,
    /// Scripts for conversations whose first user message holds a marker
    /// (concurrent sub-agents each get their own, whatever the arrival order).
    routed: Vec<(String, VecDeque<ScriptedTurn>)>,
    requests: Vec<RecordedRequest>,
    /// The previous request's prompt linearization (for cache hits).
    last_prompt: Option<String>,
    quirks: Quirks,
    /// What `GET /models` (and `/v1/models`) lists.
    models: Vec<String>,
    /// Responses: each `tool_search_output`'s tools as first sent, by call id.
    search_outputs: BTreeMap<String, String>,
    /// What Messages breakpoints have written.
    breakpoints: prefix_cache::BreakpointCache,
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Inner>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panicking test thread must not hide the recorded requests.
        self.0.lock()
    }
}

/// The server; it stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedServer {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    pub async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Shared::default();
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(ScriptedServer { addr, shared, task })
    }

    /// The base URL to configure a provider with (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn push(&self, turn: ScriptedTurn) {
        self.shared.lock().script.push_back(turn);
    }

    pub fn script(&self, turns: impl IntoIterator<Item = ScriptedTurn>) {
        self.shared.lock().script.extend(turns);
    }

    /// Queues a turn for requests with a user message containing `marker`
    /// (a sub-agent's task); other requests take the main script. On the
    /// Anthropic wire tool results are user messages too: pick markers no
    /// tool result repeats.
    pub fn push_routed(&self, marker: &str, turn: ScriptedTurn) {
        let mut inner = self.shared.lock();
        match inner.routed.iter_mut().find(|(m, _)| m == marker) {
            Some((_, turns)) => turns.push_back(turn),
            None => inner.routed.push((marker.to_string(), VecDeque::from([turn]))),
        }
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Turns not consumed yet.
    pub fn remaining(&self) -> usize {
        self.shared.lock().script.len()
    }

    /// Behaves like a real server in one more way from now on.
    pub fn quirk(&self, quirk: Quirk) {
        self.shared.lock().quirks.insert(quirk);
    }

    /// The model ids `GET /models` and `GET /v1/models` list (none by default).
    /// Those requests take no turn and are not recorded.
    pub fn list_models(&self, ids: &[&str]) {
        self.shared.lock().models = ids.iter().map(|s| s.to_string()).collect();
    }

    /// Back to the well-behaved server.
    pub fn clear_quirks(&self) {
        self.shared.lock().quirks = Quirks::default();
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Route {
    Chat,
    Messages,
    Responses,
    Fim,
}

async fn handle(State(shared): State<Shared>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path().to_string();
    if path == "/models" || path == "/v1/models" {
        let ids = shared.lock().models.clone();
        let data: Vec<Value> = ids.iter().map(|id| serde_json::json!({"id": id, "object": "model"})).collect();
        return json_response(serde_json::json!({"object": "list", "data": data}));
    }
    let route = match path.as_str() {
        "/chat/completions" | "/v1/chat/completions" => Route::Chat,
        "/v1/messages" => Route::Messages,
        "/beta/completions" => Route::Fim,
        "/responses" | "/v1/responses" => Route::Responses,
        _ => return error_response(StatusCode::NOT_FOUND, &format!("no route {path}"), None),
    };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (turn, usage, quirks) = {
        let mut inner = shared.lock();
        inner.requests.push(RecordedRequest {
            path,
            body: body.to_vec(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
            prompt_bytes: 0,
            cached_bytes: 0,
            shared_bytes: 0,
            extends_previous: None,
        });
        if let Some(refusal) = inner.quirks.refusal(route == Route::Chat, &request) {
            return refusal;
        }
        if route == Route::Responses
            && let Err((message, param)) = responses::validate(&request, &mut inner.search_outputs)
        {
            let body = serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": null}});
            return (StatusCode::BAD_REQUEST, [("content-type", "application/json")], body.to_string()).into_response();
        }
        if route == Route::Messages
            && let Some(refusal) = messages_rules::refusal(&request)
        {
            return refusal;
        }
        let users = user_messages(&request);
        let routed = inner
            .routed
            .iter_mut()
            .find(|(marker, _)| users.contains(marker.as_str()))
            .map(|(_, turns)| turns.pop_front());
        let next = match routed {
            Some(turn) => turn,
            None => inner.script.pop_front(),
        };
        let Some(turn) = next else {
            // Not retryable on purpose: a test that runs out of script fails fast.
            return error_response(StatusCode::IM_A_TEAPOT, "scripted server: no turn left in the script", None);
        };
        let keyed = (route == Route::Messages)
            .then(|| prefix_cache::Keyed::of_messages(&inner.quirks.prompt_request(&request)));
        let prompt = match &keyed {
            Some(keyed) => keyed.text.clone(),
            None => prompt_of(route, &request),
        };
        let shared = inner.last_prompt.as_deref().map(|last| common_prefix(last, &prompt)).unwrap_or(0);
        // What the wire's documented cache serves of what an ideal one would.
        let (cached, written) = match (route, &keyed) {
            (Route::Messages, Some(keyed)) => {
                let model = request.get("model").and_then(Value::as_str).unwrap_or_default();
                let served = inner.breakpoints.serve(keyed, model);
                (served.read, served.written)
            }
            (Route::Responses, _) => (prefix_cache::openai_served(shared), 0),
            _ => (shared, 0),
        };
        let extends =
            inner.last_prompt.as_deref().map(|last| prompt.starts_with(last.strip_suffix(']').unwrap_or(last)));
        if let Some(recorded) = inner.requests.last_mut() {
            (recorded.prompt_bytes, recorded.cached_bytes, recorded.extends_previous) = (prompt.len(), cached, extends);
            recorded.shared_bytes = shared;
        }
        let usage = turn.usage.unwrap_or_else(|| computed_usage(prompt.len(), cached, written, &turn));
        // A FIM request is a separate prompt; a provider's prefix cache keeps
        // the conversation's prefix across it.
        if route != Route::Fim {
            inner.last_prompt = Some(prompt);
        }
        (turn, usage, inner.quirks.clone())
    };
    let mut turn = turn;
    if route == Route::Chat {
        openai::through_dispatcher(&mut turn.tool_calls, &request);
    }
    if let Some(delay) = turn.delay {
        tokio::time::sleep(delay).await;
    }
    if let Some(Fault::Status { status, retry_after, message }) = &turn.fault {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return error_response(status, message, retry_after.as_deref());
    }
    let stream = request.get("stream").and_then(Value::as_bool).unwrap_or(false);
    if let Some(raw) = turn.raw_body {
        let kind = if stream { "text/event-stream" } else { "application/json" };
        return ([("content-type", kind)], raw).into_response();
    }
    let model = request.get("model").and_then(Value::as_str).unwrap_or("scripted").to_string();
    let usage = (!quirks.has(Quirk::NoUsage)).then_some(&usage);
    let answer = quirks::Answer { turn: &turn, usage, model: &model, quirks: &quirks };
    match (route, stream) {
        (Route::Fim, _) => json_response(openai::fim_body(&answer)),
        (Route::Chat, false) => json_response(openai::completion_body(&answer)),
        (Route::Chat, true) => sse_response(openai::stream_pieces(&answer)),
        (Route::Messages, false) => json_response(anthropic::message_body(&answer)),
        (Route::Messages, true) => sse_response(anthropic::stream_pieces(&answer)),
        (Route::Responses, false) => json_response(responses::response_body(&answer, &request)),
        (Route::Responses, true) => sse_response(responses::stream_pieces(&answer, &request)),
    }
}

/// A request's user messages (any wire), as canonical JSON.
fn user_messages(request: &Value) -> String {
    let messages = request.get("messages").or_else(|| request.get("input"));
    let messages = messages.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let users = messages.iter().filter(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    users.map(quiver_engine::canonical::to_string).collect()
}

/// What a provider's prefix cache keys on: the tools (rendered before the
/// conversation in the model's prompt), the system prompt, then the messages;
/// on the Messages API block by block, without the deferred tools (see
/// `prefix_cache`).
fn prompt_of(route: Route, request: &Value) -> String {
    let c = |key: &str| request.get(key).map(quiver_engine::canonical::to_string).unwrap_or_default();
    match route {
        Route::Chat => format!("{}{}", c("tools"), c("messages")),
        Route::Messages => prefix_cache::Keyed::of_messages(request).text,
        // Loaded tools arrive in `input` (`tool_search_output`): the API
        // injects them at the end of the context, after what is cached.
        Route::Responses => format!("{}{}{}", c("tools"), c("instructions"), c("input")),
        Route::Fim => format!("{}{}", c("prompt"), c("suffix")),
    }
}

/// About four bytes per token, like English text in common tokenizers.
fn tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// Usage as the provider would report it: `cached` bytes read from the
/// cache, and on the Messages API the bytes past them that a breakpoint wrote.
fn computed_usage(prompt: usize, cached: usize, written: usize, turn: &ScriptedTurn) -> Usage {
    let input = tokens(prompt);
    let hit = (cached / 4) as u64;
    let produced = turn.text.len()
        + turn.reasoning.as_ref().map_or(0, String::len)
        + turn.tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>();
    Usage {
        input_tokens: input,
        output_tokens: tokens(produced),
        cache_hit_tokens: hit,
        cache_miss_tokens: input - hit.min(input),
        cache_write_tokens: (written.saturating_sub(cached) / 4) as u64,
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn json_response(value: Value) -> Response {
    ([("content-type", "application/json")], quiver_engine::canonical::to_string(&value)).into_response()
}

fn error_response(status: StatusCode, message: &str, retry_after: Option<&str>) -> Response {
    let body = serde_json::json!({"error": {"message": message, "type": "scripted_error"}}).to_string();
    let mut response = (status, [("content-type", "application/json")], body).into_response();
    if let Some(value) = retry_after.and_then(|v| v.parse().ok()) {
        response.headers_mut().insert("retry-after", value);
    }
    response
}

/// A piece of a streamed body: bytes written in one go, or a pause.
#[derive(Debug, Clone)]
pub(crate) enum Piece {
    Write(String),
    Pause(Duration),
}

fn sse_response(pieces: Vec<Piece>) -> Response {
    let stream = futures::stream::unfold(pieces.into_iter(), |mut rest| async move {
        loop {
            match rest.next()? {
                Piece::Pause(d) => tokio::time::sleep(d).await,
                Piece::Write(s) => return Some((Ok::<_, std::io::Error>(Bytes::from(s)), rest)),
            }
        }
    });
    ([("content-type", "text/event-stream"), ("cache-control", "no-cache")], Body::from_stream(stream)).into_response()
}

/// `s` in pieces of at most `n` chars (never splitting a char), the way
/// providers cut text and JSON at arbitrary points.
pub(crate) fn split(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

/// Groups SSE events into writes of up to three, so one network read holds
/// several events and a single event can straddle nothing but its own write.
pub(crate) fn frame(events: Vec<String>, fault: Option<&Fault>) -> Vec<Piece> {
    let mut pieces = Vec::new();
    match fault {
        Some(Fault::PingsFirst { every, count }) => {
            for _ in 0..*count {
                pieces.push(Piece::Pause(*every));
                pieces.push(Piece::Write(": ping\n\n".into()));
            }
        }
        Some(Fault::SilentFirst(d)) => pieces.push(Piece::Pause(*d)),
        _ => {}
    }
    for (i, group) in events.chunks(3).enumerate() {
        pieces.push(Piece::Write(group.concat()));
        if i == 0 {
            match fault {
                Some(Fault::GarbageLine) => pieces.push(Piece::Write("data: {this is not json\n\n".into())),
                Some(Fault::StallAfterFirstChunk(d)) => pieces.push(Piece::Pause(*d)),
                _ => {}
            }
        }
    }
    pieces
}
