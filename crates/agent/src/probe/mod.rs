//! `quiver providers check`: what a configured provider's server actually
//! does, found by asking it, one table row per capability the agent relies on
//! (reachable, key accepted, model listed, plain chat, streaming, a forced
//! tool call, the tool result accepted back, streaming with tools, usage,
//! cached-token fields, deferred tools kept out of the prompt, vision, fill
//! in the middle).
//!
//! Each row is `ok`, `no` or `n/a` with a short detail. The requests are the
//! wires' own bodies (see `requests.rs`), sent once each with no retry: a
//! probe reports, it does not work around. What it learns that the wire can
//! act on ([`Learned`]: do not stream, or not with tools; the `content` shape
//! of tool-only turns; no images) is cached per base URL and model in the
//! state directory (see `cache.rs`) and applied when a provider is built for
//! that base URL and model (and `tool_choice` setting), so the first request of the next run already
//! avoids what failed.
//!
//! - `client.rs`: one raw HTTP exchange at a time.
//! - `endpoint.rs`: reachable, key, model list.
//! - `chat.rs`: plain chat, streaming, usage, cached-token fields.
//! - `tools.rs`: forced call, result back, streaming with tools.
//! - `deferred.rs`: deferred tools kept out (measured by the input tokens);
//!   on a Responses provider, `tool_search.rs`: the client-executed
//!   `tool_search` and its `tool_search_output`.
//! - `extras.rs`: vision, fill in the middle.

mod cache;
mod chat;
mod client;
mod deferred;
mod endpoint;
mod extras;
mod requests;
mod tool_search;
mod tools;

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::AgentConfig;
use crate::message::ToolCall;
use crate::provider::{ApiKey, Wire};

pub use cache::{Learned, cache_path, learned_for, load, store};

/// One row's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    #[serde(rename = "ok")]
    Ok,
    #[serde(rename = "no")]
    No,
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::No => "no",
            Status::NotApplicable => "n/a",
        }
    }
}

/// The rows, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Check {
    Reachable,
    KeyAccepted,
    ModelListed,
    PlainChat,
    Streaming,
    ForcedToolCall,
    ToolResultBack,
    StreamingWithTools,
    UsageReported,
    CachedTokenFields,
    DeferredTools,
    Vision,
    Fim,
}

impl Check {
    const ALL: [Check; 13] = [
        Check::Reachable,
        Check::KeyAccepted,
        Check::ModelListed,
        Check::PlainChat,
        Check::Streaming,
        Check::ForcedToolCall,
        Check::ToolResultBack,
        Check::StreamingWithTools,
        Check::UsageReported,
        Check::CachedTokenFields,
        Check::DeferredTools,
        Check::Vision,
        Check::Fim,
    ];

    /// The id in `--json` output.
    fn id(self) -> &'static str {
        match self {
            Check::Reachable => "reachable",
            Check::KeyAccepted => "key_accepted",
            Check::ModelListed => "model_listed",
            Check::PlainChat => "plain_chat",
            Check::Streaming => "streaming",
            Check::ForcedToolCall => "forced_tool_call",
            Check::ToolResultBack => "tool_result_back",
            Check::StreamingWithTools => "streaming_with_tools",
            Check::UsageReported => "usage_reported",
            Check::CachedTokenFields => "cached_token_fields",
            Check::DeferredTools => "deferred_tools",
            Check::Vision => "vision",
            Check::Fim => "fim",
        }
    }
}

/// The table label of a row id.
pub fn label(id: &str) -> &str {
    match id {
        "reachable" => "reachable",
        "key_accepted" => "key accepted",
        "model_listed" => "model listed",
        "plain_chat" => "plain chat",
        "streaming" => "streaming",
        "forced_tool_call" => "forced tool call",
        "tool_result_back" => "tool result back",
        "streaming_with_tools" => "streaming with tools",
        "usage_reported" => "usage reported",
        "cached_token_fields" => "cached-token fields",
        "deferred_tools" => "deferred tools kept out",
        "vision" => "vision",
        "fim" => "fill in the middle",
        other => other,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub check: String,
    pub status: Status,
    pub detail: String,
    /// The row's request time, when it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// One check of one (base URL, model), as printed and cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub provider: String,
    pub wire: String,
    pub base_url: String,
    pub model: String,
    /// The provider's `tool_choice` setting the checks ran with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<String>,
    /// Seconds since the Unix epoch.
    pub checked_at: u64,
    pub rows: Vec<Row>,
    pub learned: Learned,
}

impl Report {
    pub fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.check == id)
    }

    /// Whether `quiver exec` can work at all: the server answered a plain chat.
    pub fn usable(&self) -> bool {
        self.row("plain_chat").is_some_and(|r| r.status == Status::Ok)
    }
}

/// What to probe: a provider as configured, its key read already.
#[derive(Debug, Clone)]
pub struct Target {
    pub provider: String,
    /// The wire the checks speak (Chat Completions for a Responses provider).
    pub wire: Wire,
    /// The provider is configured with `wire = "responses"`.
    pub responses: bool,
    pub base_url: String,
    pub model: String,
    /// `None`: the key variable is not set (requests go without a key).
    pub key: Option<ApiKey>,
    pub key_env: String,
    pub fim_path: Option<String>,
    /// OpenAI's `max_completion_tokens` instead of `max_tokens`.
    pub max_completion_tokens: bool,
    /// `[providers.NAME] tool_choice`, sent with tools as the agent does.
    pub tool_choice: Option<String>,
    /// Per request.
    pub timeout: Duration,
}

impl Target {
    /// The selected provider of `config`, its key read through `env`.
    pub fn from_config(
        config: &AgentConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, crate::config::ConfigError> {
        let p = config.selected()?;
        let key = env(&p.api_key_env).map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).map(ApiKey::new);
        // The checks speak Chat Completions for a Responses provider: OpenAI
        // serves both with one key and one model list; what differs (tool
        // search, reasoning items) is covered by the scripted server's tests.
        let wire = if p.wire == Wire::Responses { Wire::OpenAi } else { p.wire };
        Ok(Target {
            provider: p.name.clone(),
            wire,
            responses: p.wire == Wire::Responses,
            base_url: p.base_url.trim_end_matches('/').to_string(),
            model: config.model.clone(),
            key,
            key_env: p.api_key_env.clone(),
            fim_path: p.fim_path.clone(),
            max_completion_tokens: p.name == "openai",
            tool_choice: p.tool_choice.clone(),
            timeout: Duration::from_secs(120),
        })
    }
}

/// The state of one run of the checks.
pub(crate) struct Probe<'a> {
    target: &'a Target,
    client: client::Client,
    rows: BTreeMap<Check, Row>,
    learned: Learned,
    /// Why the remaining rows cannot run (the server is unreachable, the key refused).
    blocked: Option<String>,
    /// Whether a non-streamed / streamed answer carried usage.
    usage_plain: Option<bool>,
    usage_streamed: Option<bool>,
    /// Every raw `usage` object seen.
    usage_seen: Vec<Value>,
    /// The models list's status (for the key verdict).
    models_status: Option<u16>,
    /// The plain chat's status (for the key verdict).
    chat_status: Option<u16>,
    /// The call the forced check got back.
    forced_call: Option<ToolCall>,
}

impl<'a> Probe<'a> {
    fn set(&mut self, check: Check, status: Status, detail: impl Into<String>, took: Option<Duration>) {
        let ms = took.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.rows.insert(check, Row { check: check.id().to_string(), status, detail: detail.into(), ms });
    }

    /// `n/a` for `check` when the checks are blocked; true if so.
    fn blocked(&mut self, check: Check) -> bool {
        match self.blocked.clone() {
            Some(why) => {
                self.set(check, Status::NotApplicable, why, None);
                true
            }
            None => false,
        }
    }
}

/// Runs every check against `target`, in table order (some rows are decided
/// by later requests: the key's verdict also looks at the chat's status).
pub async fn check(target: &Target) -> Report {
    let mut rows = BTreeMap::new();
    let client = match client::Client::new(target) {
        Ok(client) => client,
        Err(e) => {
            for check in Check::ALL {
                let row = Row { check: check.id().into(), status: Status::No, detail: e.clone(), ms: None };
                rows.insert(check, row);
            }
            return finish(target, rows, Learned::default());
        }
    };
    let mut p = Probe {
        target,
        client,
        rows,
        learned: Learned::default(),
        blocked: None,
        usage_plain: None,
        usage_streamed: None,
        usage_seen: Vec::new(),
        models_status: None,
        chat_status: None,
        forced_call: None,
    };
    endpoint::reachable_and_models(&mut p).await;
    chat::plain(&mut p).await;
    endpoint::key(&mut p).await;
    chat::streaming(&mut p).await;
    tools::forced_call(&mut p).await;
    tools::result_back(&mut p).await;
    tools::streaming_with_tools(&mut p).await;
    chat::usage_rows(&mut p);
    extras::vision(&mut p).await;
    extras::fim(&mut p).await;
    // The same row on every wire: what keeps a load out of the cached prefix.
    if target.responses {
        tool_search::tool_search(&mut p).await;
    } else {
        deferred::deferred_tools(&mut p).await;
    }
    let Probe { rows, learned, .. } = p;
    finish(target, rows, learned)
}

fn finish(target: &Target, rows: BTreeMap<Check, Row>, learned: Learned) -> Report {
    let checked_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    Report {
        provider: target.provider.clone(),
        wire: target.wire.as_str().to_string(),
        base_url: target.base_url.clone(),
        model: target.model.clone(),
        tool_choice: target.tool_choice.clone(),
        checked_at,
        rows: rows.into_values().collect(),
        learned,
    }
}
