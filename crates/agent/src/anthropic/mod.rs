//! Anthropic Messages (`wire = "anthropic"`).

mod body;
mod stream;
mod thinking;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use crate::deferred::DeferredTools;
use crate::http::{HttpOptions, ModelCall, Transport};
use crate::message::{ModelRequest, ModelResponse};
use crate::provider::{ApiKey, BoxFuture, Provider, ProviderError, Sink, Wire};

pub use body::{DEFAULT_MAX_TOKENS, parse_response, parse_usage, request_body, request_body_streamed};
pub use stream::MessagesStreamAssembler;

/// The API version header value the request/response shapes here follow.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub struct AnthropicProvider {
    transport: Transport,
    base_url: String,
    key: ApiKey,
    /// `[providers.NAME] vision` (unset: by model id).
    vision: Option<bool>,
    /// `[providers.NAME] tool_choice` (`auto`, `required`).
    tool_choice: Option<String>,
    /// `[providers.NAME] deferred_tools` (`defer` unless set to `append`).
    deferred: DeferredTools,
}

impl AnthropicProvider {
    pub fn new(name: &str, base_url: &str, key: ApiKey, options: HttpOptions) -> Result<Self, ProviderError> {
        Ok(AnthropicProvider {
            transport: Transport::new(name, base_url, options)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            key,
            vision: None,
            tool_choice: None,
            deferred: DeferredTools::Defer,
        })
    }

    /// `[providers.NAME] stream`: `Some(false)` never streams.
    pub fn with_streaming(self, stream: Option<bool>) -> Self {
        if stream == Some(false) {
            self.transport.force_no_streaming();
        }
        self
    }

    /// What `quiver providers check` learned about this server: its streaming.
    pub fn with_learned(self, learned: &crate::learned::Learned) -> Self {
        crate::openai::apply_streaming(&self.transport, learned);
        self
    }

    /// `tool_choice` for every request with tools: `auto` as `{"type": "auto"}`,
    /// `required` as `{"type": "any"}`.
    pub fn with_tool_choice(mut self, choice: Option<String>) -> Self {
        self.tool_choice = choice;
        self
    }

    /// `deferred_tools`: `append` for Anthropic-compatible servers that do
    /// not support `defer_loading` / `tool_reference`. Unset, only
    /// Anthropic's own API defers: a proxy that speaks the Messages wire
    /// (LiteLLM, seen on 1.108.7) hands every deferred definition to its
    /// backend as an ordinary tool, which overflowed an 8k-token model's
    /// context in the real-server test.
    pub fn with_deferred_tools(mut self, mode: Option<DeferredTools>) -> Self {
        self.deferred =
            mode.unwrap_or(if is_anthropic_api(&self.base_url) { DeferredTools::Defer } else { DeferredTools::Append });
        self
    }

    /// Whether tool images are sent (None: decided by the model id).
    pub fn with_vision(mut self, vision: Option<bool>) -> Self {
        self.vision = vision;
        self
    }

    fn headers(&self) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(ANTHROPIC_VERSION));
        let mut key = HeaderValue::from_str(self.key.expose()).map_err(|_| ProviderError::Transport {
            provider: self.transport.provider.clone(),
            detail: "the API key contains characters not allowed in an HTTP header".into(),
        })?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), key);
        Ok(headers)
    }

    async fn complete_inner(&self, req: &ModelRequest, sink: Sink<'_>) -> Result<ModelResponse, ProviderError> {
        // Set to append, deferred definitions a caller passed are not sent.
        let appended;
        let req = if self.deferred == DeferredTools::Append && !req.deferred_tools.is_empty() {
            appended = ModelRequest { deferred_tools: Vec::new(), ..req.clone() };
            &appended
        } else {
            req
        };
        let url = format!("{}/v1/messages", self.base_url);
        let headers = self.headers()?;
        let body = |stream: bool| {
            let mut body = request_body_streamed(req, self.vision, stream);
            if let Some(choice) = self.tool_choice.as_deref().filter(|_| !req.tool_list().is_empty()) {
                body["tool_choice"] = anthropic_tool_choice(choice);
            }
            quiver_engine::canonical::to_string(&body)
        };
        let call = ModelCall {
            url: &url,
            headers: &headers,
            stream: req.stream,
            tools: !req.tool_list().is_empty(),
            body: &body,
            parse: parse_response,
            // The Messages body has no shape to change: a refusal is final.
            repair: &|_| None,
        };
        self.transport.complete::<MessagesStreamAssembler>(call, sink).await
    }
}

/// An OpenAI-style `tool_choice` setting in the Messages API's shape.
pub fn anthropic_tool_choice(choice: &str) -> serde_json::Value {
    match choice {
        "required" => serde_json::json!({"type": "any"}),
        other => serde_json::json!({"type": other}),
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        &self.transport.provider
    }

    fn wire(&self) -> Wire {
        Wire::Anthropic
    }

    fn defers_tools(&self) -> bool {
        self.deferred == DeferredTools::Defer
    }

    fn complete<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: Sink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(self.complete_inner(req, sink))
    }

    fn fim<'a>(&'a self, _: &'a str, _: &'a str, _: u32) -> BoxFuture<'a, Result<String, ProviderError>> {
        let provider = self.transport.provider.clone();
        Box::pin(async move {
            Err(ProviderError::Unsupported {
                provider,
                what: "fill-in-the-middle (the Messages API has no FIM endpoint)".into(),
            })
        })
    }
}

/// Whether `base_url` is Anthropic's own API (its host `api.anthropic.com`).
fn is_anthropic_api(base_url: &str) -> bool {
    url::Url::parse(base_url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase)).as_deref()
        == Some("api.anthropic.com")
}

#[cfg(test)]
mod deferred_default_tests {
    use super::*;

    fn mode(base_url: &str, set: Option<DeferredTools>) -> DeferredTools {
        let key = ApiKey::new("k");
        AnthropicProvider::new("p", base_url, key, HttpOptions::default())
            .map(|p| p.with_deferred_tools(set).deferred)
            .unwrap_or(DeferredTools::Defer)
    }

    #[test]
    fn only_anthropics_own_api_defers_unless_set() {
        assert_eq!(mode("https://api.anthropic.com", None), DeferredTools::Defer);
        assert_eq!(mode("https://API.anthropic.com/", None), DeferredTools::Defer);
        assert_eq!(mode("http://127.0.0.1:4000", None), DeferredTools::Append);
        assert_eq!(mode("https://api.anthropic.com.evil.example", None), DeferredTools::Append);
        assert_eq!(mode("http://127.0.0.1:4000", Some(DeferredTools::Defer)), DeferredTools::Defer);
        assert_eq!(mode("https://api.anthropic.com", Some(DeferredTools::Append)), DeferredTools::Append);
    }
}
