//! OpenAI's Responses API (`wire = "responses"`, the default for
//! api.openai.com): `POST {base}/responses`, full input with `store: false`,
//! reasoning items passed back encrypted, and `tool_search` executed by the
//! client with `tool_search_output` so a load never touches the cached prefix
//! (see `body.rs` for both choices).

mod body;
pub mod loads;
mod stream;
pub mod unloaded;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::http::{HttpOptions, ModelCall, Transport};
use crate::message::{ModelRequest, ModelResponse};
use crate::provider::{ApiKey, BoxFuture, Provider, ProviderError, Sink, Wire};

pub use body::{
    ResponsesDialect, TOOL_SEARCH, client_tool_search, flat_function, loaded_by, reasoning_items, reasons, request_body,
};
pub use stream::{ResponsesStreamAssembler, parse_response, parse_usage};
pub use unloaded::UnloadedMatches;

#[derive(Debug)]
pub struct ResponsesProvider {
    transport: Transport,
    base_url: String,
    key: ApiKey,
    dialect: ResponsesDialect,
}

impl ResponsesProvider {
    pub fn new(
        name: &str,
        base_url: &str,
        key: ApiKey,
        dialect: ResponsesDialect,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        Ok(ResponsesProvider {
            transport: Transport::new(name, base_url, options)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            key,
            dialect,
        })
    }

    /// `[providers.NAME] stream`: `Some(false)` never streams.
    pub fn with_streaming(self, stream: Option<bool>) -> Self {
        if stream == Some(false) {
            self.transport.force_no_streaming();
        }
        self
    }

    fn headers(&self) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut auth =
            HeaderValue::from_str(&format!("Bearer {}", self.key.expose())).map_err(|_| ProviderError::Transport {
                provider: self.transport.provider.clone(),
                detail: "the API key contains characters not allowed in an HTTP header".into(),
            })?;
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        Ok(headers)
    }

    async fn complete_inner(&self, req: &ModelRequest, sink: Sink<'_>) -> Result<ModelResponse, ProviderError> {
        let url = format!("{}/responses", self.base_url);
        let headers = self.headers()?;
        let body = |stream: bool| quiver_engine::canonical::to_string(&request_body(req, &self.dialect, stream));
        let call = ModelCall {
            url: &url,
            headers: &headers,
            stream: req.stream,
            tools: !req.tool_list().is_empty(),
            body: &body,
            parse: parse_response,
            // Nothing in this wire's bodies has a second shape to try.
            repair: &|_| None,
        };
        self.transport.complete::<ResponsesStreamAssembler>(call, sink).await.map_err(|e| no_responses_api(e, &url))
    }
}

/// A server without `/responses` answers 404 (or 405): most OpenAI-compatible
/// servers (vLLM, llama.cpp, Ollama, older LiteLLM) speak Chat Completions
/// only. Said plainly, with the setting that fixes it, instead of a bare status.
fn no_responses_api(error: ProviderError, url: &str) -> ProviderError {
    match error {
        ProviderError::Status { provider, status: status @ (404 | 405), message } => ProviderError::Status {
            provider,
            status,
            message: format!(
                "{message} (POST {url}: this server has no Responses API. For an OpenAI-compatible server \
                 that speaks Chat Completions (vLLM, llama.cpp, Ollama), configure a provider with \
                 `wire = \"openai\"` in your config.toml: [providers.local] base_url = \"…/v1\" \
                 api_key_env = \"…\" wire = \"openai\", then --provider local)"
            ),
        },
        other => other,
    }
}

impl Provider for ResponsesProvider {
    fn name(&self) -> &str {
        &self.transport.provider
    }

    fn wire(&self) -> Wire {
        Wire::Responses
    }

    fn complete<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: Sink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(self.complete_inner(req, sink))
    }

    fn fim<'a>(
        &'a self,
        _prefix: &'a str,
        _suffix: &'a str,
        _max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, ProviderError>> {
        Box::pin(async move {
            Err(ProviderError::Unsupported {
                provider: self.transport.provider.clone(),
                what: "fill-in-the-middle (the Responses API has no FIM endpoint)".into(),
            })
        })
    }
}
