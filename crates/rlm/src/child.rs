//! The child model behind `sub_query*`: one-shot, non-streaming completions
//! through quiver's provider layer. The provider (and its key) lives in the
//! quiver process only; the REPL asks over the protocol and gets text back.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use quiver_agent::{Message, ModelRequest, Provider, Usage};

/// The child model on DeepSeek: its fast, non-thinking model, since child
/// queries are many small one-shot completions (other providers use their
/// configured model).
pub const DEFAULT_CHILD_MODEL: &str = "deepseek-v4-flash";
/// At most this many child queries per `sub_query_batch` call (they run concurrently).
pub const BATCH_CAP: usize = 16;

/// Builds the provider on first use: a session that never calls a child
/// model never needs a key.
pub type ProviderFactory = Arc<dyn Fn() -> Result<Arc<dyn Provider>, String> + Send + Sync>;

const CHILD_SYSTEM: &str = "You answer one focused question about the given context for a program that will parse your reply. \
Answer directly and briefly, with no preamble.";

pub struct ChildModel {
    pub model: String,
    factory: ProviderFactory,
    built: Mutex<Option<Arc<dyn Provider>>>,
    /// Environment variables that hold provider keys: removed from every REPL.
    pub secret_env: Vec<String>,
    pub max_output_tokens: Option<u32>,
}

/// One prompt of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildPrompt {
    pub prompt: String,
    pub context: Option<String>,
}

/// One answer (or why there is none) and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildAnswer {
    pub result: Result<String, String>,
    pub usage: ChildUsage,
}

/// Token figures summed over child queries. A server that reports no usage
/// (llama-cpp-python streaming, some proxies) leaves them unknown, not 0:
/// such queries are counted in `unreported` and add nothing to `known`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChildUsage {
    /// The sum of the figures that were reported.
    pub known: Usage,
    /// Model requests that reported none.
    pub unreported: u64,
}

impl ChildUsage {
    /// One response's usage (`None`: the provider reported none).
    pub fn of(reported: Option<Usage>) -> Self {
        match reported {
            Some(known) => ChildUsage { known, unreported: 0 },
            None => ChildUsage { known: Usage::default(), unreported: 1 },
        }
    }

    pub fn add(&mut self, other: &ChildUsage) {
        self.known.add(&other.known);
        self.unreported += other.unreported;
    }

    /// A token figure as JSON: `null` when some requests went unreported and
    /// none reported anything (unknown, not 0).
    pub fn figure(&self, pick: fn(&Usage) -> u64) -> serde_json::Value {
        if self.unreported > 0 && self.known == Usage::default() {
            serde_json::Value::Null
        } else {
            serde_json::Value::from(pick(&self.known))
        }
    }
}

impl ChildModel {
    pub fn new(model: impl Into<String>, factory: ProviderFactory, secret_env: Vec<String>) -> Self {
        ChildModel { model: model.into(), factory, built: Mutex::new(None), secret_env, max_output_tokens: Some(2048) }
    }

    /// A child model that cannot be reached (no provider configured): every
    /// query fails with `why`, the REPL itself still works.
    pub fn unavailable(why: impl Into<String>) -> Self {
        let why = why.into();
        ChildModel::new(DEFAULT_CHILD_MODEL, Arc::new(move || Err(why.clone())), Vec::new())
    }

    fn provider(&self) -> Result<Arc<dyn Provider>, String> {
        let mut built = self.built.lock();
        if let Some(p) = built.as_ref() {
            return Ok(Arc::clone(p));
        }
        let p = (self.factory)()?;
        *built = Some(Arc::clone(&p));
        Ok(p)
    }

    /// Every prompt at once (the caller caps a batch at [`BATCH_CAP`]); each
    /// one cut at `timeout`. Answers come back in order.
    pub async fn batch(&self, prompts: &[ChildPrompt], model: &str, timeout: Duration) -> Vec<ChildAnswer> {
        let provider = match self.provider() {
            Ok(p) => p,
            Err(why) => {
                let error = format!("no child model: {why}");
                return prompts
                    .iter()
                    .map(|_| ChildAnswer { result: Err(error.clone()), usage: ChildUsage::default() })
                    .collect();
            }
        };
        let calls = prompts.iter().map(|p| self.one(provider.as_ref(), p, model, timeout));
        futures::future::join_all(calls).await
    }

    /// A short conversation (a nested RLM's steps): the reply text and its usage.
    pub async fn converse(
        &self,
        system: &str,
        messages: &[Message],
        model: &str,
        timeout: Duration,
    ) -> Result<(String, ChildUsage), String> {
        let provider = self.provider().map_err(|why| format!("no child model: {why}"))?;
        let mut request = ModelRequest::new(model);
        request.system = system.to_string();
        request.stream = false;
        request.max_output_tokens = self.max_output_tokens;
        request.messages = messages.to_vec();
        let mut sink = |_| {};
        match tokio::time::timeout(timeout, provider.complete(&request, &mut sink)).await {
            Ok(Ok(response)) => Ok((response.text.clone(), ChildUsage::of(response.reported_usage()))),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("timed out after {}s (the session's sub_query_timeout_ms)", timeout.as_secs())),
        }
    }

    async fn one(&self, provider: &dyn Provider, prompt: &ChildPrompt, model: &str, timeout: Duration) -> ChildAnswer {
        let mut request = ModelRequest::new(model);
        request.system = CHILD_SYSTEM.to_string();
        request.stream = false;
        request.max_output_tokens = self.max_output_tokens;
        let text = match &prompt.context {
            Some(context) => format!("{}\n\nContext:\n{context}", prompt.prompt),
            None => prompt.prompt.clone(),
        };
        request.messages = vec![Message::user(text)];
        let mut sink = |_| {};
        match tokio::time::timeout(timeout, provider.complete(&request, &mut sink)).await {
            Ok(Ok(response)) => {
                ChildAnswer { usage: ChildUsage::of(response.reported_usage()), result: Ok(response.text) }
            }
            Ok(Err(e)) => ChildAnswer { result: Err(e.to_string()), usage: ChildUsage::default() },
            Err(_) => ChildAnswer {
                result: Err(format!(
                    "timed out after {}s (the session's sub_query_timeout_ms; raise it with rlm_configure)",
                    timeout.as_secs()
                )),
                usage: ChildUsage::default(),
            },
        }
    }
}
