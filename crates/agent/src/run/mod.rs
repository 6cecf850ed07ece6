//! The turn loop: system prompt + catalog (head + this session's tail) +
//! history go to the model; its tool calls go to the engine; results go back;
//! until the model answers without calling tools, or a limit is reached.
//!
//! Engine types live only in [`engine_port`]; this file knows a [`ToolPort`].
//! History is append-only (each request's messages extend the previous one's)
//! and the head is checked to stay byte-identical, so the provider's prefix
//! cache holds across the whole run.

pub mod cache_key;
pub mod compact;
pub mod engine_port;
pub mod prefix;

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{Value, json};

pub use compact::CompactionPolicy;
pub use engine_port::{CatalogView, EnginePort, ProviderFim, ToolOutcome, ToolPort};
pub use prefix::RequestRecord;

use crate::message::{Effort, FinishReason, Message, ModelRequest, StreamEvent, ToolCall, Usage};
use crate::provider::{Provider, ProviderError};

/// What a run reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    SessionStarted {
        session_id: String,
        head_hash: String,
        head_tools: usize,
    },
    TurnStarted {
        turn: u32,
    },
    /// A streamed piece of the model's output (text, reasoning, call arguments).
    Delta(StreamEvent),
    ModelMessage {
        text: String,
    },
    /// The start of the reasoning (it can be long; the full text is in history).
    ReasoningSummary {
        summary: String,
        chars: usize,
    },
    ToolCallBegun {
        id: String,
        name: String,
        /// The argument text as the model sent it (a front end shows it).
        arguments: String,
    },
    ToolCallEnded {
        id: String,
        name: String,
        duration: Duration,
        error: Option<String>,
        /// Tokens of the child-model calls the tool made, when it made any.
        child_usage: Option<Value>,
        /// The whole result text the model reads (a front end shows it folded).
        output: String,
    },
    /// A follow-up the person sent while the run worked, added to the
    /// conversation after the turn's tool results.
    Steered {
        text: String,
    },
    /// One request's usage. `usage` is `None` when the provider reported
    /// none (unknown, not zero); `total` sums the requests that did, and
    /// `unreported` counts those that did not so far.
    Usage {
        turn: u32,
        usage: Option<Usage>,
        total: Usage,
        unreported: u32,
        /// quiver's own estimate of the cacheable share: the bytes this
        /// request shares with the previous one over its size (`None` for
        /// the first). For servers that report no cache figures.
        shared_share: Option<f64>,
    },
    /// The history was summarized into a relay and the loads were reset.
    Compacted {
        turn: u32,
        before_tokens: u64,
        after_tokens: u64,
    },
    TurnEnded {
        turn: u32,
        finish_reason: FinishReason,
    },
    SessionEnded {
        status: RunStatus,
        turns: u32,
        /// Summed over the requests that reported usage.
        usage: Usage,
        /// Requests whose usage the provider did not report.
        unreported: u32,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// The model answered without calling tools.
    Done,
    MaxTurns,
    TokenBudget,
    /// The model stopped for length or a content filter with no tool calls.
    Stopped(FinishReason),
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    pub max_turns: u32,
    /// Stop once input + output tokens over all requests exceed this.
    pub token_budget: Option<u64>,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits { max_turns: 50, token_budget: None }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    /// The last assistant text.
    pub final_text: String,
    pub turns: u32,
    /// Summed over the requests that reported usage.
    pub usage: Usage,
    /// Requests whose usage the provider did not report (their tokens are unknown).
    pub usage_unreported: u32,
    /// The whole conversation, for a resumed run.
    pub messages: Vec<Message>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("tool `{name}` broke the session: {message}")]
    Tool { name: String, message: String },
}

pub type EventSink<'a> = &'a mut (dyn FnMut(RunEvent) + Send);

/// Takes the follow-ups typed while a run works (an interactive front end's
/// queue). Called after each turn's tool results: what it returns goes to the
/// model with the next request, so the person steers a run without stopping it.
pub type Steering<'a> = &'a (dyn Fn() -> Vec<String> + Send + Sync);

pub struct AgentLoop<'a> {
    pub provider: &'a dyn Provider,
    pub tools: &'a dyn ToolPort,
    pub model: String,
    pub system: String,
    pub max_output_tokens: Option<u32>,
    pub effort: Option<Effort>,
    pub stream: bool,
    pub limits: RunLimits,
    /// Summarize older turns before the context window fills; `None` never compacts.
    pub compaction: Option<CompactionPolicy>,
}

impl AgentLoop<'_> {
    /// Runs `prompt` after `history` (empty for a new session).
    pub async fn run(
        &self,
        history: Vec<Message>,
        prompt: &str,
        events: EventSink<'_>,
    ) -> Result<RunOutcome, RunError> {
        self.run_steered(history, prompt, None, events).await
    }

    /// [`run`](Self::run), taking follow-ups from `steering` between turns.
    pub async fn run_steered(
        &self,
        history: Vec<Message>,
        prompt: &str,
        steering: Option<Steering<'_>>,
        events: EventSink<'_>,
    ) -> Result<RunOutcome, RunError> {
        let mut messages = history;
        messages.push(Message::user(prompt));
        self.record(messages.last());
        let first = self.tools.catalog(self.provider.wire());
        events(RunEvent::SessionStarted {
            session_id: self.tools.session_id(),
            head_hash: first.head_hash.clone(),
            head_tools: first.head_len,
        });
        let mut total = Usage::default();
        let mut unreported = 0u32;
        let mut final_text = String::new();
        let mut turn = 0u32;
        let mut last: Option<(String, ModelRequest)> = None;
        let cache_key = crate::message::prompt_cache_key(&self.tools.session_id());
        let status = loop {
            if turn >= self.limits.max_turns {
                break RunStatus::MaxTurns;
            }
            if self.limits.token_budget.is_some_and(|b| total.input_tokens + total.output_tokens >= b) {
                break RunStatus::TokenBudget;
            }
            turn += 1;
            self.tools.begin_turn();
            let catalog = self.tools.catalog(self.provider.wire());
            if catalog.head_hash != first.head_hash {
                // The engine pins the head per session; a change here is a bug
                // that costs the whole prompt cache, so say so loudly.
                tracing::error!(before = %first.head_hash, after = %catalog.head_hash, "the catalog head changed mid-session");
            }
            events(RunEvent::TurnStarted { turn });
            let head_hash = catalog.head_hash.clone();
            let mut tail = catalog.tail.clone();
            let mut request = self.request(messages.clone(), catalog, &cache_key);
            let mut linear = prefix::linearize(self.provider.wire(), &request);
            if let Some(policy) = self.compaction
                && prefix::estimate_tokens(linear.len()) > policy.limit()
                && messages.len() > 2
            {
                match self.compact(&request, (turn, &head_hash, &tail), &linear, &mut last, events).await {
                    Ok(Some(compacted)) => {
                        messages = compacted;
                        // The tail was reset: the catalog is the head alone again.
                        let catalog = self.tools.catalog(self.provider.wire());
                        request.tools = catalog.tools;
                        tail = catalog.tail;
                        request.messages = messages.clone();
                        linear = prefix::linearize(self.provider.wire(), &request);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(self.fail(e.into(), turn, (total, unreported), events)),
                }
            }
            // What the provider's cache sees: the request as the wire sends it.
            let sent = if self.provider.dispatches_tools() {
                let sent = crate::dispatch::dispatched(&request);
                linear = prefix::linearize(self.provider.wire(), &sent);
                sent
            } else {
                request.clone()
            };
            let shared = last.as_ref().map(|(l, _)| prefix::shared_prefix(l, &linear) as u64);
            let extends_previous = last.as_ref().map(|(_, before)| prefix::extends(before, &sent));
            let mut record = RequestRecord {
                turn,
                request_hash: prefix::sha256(&linear),
                bytes: linear.len() as u64,
                shared_prefix_bytes: shared,
                extends_previous,
                head_hash,
                tools: sent.tool_list().len() as u64,
                tail,
                usage: None,
                cache_order: prefix::cache_order(self.provider.wire()),
            };
            last = Some((linear, sent));
            let mut forward = |e: StreamEvent| events(RunEvent::Delta(e));
            let mut response = match self.provider.complete(&request, &mut forward).await {
                Ok(r) => r,
                Err(e) => {
                    self.tools.record_request(&record);
                    return Err(self.fail(e.into(), turn, (total, unreported), events));
                }
            };
            // Never two calls with one id in a turn, whatever the provider did.
            crate::calls::make_ids_unique(&mut response.tool_calls);
            record.usage = response.reported_usage();
            self.tools.record_request(&record);
            match response.reported_usage() {
                Some(usage) => total.add(&usage),
                None => unreported += 1,
            }
            let shared_share = record.shared_prefix_bytes.map(|shared| shared as f64 / record.bytes.max(1) as f64);
            events(RunEvent::Usage { turn, usage: response.reported_usage(), total, unreported, shared_share });
            if let Some(reasoning) = &response.reasoning {
                let summary: String = reasoning.chars().take(200).collect();
                events(RunEvent::ReasoningSummary { summary, chars: reasoning.chars().count() });
            }
            if !response.text.is_empty() {
                final_text = response.text.clone();
                events(RunEvent::ModelMessage { text: response.text.clone() });
            }
            messages.push(Message::from_response(&response));
            self.record(messages.last());
            if response.tool_calls.is_empty() {
                events(RunEvent::TurnEnded { turn, finish_reason: response.finish_reason.clone() });
                break match response.finish_reason {
                    FinishReason::Stop | FinishReason::ToolCalls => RunStatus::Done,
                    other => RunStatus::Stopped(other),
                };
            }
            let results = match self.run_calls(&response.tool_calls, events).await {
                Ok(results) => results,
                Err(e) => return Err(self.fail(e, turn, (total, unreported), events)),
            };
            for (call, outcome) in response.tool_calls.iter().zip(results) {
                messages.push(Message::Tool {
                    call_id: call.id.clone(),
                    content: outcome.content,
                    is_error: outcome.is_error,
                    images: outcome.images,
                    loaded: outcome.loaded,
                });
                self.record(messages.last());
            }
            // After the results, never between a call and its result: every
            // wire accepts a user message there, and the prefix only grows.
            for text in steering.map(|take| take()).unwrap_or_default() {
                messages.push(Message::user(text.clone()));
                self.record(messages.last());
                events(RunEvent::Steered { text });
            }
            events(RunEvent::TurnEnded { turn, finish_reason: response.finish_reason });
        };
        events(RunEvent::SessionEnded { status: status.clone(), turns: turn, usage: total, unreported });
        Ok(RunOutcome { status, final_text, turns: turn, usage: total, usage_unreported: unreported, messages })
    }

    /// One model request: the system prompt, `messages`, and the catalog.
    fn request(&self, messages: Vec<Message>, catalog: CatalogView, cache_key: &str) -> ModelRequest {
        ModelRequest {
            model: self.model.clone(),
            system: self.system.clone(),
            messages,
            tools: catalog.tools,
            head_len: catalog.head_len,
            deferred_tools: if self.provider.defers_tools() { catalog.deferred } else { Vec::new() },
            max_output_tokens: self.max_output_tokens,
            effort: self.effort,
            stream: self.stream,
            cache_key: Some(cache_key.to_string()),
        }
    }

    /// Compacts `history` now, because the person asked (`/compact`), the
    /// way the loop does when the window fills: the relay replaces the
    /// history, the loads are reset, and the transcript records the one
    /// allowed break in prefix growth. A history too short to summarize, or
    /// an empty summary, comes back unchanged.
    pub async fn compact_now(&self, history: Vec<Message>, events: EventSink<'_>) -> Result<Vec<Message>, RunError> {
        if history.len() <= 2 {
            return Ok(history);
        }
        let catalog = self.tools.catalog(self.provider.wire());
        let (head_hash, tail) = (catalog.head_hash.clone(), catalog.tail.clone());
        let cache_key = crate::message::prompt_cache_key(&self.tools.session_id());
        let request = self.request(history.clone(), catalog, &cache_key);
        let linear = prefix::linearize(self.provider.wire(), &request);
        let mut last = None;
        match self.compact(&request, (0, &head_hash, &tail), &linear, &mut last, events).await? {
            Some(messages) => Ok(messages),
            None => Ok(history),
        }
    }

    /// Records a history message in full (resume rebuilds history from these).
    fn record(&self, message: Option<&Message>) {
        let Some(message) = message else { return };
        let role = match message {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        };
        match serde_json::to_value(message) {
            Ok(value) => self.tools.record_message(role, value),
            Err(e) => tracing::warn!(error = %e, "could not record a message"),
        }
    }

    fn fail(&self, error: RunError, turns: u32, (usage, unreported): (Usage, u32), events: EventSink<'_>) -> RunError {
        events(RunEvent::SessionEnded { status: RunStatus::Failed(error.to_string()), turns, usage, unreported });
        error
    }

    /// Summarizes the history into a relay; `Ok(None)` when the summary could
    /// not be had for a reason worth carrying on past (an empty answer). The
    /// summary request is recorded like every other model request (it becomes
    /// `last`, what the next request is compared with).
    async fn compact(
        &self,
        request: &ModelRequest,
        (turn, head_hash, tail): (u32, &str, &[String]),
        linear: &str,
        last: &mut Option<(String, ModelRequest)>,
        events: EventSink<'_>,
    ) -> Result<Option<Vec<Message>>, ProviderError> {
        let ask = compact::summary_request(request);
        let ask_linear = prefix::linearize(self.provider.wire(), &ask);
        let head_len = request.head_len.min(request.tool_list().len());
        let mut record = RequestRecord {
            turn,
            request_hash: prefix::sha256(&ask_linear),
            bytes: ask_linear.len() as u64,
            shared_prefix_bytes: last.as_ref().map(|(l, _)| prefix::shared_prefix(l, &ask_linear) as u64),
            extends_previous: last.as_ref().map(|(_, before)| prefix::extends(before, &ask)),
            head_hash: head_hash.to_string(),
            tools: ask.tool_list().len() as u64,
            tail: tail.to_vec(),
            usage: None,
            cache_order: prefix::cache_order(self.provider.wire()),
        };
        let result = compact::summarize(self.provider, &ask).await;
        record.usage = result.as_ref().ok().and_then(|r| r.reported_usage());
        self.tools.record_request(&record);
        *last = Some((ask_linear, ask));
        let response = match result {
            Ok(r) => r,
            Err(ProviderError::Decode { detail, .. }) => {
                tracing::warn!(%detail, "compaction skipped");
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let messages = compact::compacted_history(&request.messages, &response.text);
        let facts = crate::relay::Facts::from_messages(&request.messages);
        self.tools.keep_relay(&crate::relay::document(&response.text, &facts));
        // The next request: the head alone (loads are reset) and the relay.
        let next = ModelRequest {
            messages: messages.clone(),
            tools: Value::Array(request.tool_list()[..head_len].to_vec()),
            ..request.clone()
        };
        let before_tokens = prefix::estimate_tokens(linear.len());
        let after_tokens = prefix::estimate_tokens(prefix::linearize(self.provider.wire(), &next).len());
        self.tools.compacted(before_tokens, after_tokens);
        self.record(messages.last());
        events(RunEvent::Compacted { turn, before_tokens, after_tokens });
        Ok(Some(messages))
    }

    /// Runs one assistant turn's calls: consecutive concurrency-safe calls
    /// together, every other call alone and in order. Results come back in
    /// call order whatever finished first.
    async fn run_calls(&self, calls: &[ToolCall], events: EventSink<'_>) -> Result<Vec<ToolOutcome>, RunError> {
        let mut results = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if self.tools.concurrency_safe(&calls[i].name) {
                while end < calls.len() && self.tools.concurrency_safe(&calls[end].name) {
                    end += 1;
                }
            }
            let batch = &calls[i..end];
            for call in batch {
                events(RunEvent::ToolCallBegun {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
            }
            let outcomes = join_all(batch.iter().map(|call| self.run_call(call))).await;
            for (call, (outcome, duration)) in batch.iter().zip(outcomes) {
                let outcome = outcome.map_err(|message| RunError::Tool { name: call.name.clone(), message })?;
                let error = outcome.is_error.then(|| outcome.content.chars().take(200).collect());
                let child_usage = outcome.child_usage.clone();
                events(RunEvent::ToolCallEnded {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    duration,
                    error,
                    child_usage,
                    output: outcome.content.clone(),
                });
                results.push(outcome);
            }
            i = end;
        }
        Ok(results)
    }

    async fn run_call(&self, call: &ToolCall) -> (Result<ToolOutcome, String>, Duration) {
        let started = Instant::now();
        // A `call_tool` the wire could not unwrap (no tool name in it).
        let arguments = if self.provider.dispatches_tools() && call.name == crate::dispatch::CALL_TOOL {
            Err(crate::dispatch::malformed(&call.arguments))
        } else {
            parse_arguments(&call.name, &call.arguments)
        };
        let outcome = match arguments {
            Ok(args) => self.tools.call(&call.name, args).await,
            Err(message) => Ok(ToolOutcome {
                content: message,
                is_error: true,
                child_usage: None,
                images: Vec::new(),
                loaded: Vec::new(),
            }),
        };
        (outcome, started.elapsed())
    }
}

/// The model's argument text as a JSON object; empty means `{}`. Broken JSON
/// goes back to the model as an error result it can fix, never to a tool.
fn parse_arguments(name: &str, raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("arguments for `{name}` must be a JSON object, got: {other}")),
        Err(e) => Err(format!("arguments for `{name}` are not valid JSON ({e}); resend the call with a JSON object")),
    }
}
