//! OpenAI-compatible Chat Completions (`wire = "openai"`): DeepSeek (the
//! default), OpenAI, and anything else that speaks `/chat/completions`.

mod body;
mod stream;

use std::sync::atomic::{AtomicU8, Ordering};

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use crate::http::{HttpOptions, ModelCall, Transport};
use crate::message::{ModelRequest, ModelResponse, StreamEvent};
use crate::provider::{ApiKey, BoxFuture, Provider, ProviderError, Sink, Wire};
use crate::rejection::ErrorBody;

pub use crate::http::StreamAssembler;
pub use body::{ToolTurnContent, parse_response, parse_usage, request_body, request_body_with};
pub use stream::ChatStreamAssembler;
pub(crate) use stream::{mid_stream_error, temporary};

/// Dialect differences between OpenAI-compatible servers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenAiDialect {
    /// OpenAI's reasoning models refuse `max_tokens` and want
    /// `max_completion_tokens`; DeepSeek documents `max_tokens`.
    pub max_completion_tokens: bool,
    /// The FIM endpoint relative to the base URL (DeepSeek: `/beta/completions`).
    pub fim_path: Option<String>,
    /// The model FIM requests name.
    pub fim_model: Option<String>,
    /// `[providers.NAME] vision`: whether tool images are sent to the model
    /// (unset: [`crate::vision::sees_images`]'s table decides).
    pub vision: Option<bool>,
    /// `[providers.NAME] tool_choice`: sent with every request that has tools.
    pub tool_choice: Option<String>,
}

#[derive(Debug)]
pub struct OpenAiProvider {
    transport: Transport,
    base_url: String,
    key: ApiKey,
    dialect: OpenAiDialect,
    /// The [`ToolTurnContent`] this server accepts, as learned this session.
    tool_turns: AtomicU8,
    /// Loaded tools called through the `call_tool` head tool instead of
    /// appended (`deferred_tools = "dispatch"`, see [`crate::dispatch`]).
    dispatch: bool,
}

const TOOL_TURNS: [ToolTurnContent; 3] = [ToolTurnContent::Omit, ToolTurnContent::Empty, ToolTurnContent::Null];

impl OpenAiProvider {
    pub fn new(
        name: &str,
        base_url: &str,
        key: ApiKey,
        dialect: OpenAiDialect,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        Ok(OpenAiProvider {
            transport: Transport::new(name, base_url, options)?,
            base_url: base_url.trim_end_matches('/').to_string(),
            key,
            dialect,
            tool_turns: AtomicU8::new(0),
            dispatch: false,
        })
    }

    /// `[providers.NAME] deferred_tools`: `dispatch` calls loaded tools
    /// through a stable head tool; anything else appends them (the default).
    pub fn with_deferred_tools(mut self, mode: Option<crate::deferred::DeferredTools>) -> Self {
        self.dispatch = mode == Some(crate::deferred::DeferredTools::Dispatch);
        self
    }

    /// `[providers.NAME] stream`: `Some(false)` never streams.
    pub fn with_streaming(self, stream: Option<bool>) -> Self {
        if stream == Some(false) {
            self.transport.force_no_streaming();
        }
        self
    }

    /// What `quiver providers check` learned about this server (see
    /// [`crate::learned::Learned`]): start with its tool-turn shape and streaming.
    pub fn with_learned(self, learned: &crate::learned::Learned) -> Self {
        apply_streaming(&self.transport, learned);
        if let Some(position) = learned.tool_turn_content.and_then(|t| TOOL_TURNS.iter().position(|x| *x == t)) {
            self.tool_turns.store(u8::try_from(position).unwrap_or_default(), Ordering::Relaxed);
        }
        self
    }

    fn tool_turns(&self) -> ToolTurnContent {
        TOOL_TURNS.get(usize::from(self.tool_turns.load(Ordering::Relaxed))).copied().unwrap_or_default()
    }

    /// After a refusal naming an assistant message's `content`: the next
    /// shape for tool-only turns, kept for the rest of the session.
    fn repair(&self, said: &ErrorBody) -> Option<String> {
        let field = said.field.as_deref().unwrap_or_default();
        if field.rsplit(['.', '[', ']']).find(|p| !p.is_empty()) != Some("content") {
            return None;
        }
        let next = self.tool_turns().next()?;
        let position = TOOL_TURNS.iter().position(|t| *t == next)?;
        self.tool_turns.store(u8::try_from(position).ok()?, Ordering::Relaxed);
        let shape = match next {
            ToolTurnContent::Omit => "no `content`",
            ToolTurnContent::Empty => "`content: \"\"`",
            ToolTurnContent::Null => "`content: null`",
        };
        Some(format!("{shape} on assistant turns that only call tools"))
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
        let dispatched = self.dispatch.then(|| crate::dispatch::dispatched(req));
        let req = dispatched.as_ref().unwrap_or(req);
        let url = format!("{}/chat/completions", self.base_url);
        let headers = self.headers()?;
        let body = |stream: bool| {
            quiver_engine::canonical::to_string(&request_body_with(req, &self.dialect, self.tool_turns(), stream))
        };
        let call = ModelCall {
            url: &url,
            headers: &headers,
            stream: req.stream,
            tools: !req.tool_list().is_empty(),
            body: &body,
            parse: parse_response,
            repair: &|said: &ErrorBody| self.repair(said),
        };
        let mut response = self.transport.complete::<ChatStreamAssembler>(call, sink).await?;
        if self.dispatch {
            crate::dispatch::unwrap_calls(&mut response.tool_calls);
        }
        Ok(response)
    }

    async fn fim_inner(&self, prefix: &str, suffix: &str, max_tokens: u32) -> Result<String, ProviderError> {
        let (Some(path), Some(model)) = (&self.dialect.fim_path, &self.dialect.fim_model) else {
            return Err(ProviderError::Unsupported {
                provider: self.transport.provider.clone(),
                what: "fill-in-the-middle (no FIM endpoint; DeepSeek's beta /completions has one)".into(),
            });
        };
        let body = quiver_engine::canonical::to_string(&json!({
            "model": model, "prompt": prefix, "suffix": suffix, "max_tokens": max_tokens, "stream": false,
        }));
        let url = fim_url(&self.base_url, path).map_err(|why| ProviderError::Unsupported {
            provider: self.transport.provider.clone(),
            what: format!("fill-in-the-middle: {why}"),
        })?;
        let mut ignore = |_: StreamEvent| {};
        let resp = self.transport.post(&url, &self.headers()?, &body, &mut ignore).await?;
        let value = self.transport.read_json(resp, "FIM body").await?;
        value
            .pointer("/choices/0/text")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| self.transport.decode_error("the FIM response has no choices[0].text"))
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.transport.provider
    }

    fn wire(&self) -> Wire {
        Wire::OpenAi
    }

    fn dispatches_tools(&self) -> bool {
        self.dispatch
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
        prefix: &'a str,
        suffix: &'a str,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<String, ProviderError>> {
        Box::pin(self.fim_inner(prefix, suffix, max_tokens))
    }
}

/// A check's streaming findings, on a provider's transport.
pub(crate) fn apply_streaming(transport: &Transport, learned: &crate::learned::Learned) {
    if learned.stream == Some(false) {
        transport.learned_no_streaming(false);
    } else if learned.stream_with_tools == Some(false) {
        transport.learned_no_streaming(true);
    }
}

/// `{base}{path}` joined with a URL parser: the result must keep the base
/// URL's scheme, host and port (a path like `@127.0.0.1:9/x` would otherwise
/// move the request, and the key in its header, to another host).
pub(crate) fn fim_url(base: &str, path: &str) -> Result<String, String> {
    let base_url = url::Url::parse(base).map_err(|e| format!("the base URL `{base}` does not parse: {e}"))?;
    if !path.starts_with('/') || path.starts_with("//") || path.contains(['@', '\\', '?', '#']) {
        return Err(format!("`fim_path` must be a plain absolute path (got `{path}`)"));
    }
    let joined = url::Url::parse(&format!("{}{}", base.trim_end_matches('/'), path))
        .map_err(|e| format!("`{base}` + `{path}` is not a URL: {e}"))?;
    if joined.scheme() != base_url.scheme()
        || joined.host_str() != base_url.host_str()
        || joined.port_or_known_default() != base_url.port_or_known_default()
        || !joined.username().is_empty()
    {
        return Err(format!("`{base}` + `{path}` leaves the base URL's host"));
    }
    Ok(joined.to_string())
}

#[cfg(test)]
mod fim_url_tests {
    use super::fim_url;

    #[test]
    fn fim_paths_stay_on_the_base_host() {
        assert_eq!(
            fim_url("https://api.deepseek.com", "/beta/completions").as_deref(),
            Ok("https://api.deepseek.com/beta/completions")
        );
        assert_eq!(
            fim_url("https://api.deepseek.com/", "/beta/completions").as_deref(),
            Ok("https://api.deepseek.com/beta/completions")
        );
        for hostile in ["@127.0.0.1:9/x", "/x@127.0.0.1:9", "//evil.example/x", "/a?b", "x"] {
            assert!(fim_url("https://api.deepseek.com", hostile).is_err(), "{hostile}");
        }
    }
}
