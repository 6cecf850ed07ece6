//! The probe's HTTP: one request at a time, no retries (a probe reports what
//! the server does, it does not work around it), each bounded by the timeout,
//! the whole answer read and kept raw for the checks to inspect.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::Target;
use crate::anthropic::ANTHROPIC_VERSION;
use crate::http::error_chain;
use crate::provider::Wire;
use crate::rejection::ErrorBody;

/// The key sent by the wrong-key check: a server that accepts it checks none.
pub(crate) const WRONG_KEY: &str = "quiver-probe-wrong-key";

/// One answer, whole.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
    pub elapsed: Duration,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }

    pub fn is_sse(&self) -> bool {
        self.content_type.trim_start().starts_with("text/event-stream")
    }

    /// What an error answer says (its message and the field it names).
    pub fn said(&self) -> ErrorBody {
        ErrorBody::parse(&self.body)
    }

    /// `HTTP 500: <message>`, shortened to one line.
    pub fn refusal(&self) -> String {
        let said = self.said();
        let field = said.field.map(|f| format!(" (field `{f}`)")).unwrap_or_default();
        format!("HTTP {}{field}: {}", self.status, one_line(&said.message, 160))
    }

    /// The `data` of each server-sent event, in order (comments and empty
    /// events dropped), parsed like the wires parse a live stream.
    pub fn sse_data(&self) -> Vec<String> {
        // A blank line closes a last event the server did not close: a
        // spec parser drops such an event, but the probe reports what the
        // server sent and judged it by its content before this parser too.
        let body = futures::stream::iter([Ok::<_, Infallible>(format!("{}\n\n", self.body))]);
        // The body is already in memory, so blocking on it never waits; the
        // parser yields no errors here (the text is UTF-8 and every line
        // parses as a field, a comment or a blank).
        futures::executor::block_on_stream(body.eventsource())
            .filter_map(Result::ok)
            .map(|event| event.data)
            .filter(|d| !d.trim().is_empty())
            .collect()
    }
}

/// A whitespace-collapsed prefix of `text` of at most `max` chars.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max { flat } else { format!("{}…", flat.chars().take(max).collect::<String>()) }
}

pub(crate) struct Client {
    http: reqwest::Client,
    base: String,
    wire: Wire,
    key: Option<String>,
    timeout: Duration,
}

impl Client {
    pub fn new(target: &Target) -> Result<Self, String> {
        let http = crate::http::client_builder(&target.base_url).build().map_err(|e| error_chain(&e))?;
        Ok(Client {
            http,
            base: target.base_url.trim_end_matches('/').to_string(),
            wire: target.wire,
            key: target.key.as_ref().map(|k| k.expose().to_string()),
            timeout: target.timeout,
        })
    }

    /// The path of the models list on this wire.
    pub fn models_path(&self) -> &'static str {
        match self.wire {
            Wire::OpenAi | Wire::Responses => "/models",
            Wire::Anthropic => "/v1/models",
        }
    }

    pub fn chat_path(&self) -> &'static str {
        match self.wire {
            Wire::OpenAi | Wire::Responses => "/chat/completions",
            Wire::Anthropic => "/v1/messages",
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn headers(&self, key: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let value = |v: String| {
            let mut v = HeaderValue::from_str(&v).ok()?;
            v.set_sensitive(true);
            Some(v)
        };
        match self.wire {
            Wire::OpenAi | Wire::Responses => {
                if let Some(v) = key.and_then(|k| value(format!("Bearer {k}"))) {
                    headers.insert(AUTHORIZATION, v);
                }
            }
            Wire::Anthropic => {
                headers
                    .insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(ANTHROPIC_VERSION));
                if let Some(v) = key.and_then(|k| value(k.to_string())) {
                    headers.insert(HeaderName::from_static("x-api-key"), v);
                }
            }
        }
        headers
    }

    /// `GET path` with the configured key (or `key` instead, when given).
    pub async fn get(&self, path: &str, key: Option<&str>) -> Result<Reply, String> {
        let key = key.or(self.key.as_deref());
        let request = self.http.get(self.url(path)).headers(self.headers(key));
        self.send(request).await
    }

    /// `POST path` with a JSON body (sent with the engine's canonical writer,
    /// like the wires do).
    pub async fn post(&self, path: &str, body: &Value) -> Result<Reply, String> {
        let body = quiver_engine::canonical::to_string(body);
        let request = self.http.post(self.url(path)).headers(self.headers(self.key.as_deref())).body(body);
        self.send(request).await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Reply, String> {
        let started = Instant::now();
        let exchange = async {
            let resp = request.send().await.map_err(|e| error_chain(&e))?;
            let status = resp.status().as_u16();
            let content_type =
                resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
            let body = resp.text().await.map_err(|e| format!("reading the body: {}", error_chain(&e)))?;
            Ok::<_, String>((status, content_type, body))
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Err(_) => Err(format!("no answer within {:.0?}", self.timeout)),
            Ok(Err(e)) => Err(e),
            Ok(Ok((status, content_type, body))) => {
                Ok(Reply { status, content_type, body, elapsed: started.elapsed() })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(body: &str) -> Reply {
        Reply { status: 200, content_type: "text/event-stream".into(), body: body.into(), elapsed: Duration::ZERO }
    }

    #[test]
    fn sse_data_keeps_each_events_data_and_drops_comments_and_empty_events() {
        let body = ": ping\n\nevent: message_start\ndata: {\"a\":1}\n\ndata:{\"b\":2}\r\n\r\n\
                    data: one\ndata: two\n\ndata:   \n\nevent: ping\n\ndata: [DONE]\n\n";
        assert_eq!(reply(body).sse_data(), ["{\"a\":1}", "{\"b\":2}", "one\ntwo", "[DONE]"]);
    }

    #[test]
    fn sse_data_keeps_a_last_event_the_server_did_not_close() {
        assert_eq!(reply("data: first\n\ndata: last").sse_data(), ["first", "last"]);
        assert_eq!(reply("data: last\n").sse_data(), ["last"]);
    }
}
