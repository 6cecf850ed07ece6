//! The HTTP part both wires share: one POST with retries (429, 5xx, connection
//! failures; exponential backoff with jitter; `Retry-After` honoured; bounded in
//! attempts and total time), timeouts, error-body messages, and an SSE reader
//! with an idle timeout.

use std::pin::Pin;
use std::sync::Once;
use std::time::{Duration, Instant, SystemTime};

use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Client, Response, StatusCode};

use crate::message::StreamEvent;
use crate::provider::{ProviderError, Sink};

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
    /// Longest silence allowed between two pieces of a stream.
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
}

impl Transport {
    pub fn new(provider: &str, base_url: &str, options: HttpOptions) -> Result<Self, ProviderError> {
        static CRYPTO: Once = Once::new();
        // reqwest is built without a bundled crypto provider so that `ring`
        // (fast to build) is used; installing fails only if one is already set.
        CRYPTO.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let mut builder = Client::builder().user_agent(concat!("quiver/", env!("CARGO_PKG_VERSION")));
        // An HTTP(S)_PROXY from the environment cannot reach this machine's
        // loopback (a local model server, the scripted test server).
        if is_loopback(base_url) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| ProviderError::Transport { provider: provider.to_string(), detail: error_chain(&e) })?;
        Ok(Transport { client, provider: provider.to_string(), options })
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
        let policy = &self.options.retry;
        let started = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let sent = self.client.post(url).headers(headers.clone()).body(body.to_string()).send();
            let (reason, retry_after) = match tokio::time::timeout(self.options.request_timeout, sent).await {
                Err(_) => (format!("no response within {:.1?}", self.options.request_timeout), None),
                Ok(Err(e)) if e.is_builder() => {
                    return Err(ProviderError::Transport { provider: self.provider.clone(), detail: error_chain(&e) });
                }
                Ok(Err(e)) => (format!("connection failed: {}", error_chain(&e)), None),
                Ok(Ok(resp)) if resp.status().is_success() => return Ok(resp),
                Ok(Ok(resp)) => {
                    let status = resp.status();
                    let retry_after = retry_after(resp.headers());
                    let message = error_message(resp).await;
                    if !retryable(status) {
                        return Err(ProviderError::Status {
                            provider: self.provider.clone(),
                            status: status.as_u16(),
                            message,
                        });
                    }
                    (format!("HTTP {}: {message}", status.as_u16()), retry_after)
                }
            };
            let wait = retry_after.unwrap_or_else(|| policy.backoff(attempt));
            let elapsed = started.elapsed();
            if attempt >= policy.max_attempts || elapsed + wait > policy.max_total {
                tracing::warn!(provider = %self.provider, attempts = attempt, %reason, "model request failed");
                return Err(ProviderError::RetriesExhausted {
                    provider: self.provider.clone(),
                    attempts: attempt,
                    elapsed,
                    last: reason,
                });
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

    pub fn timeout(&self, what: &str, after: Duration) -> ProviderError {
        ProviderError::Timeout { provider: self.provider.clone(), what: what.to_string(), after }
    }

    pub fn stream_error(&self, detail: impl Into<String>) -> ProviderError {
        ProviderError::Stream { provider: self.provider.clone(), detail: detail.into() }
    }

    pub fn decode_error(&self, detail: impl Into<String>) -> ProviderError {
        ProviderError::Decode { provider: self.provider.clone(), detail: detail.into() }
    }

    pub fn sse(&self, resp: Response) -> SseReader {
        SseReader { events: Box::pin(body_stream(resp).eventsource()), idle: self.options.idle_timeout, seen: 0 }
    }
}

fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else { return false };
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

fn retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
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

/// The provider's own explanation: `error.message` in both wires' JSON, else
/// the start of the body.
async fn error_message(resp: Response) -> String {
    let text = resp.text().await.unwrap_or_default();
    let parsed: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message").or_else(|| v.get("message")).or_else(|| v.get("error")).and_then(|m| m.as_str())
    });
    match message {
        Some(m) => m.to_string(),
        None if text.trim().is_empty() => "(empty body)".to_string(),
        None => text.chars().take(300).collect(),
    }
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

type ByteStream = Pin<Box<dyn Stream<Item = Result<Vec<u8>, String>> + Send>>;

/// The body as a stream of chunks, through `Response::chunk` (which needs no
/// extra reqwest feature); the stream ends after the first transport error.
fn body_stream(resp: Response) -> ByteStream {
    Box::pin(futures::stream::unfold(Some(resp), |state| async move {
        let mut resp = state?;
        match resp.chunk().await {
            Ok(Some(chunk)) => Some((Ok(chunk.to_vec()), Some(resp))),
            Ok(None) => None,
            Err(e) => Some((Err(error_chain(&e)), None)),
        }
    }))
}

/// Server-sent events off a response, each within the idle timeout.
pub(crate) struct SseReader {
    events: Pin<Box<dyn Stream<Item = Result<Event, eventsource_stream::EventStreamError<String>>> + Send>>,
    idle: Duration,
    /// Events read so far (for error messages).
    pub seen: usize,
}

impl SseReader {
    /// The next event; `None` at a clean end of the body.
    pub async fn next(&mut self, transport: &Transport) -> Result<Option<Event>, ProviderError> {
        match tokio::time::timeout(self.idle, self.events.next()).await {
            Err(_) => Err(transport.timeout(&format!("the stream (idle after {} events)", self.seen), self.idle)),
            Ok(None) => Ok(None),
            Ok(Some(Ok(event))) => {
                self.seen += 1;
                Ok(Some(event))
            }
            Ok(Some(Err(e))) => Err(transport.stream_error(format!("after {} events: {e}", self.seen))),
        }
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
