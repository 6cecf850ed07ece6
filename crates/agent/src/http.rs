//! The HTTP part both wires share: one POST with retries (429, 408, overload,
//! 5xx that are not about this body, connection failures; exponential backoff
//! with jitter; `Retry-After` honoured; bounded in attempts and total time),
//! timeouts, error bodies read for what they say (see [`crate::rejection`]),
//! an SSE reader with an idle timeout on bytes (SSE comments keep a stream
//! alive; silence before any output is retried), and the model call itself:
//! streamed or not, falling back to not streaming for the rest of the session
//! when a server cannot stream with tools, and sending a refused body again
//! only after the wire changed it.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant, SystemTime};

use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use reqwest::{Client, Response};

use crate::message::{ModelResponse, StreamEvent};
use crate::provider::{ProviderError, Sink};
use crate::rejection::ErrorBody;

/// When to give up and how long to wait between tries.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total tries, the first included.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// No retry starts once this much time has passed since the first try.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_total: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// Exponential backoff with "equal jitter": half fixed, half random, so a
    /// herd of clients that failed together does not retry together.
    fn backoff(&self, attempt: u32) -> Duration {
        let exp = self.base_delay.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        let half = capped / 2;
        half + half.mul_f64(fastrand::f64())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// Until response headers arrive (streaming) or the whole body (non-streaming).
    pub request_timeout: Duration,
    /// Longest silence (no byte; an SSE comment is bytes) allowed in a stream;
    /// `[providers.NAME] stream_idle_timeout_secs` sets it per provider.
    pub idle_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            request_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }
}

/// A client bound to one provider name (for error messages) and its options.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: Client,
    pub provider: String,
    pub options: HttpOptions,
    streaming: Arc<Streaming>,
}

/// What this provider was found (or told) not to do, for the rest of the session.
#[derive(Debug, Default)]
struct Streaming {
    /// `[providers.NAME] stream = false`.
    forced_off: AtomicBool,
    /// The server cannot stream a request that has tools.
    off_with_tools: AtomicBool,
    /// The server cannot stream at all.
    off: AtomicBool,
}

impl Streaming {
    fn allowed(&self, tools: bool) -> bool {
        let off = |flag: &AtomicBool| flag.load(Ordering::Relaxed);
        !(off(&self.forced_off) || off(&self.off) || (tools && off(&self.off_with_tools)))
    }
}

/// A refused POST: the error to report and, when the server answered, what it said.
pub(crate) struct Refusal {
    pub error: ProviderError,
    pub said: Option<ErrorBody>,
}

/// One model call as a wire describes it to [`Transport::complete`].
pub(crate) struct ModelCall<'a> {
    pub url: &'a str,
    pub headers: &'a HeaderMap,
    /// Whether the caller asked for a stream.
    pub stream: bool,
    /// Whether the request carries tools (some servers stream only without).
    pub tools: bool,
    /// The body, streamed or not; asked again after a repair.
    pub body: &'a (dyn Fn(bool) -> String + Sync),
    pub parse: fn(&serde_json::Value) -> Result<ModelResponse, String>,
    /// Told what a server refused as invalid; says what it changed so that
    /// the body renders differently, or `None` when it has nothing to change.
    pub repair: &'a (dyn Fn(&ErrorBody) -> Option<String> + Sync),
}

impl Transport {
    pub fn new(provider: &str, base_url: &str, options: HttpOptions) -> Result<Self, ProviderError> {
        let client = client_builder(base_url)
            .build()
            .map_err(|e| ProviderError::Transport { provider: provider.to_string(), detail: error_chain(&e) })?;
        Ok(Transport { client, provider: provider.to_string(), options, streaming: Arc::default() })
    }

    /// Never stream (`[providers.NAME] stream = false`).
    pub fn force_no_streaming(&self) {
        self.streaming.forced_off.store(true, Ordering::Relaxed);
    }

    /// What a `quiver providers check` found this server cannot do: start the
    /// session not streaming (at all, or with tools).
    pub fn learned_no_streaming(&self, with_tools_only: bool) {
        let flag = if with_tools_only { &self.streaming.off_with_tools } else { &self.streaming.off };
        flag.store(true, Ordering::Relaxed);
    }

    /// POSTs `body` until a success status, a non-retryable status, or the retry
    /// budget runs out. Retries are reported to `sink`.
    pub async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &str,
        sink: Sink<'_>,
    ) -> Result<Response, ProviderError> {
        self.send(url, headers, body, sink).await.map_err(|r| r.error)
    }

    /// [`post`](Self::post), keeping what a refusing server said.
    async fn send(&self, url: &str, headers: &HeaderMap, body: &str, sink: Sink<'_>) -> Result<Response, Refusal> {
        let policy = &self.options.retry;
        let started = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let sent = self.client.post(url).headers(headers.clone()).body(body.to_string()).send();
            let (reason, retry_after) = match tokio::time::timeout(self.options.request_timeout, sent).await {
                Err(_) => (format!("no response within {:.1?}", self.options.request_timeout), None),
                Ok(Err(e)) if e.is_builder() => {
                    let error = ProviderError::Transport { provider: self.provider.clone(), detail: error_chain(&e) };
                    return Err(Refusal { error, said: None });
                }
                Ok(Err(e)) => (format!("connection failed: {}", error_chain(&e)), None),
                Ok(Ok(resp)) if resp.status().is_success() => return Ok(resp),
                Ok(Ok(resp)) => {
                    let status = resp.status().as_u16();
                    let retry_after = retry_after(resp.headers());
                    let said = ErrorBody::parse(&resp.text().await.unwrap_or_default());
                    if !said.retryable(status) {
                        let provider = self.provider.clone();
                        let message = said.message.clone();
                        let error = if said.invalid_body {
                            ProviderError::Rejected { provider, status, field: said.field.clone(), message }
                        } else {
                            ProviderError::Status { provider, status, message }
                        };
                        tracing::warn!(provider = %self.provider, status, error = %error, "model request refused");
                        return Err(Refusal { error, said: Some(said) });
                    }
                    (format!("HTTP {status}: {}", said.message), retry_after)
                }
            };
            let wait = retry_after.unwrap_or_else(|| policy.backoff(attempt));
            let elapsed = started.elapsed();
            if attempt >= policy.max_attempts || elapsed + wait > policy.max_total {
                tracing::warn!(provider = %self.provider, attempts = attempt, %reason, "model request failed");
                let error = ProviderError::RetriesExhausted {
                    provider: self.provider.clone(),
                    attempts: attempt,
                    elapsed,
                    last: reason,
                };
                return Err(Refusal { error, said: None });
            }
            tracing::info!(provider = %self.provider, attempt, ?wait, %reason, "retrying model request");
            sink(StreamEvent::Retrying { attempt, wait, reason });
            tokio::time::sleep(wait).await;
        }
    }

    /// Reads a whole (non-streamed) body within the request timeout.
    pub async fn read_body(&self, resp: Response) -> Result<String, ProviderError> {
        match tokio::time::timeout(self.options.request_timeout, resp.text()).await {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(e)) => Err(ProviderError::Stream {
                provider: self.provider.clone(),
                detail: format!("reading the body failed: {}", error_chain(&e)),
            }),
            Err(_) => Err(self.timeout("reading the response body", self.options.request_timeout)),
        }
    }

    /// Reads a whole body and parses it as JSON; `what` names it in the error.
    pub async fn read_json(&self, resp: Response, what: &str) -> Result<serde_json::Value, ProviderError> {
        let text = self.read_body(resp).await?;
        serde_json::from_str(&text).map_err(|e| self.decode_error(format!("the {what} is not JSON ({e})")))
    }

    /// One model call on either wire: POST the body, then either parse the
    /// whole JSON answer (replayed through `sink`, so a UI has one path) or
    /// assemble the SSE stream with `A`.
    ///
    /// A server that cannot stream with tools (it said so, or it answered 200
    /// with an empty stream) gets the request again without streaming, and no
    /// stream for the rest of the session. A body refused as invalid is sent
    /// again only when `repair` changed how it renders. Either way every call
    /// comes back with its own id.
    pub async fn complete<A: StreamAssembler>(
        &self,
        call: ModelCall<'_>,
        sink: Sink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let mut stream = call.stream && self.streaming.allowed(call.tools);
        // Streams the server broke off with an error it says is temporary.
        let (mut broken, started) = (0u32, Instant::now());
        // Each round changes something (streaming off, a repair) or retries a
        // broken stream (as many times as the retry policy allows): bounded.
        'rounds: for _ in 0..6 + self.options.retry.max_attempts {
            let body = (call.body)(stream);
            let resp = match self.send(call.url, call.headers, &body, sink).await {
                Ok(resp) => resp,
                Err(Refusal { error, said: Some(said) }) => {
                    if stream && said.no_streaming {
                        self.stop_streaming(call.tools, &format!("the server cannot stream: {}", said.message), sink);
                        stream = false;
                        continue;
                    }
                    if said.invalid_body
                        && let Some(change) = (call.repair)(&said)
                        && (call.body)(stream) != body
                    {
                        let reason = format!("{error}; sending it again with {change}");
                        tracing::warn!(provider = %self.provider, %reason, "repairing a refused request");
                        sink(StreamEvent::Retrying { attempt: 1, wait: Duration::ZERO, reason });
                        continue;
                    }
                    return Err(error);
                }
                Err(Refusal { error, .. }) => return Err(error),
            };
            let json_answer = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim_start().starts_with("application/json"));
            let mut response = if !stream || json_answer {
                // A server may answer a streaming request with one JSON object.
                let value = self.read_json(resp, "body").await?;
                let response = (call.parse)(&value).map_err(|d| self.decode_error(d))?;
                replay_as_events(&response, sink);
                response
            } else {
                let mut sse = self.sse(resp);
                let mut assembler = A::default();
                let mut data = 0usize;
                // Whether anything reached the caller: asking again then would repeat it.
                let mut output = false;
                loop {
                    let event = match sse.next().await {
                        Ok(Some(event)) => event,
                        Ok(None) => break,
                        Err(SseError::Idle) => {
                            // Silent before any output: a hung server or a dead
                            // connection, retried like a timeout before the
                            // headers. The silence itself may stretch the
                            // policy's total time to two idle timeouts, so that
                            // at least one retry fits with the defaults.
                            let budget = self.options.retry.max_total.max(2 * self.options.idle_timeout);
                            let (detail, this_try) = (sse.idle_detail(None), broken + 1);
                            if !output && self.retry_broken(&mut broken, started, budget, &detail, sink).await {
                                continue 'rounds;
                            }
                            let tries = (this_try > 1).then_some((this_try, self.options.retry.max_attempts));
                            return Err(self.timeout(&sse.idle_detail(tries), self.options.idle_timeout));
                        }
                        Err(SseError::Broken(detail)) => return Err(self.stream_error(detail)),
                    };
                    data += usize::from(!event.data.trim().is_empty());
                    let mut tee = |e: StreamEvent| {
                        output = true;
                        sink(e)
                    };
                    match assembler.push(&event.data, &mut tee) {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(d) => {
                            // An overload (or server error) after the 200 is what a
                            // 529 (or 500) is before it: the request is sent again.
                            let budget = self.options.retry.max_total;
                            if assembler.transient() && self.retry_broken(&mut broken, started, budget, &d, sink).await
                            {
                                continue 'rounds;
                            }
                            return Err(self.stream_error(d));
                        }
                    }
                }
                if data == 0 {
                    self.stop_streaming(call.tools, "the server answered 200 with an empty stream", sink);
                    stream = false;
                    continue;
                }
                let response = match assembler.finish() {
                    Ok(response) => response,
                    // The server closed the stream properly ([DONE]) without
                    // saying how the answer ended (llama-cpp-python does so
                    // on a forced tool call under load): what it sent cannot
                    // be trusted whole, so the request is asked again without
                    // streaming. A stream cut short is still an error.
                    Err(d) if d.starts_with("[DONE] arrived") => {
                        self.stop_streaming(call.tools, "the stream ended without a finish_reason", sink);
                        stream = false;
                        continue;
                    }
                    Err(d) => return Err(self.stream_error(d)),
                };
                // A well-formed stream that says nothing at all and made no
                // tokens: LiteLLM's Anthropic adapter turns an upstream error
                // into one. Asked without streaming, the server tells what
                // went wrong (a content filter's empty answer is kept).
                let silent = response.text.is_empty() && response.reasoning.is_none() && response.tool_calls.is_empty();
                let nothing_made = !response.usage_reported || response.usage.output_tokens == 0;
                if silent && nothing_made && response.finish_reason == crate::message::FinishReason::Stop {
                    self.stop_streaming(call.tools, "the stream carried no content at all", sink);
                    stream = false;
                    continue;
                }
                response
            };
            crate::calls::make_ids_unique(&mut response.tool_calls);
            return Ok(response);
        }
        Err(self.stream_error("the request was refused after every change quiver could make"))
    }

    /// After a stream broke off with a temporary error: waits and says so when
    /// the retry policy allows one more try (`broken` counts them) within
    /// `budget` of the first.
    async fn retry_broken(
        &self,
        broken: &mut u32,
        started: Instant,
        budget: Duration,
        detail: &str,
        sink: Sink<'_>,
    ) -> bool {
        let policy = &self.options.retry;
        *broken += 1;
        let wait = policy.backoff(*broken);
        if *broken >= policy.max_attempts || started.elapsed() + wait > budget {
            return false;
        }
        let reason = format!("the stream broke off: {detail}");
        tracing::info!(provider = %self.provider, attempt = *broken, ?wait, %reason, "retrying model request");
        sink(StreamEvent::Retrying { attempt: *broken, wait, reason });
        tokio::time::sleep(wait).await;
        true
    }

    /// Stops streaming for this session (only requests with tools, when the
    /// failed one had tools) and says so.
    fn stop_streaming(&self, tools: bool, why: &str, sink: Sink<'_>) {
        let (flag, scope) = if tools {
            (&self.streaming.off_with_tools, "requests with tools")
        } else {
            (&self.streaming.off, "any request")
        };
        flag.store(true, Ordering::Relaxed);
        let reason =
            format!("{why}; repeating it without streaming (and not streaming {scope} for the rest of the session)");
        tracing::warn!(provider = %self.provider, %reason, "streaming turned off");
        sink(StreamEvent::Retrying { attempt: 1, wait: Duration::ZERO, reason });
    }

    pub fn timeout(&self, what: &str, after: Duration) -> ProviderError {
        ProviderError::Timeout { provider: self.provider.clone(), what: what.to_string(), after }
    }

    pub fn stream_error(&self, detail: impl Into<String>) -> ProviderError {
        ProviderError::Stream { provider: self.provider.clone(), detail: detail.into() }
    }

    pub fn decode_error(&self, detail: impl Into<String>) -> ProviderError {
        ProviderError::Decode { provider: self.provider.clone(), detail: detail.into() }
    }

    fn sse(&self, resp: Response) -> SseReader {
        let bytes = Arc::new(AtomicUsize::new(0));
        let body = body_stream(resp, self.options.idle_timeout, bytes.clone());
        SseReader { events: Box::pin(body.eventsource()), idle: self.options.idle_timeout, seen: 0, bytes }
    }
}

/// Turns one wire's stream of SSE `data` payloads into a response.
pub trait StreamAssembler: Default {
    /// Feeds one event's `data`; `Ok(true)` at the wire's end marker. An `Err`
    /// says what broke (the caller adds the provider's name).
    fn push(&mut self, data: &str, sink: Sink<'_>) -> Result<bool, String>;
    /// The response, or what was missing when the stream ended.
    fn finish(self) -> Result<ModelResponse, String>;
    /// Whether the error `push` just returned is one the provider calls
    /// temporary (overloaded, a server error): the request may go again.
    fn transient(&self) -> bool {
        false
    }
}

/// A non-streamed answer still goes through the sink, so a UI has one path.
fn replay_as_events(response: &ModelResponse, sink: Sink<'_>) {
    if let Some(reasoning) = &response.reasoning {
        sink(StreamEvent::ReasoningDelta(reasoning.clone()));
    }
    if !response.text.is_empty() {
        sink(StreamEvent::TextDelta(response.text.clone()));
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        sink(StreamEvent::ToolCallBegin { index, id: call.id.clone(), name: call.name.clone() });
        sink(StreamEvent::ToolCallArgumentsDelta { index, fragment: call.arguments.clone() });
    }
}

/// reqwest is built without a bundled crypto provider so that `ring` (fast
/// to build) is used; installing fails only if one is already set.
pub(crate) fn install_crypto() {
    static CRYPTO: Once = Once::new();
    CRYPTO.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The builder of every model client (requests and probes): quiver's user
/// agent, and `TCP_NODELAY` on so that a small request or SSE frame does not
/// wait for the peer's delayed ACK (Nagle's algorithm; reqwest 0.13 defaults
/// to it, and `http_tests::model_clients_set_nodelay` reads it back from the
/// socket in case that default changes).
pub(crate) fn client_builder(base_url: &str) -> reqwest::ClientBuilder {
    install_crypto();
    let builder = Client::builder().user_agent(concat!("quiver/", env!("CARGO_PKG_VERSION"))).tcp_nodelay(true);
    // An HTTP(S)_PROXY from the environment cannot reach this machine's
    // loopback (a local model server, the scripted test server).
    if is_loopback(base_url) { builder.no_proxy() } else { builder }
}

pub(crate) fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else { return false };
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §10.2.3); OpenAI
/// also sends a more precise `retry-after-ms`, preferred when present.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let ms = headers.get("retry-after-ms").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok());
    if let Some(ms) = ms.filter(|ms| ms.is_finite() && *ms >= 0.0) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// Why a body stopped before its end.
#[derive(Debug)]
enum BodyError {
    /// No byte arrived within the idle timeout.
    Idle,
    Failed(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Idle => f.write_str("no byte within the idle timeout"),
            BodyError::Failed(detail) => f.write_str(detail),
        }
    }
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Vec<u8>, BodyError>> + Send>>;

/// The body as a stream of chunks, through `Response::chunk` (which needs no
/// extra reqwest feature); the stream ends after the first error.
///
/// The idle timeout is kept here, on bytes rather than on SSE events: a
/// comment line (`: ping`, which llama-cpp-python sends every 15 s while the
/// model works) is no event, yet it says the server is alive. `bytes` counts
/// what arrived, for the error message.
fn body_stream(resp: Response, idle: Duration, bytes: Arc<AtomicUsize>) -> ByteStream {
    Box::pin(futures::stream::unfold(Some(resp), move |state| {
        let bytes = bytes.clone();
        async move {
            let mut resp = state?;
            match tokio::time::timeout(idle, resp.chunk()).await {
                Err(_) => Some((Err(BodyError::Idle), None)),
                Ok(Ok(Some(chunk))) => {
                    bytes.fetch_add(chunk.len(), Ordering::Relaxed);
                    Some((Ok(chunk.to_vec()), Some(resp)))
                }
                Ok(Ok(None)) => None,
                Ok(Err(e)) => Some((Err(BodyError::Failed(error_chain(&e))), None)),
            }
        }
    }))
}

/// Why [`SseReader::next`] has no event.
enum SseError {
    /// No byte within the idle timeout.
    Idle,
    /// The body or its SSE framing broke; what to report.
    Broken(String),
}

/// Server-sent events off a response, each byte within the idle timeout.
struct SseReader {
    events: Pin<Box<dyn Stream<Item = Result<Event, eventsource_stream::EventStreamError<BodyError>>> + Send>>,
    idle: Duration,
    /// Events read so far (for error messages).
    seen: usize,
    /// Bytes read so far, comments included (for error messages).
    bytes: Arc<AtomicUsize>,
}

impl SseReader {
    /// The next event; `None` at a clean end of the body.
    async fn next(&mut self) -> Result<Option<Event>, SseError> {
        match self.events.next().await {
            None => Ok(None),
            Some(Ok(event)) => {
                self.seen += 1;
                Ok(Some(event))
            }
            Some(Err(eventsource_stream::EventStreamError::Transport(BodyError::Idle))) => Err(SseError::Idle),
            Some(Err(e)) => Err(SseError::Broken(format!("after {} events: {e}", self.seen))),
        }
    }

    /// What went silent, for a timeout's `what`: how long, after how much,
    /// on which try (when there were several) and which setting sets the wait.
    fn idle_detail(&self, tries: Option<(u32, u32)>) -> String {
        let bytes = self.bytes.load(Ordering::Relaxed);
        let tries = tries.map(|(n, of)| format!(", try {n} of {of}")).unwrap_or_default();
        format!(
            "the stream (no byte for {:.1?} after {} events, {bytes} bytes{tries}; `stream_idle_timeout_secs` sets the wait)",
            self.idle, self.seen
        )
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
