//! The provider-neutral conversation: what the turn loop keeps as history and
//! what every wire (OpenAI-compatible, Anthropic) renders into its own shape.
//!
//! Tool-call arguments stay the raw JSON string the model sent: re-serializing
//! them would change bytes the provider already cached, and a model that sent
//! invalid JSON must see its own text back next to the error it caused.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as streamed/sent by the model (may be invalid JSON).
    pub arguments: String,
}

/// An image a tool returned (an MCP `image` block): vision-capable models are
/// shown it next to the tool's text, others read the text stand-in only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolImage {
    pub mime_type: String,
    /// Base64, as the block carried it.
    pub data: String,
}

/// One conversation entry. The system prompt is normally `ModelRequest::system`;
/// a `System` message exists for hosts that interleave instructions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        text: String,
    },
    User {
        text: String,
    },
    Assistant {
        text: String,
        /// DeepSeek `reasoning_content` / Anthropic thinking. Never the answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// Anthropic's signature over the thinking block; it must come back
        /// with the thinking for a tool-use turn to be accepted. On the
        /// Responses wire: the response's reasoning items (with their
        /// `encrypted_content`) as a canonical JSON array, passed back verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_signature: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        call_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ToolImage>,
        /// Deferred tools this call loaded (a `tool_search`), in load order.
        /// A wire that defers tools (Anthropic's `defer_loading`) references
        /// them here, where the model loaded them, instead of growing the
        /// tool list: the prompt prefix stays as it was.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        loaded: Vec<String>,
    },
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    pub fn assistant_text(text: impl Into<String>) -> Self {
        Message::Assistant { text: text.into(), reasoning: None, reasoning_signature: None, tool_calls: Vec::new() }
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            content: content.into(),
            is_error,
            images: Vec::new(),
            loaded: Vec::new(),
        }
    }

    /// The assistant turn a response becomes in the history.
    pub fn from_response(response: &ModelResponse) -> Self {
        Message::Assistant {
            text: response.text.clone(),
            reasoning: response.reasoning.clone(),
            reasoning_signature: response.reasoning_signature.clone(),
            tool_calls: response.tool_calls.clone(),
        }
    }
}

/// How hard the model should think. Sent only when set: OpenAI rejects
/// `reasoning_effort` on models that do not reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// One model call. `tools` is already rendered by the engine's catalog in the
/// wire's format (head first, then tail), so its bytes are the engine's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    /// A JSON array of tool definitions (or `Null`/empty for none).
    pub tools: Value,
    /// How many entries of `tools` are the head (the cached, never-changing part).
    pub head_len: usize,
    /// Every deferred tool the session may load, rendered for the wire, in an
    /// order stable for the session; empty unless the provider sends deferred
    /// tools up front (`deferred_tools = "defer"`, see [`crate::deferred`]).
    pub deferred_tools: Vec<Value>,
    pub max_output_tokens: Option<u32>,
    pub effort: Option<Effort>,
    pub stream: bool,
    /// A key stable for the session, for providers that route requests to
    /// their prefix caches by one (the Responses API's `prompt_cache_key`);
    /// see [`prompt_cache_key`].
    pub cache_key: Option<String>,
}

/// The cache-routing key of a session: OpenAI routes a request by a hash of
/// its first ~256 tokens combined with `prompt_cache_key`, so one key per
/// session keeps its requests (whose conversations share ever longer
/// prefixes) on the machines holding them. A digest of the session id, not
/// the id itself (nothing that identifies the session leaves the machine),
/// and shorter than the API's 64-character limit.
pub fn prompt_cache_key(session_id: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(Sha256::digest(session_id.as_bytes()));
    format!("quiver-{}", &digest[..32])
}

impl ModelRequest {
    pub fn new(model: impl Into<String>) -> Self {
        ModelRequest {
            model: model.into(),
            system: String::new(),
            messages: Vec::new(),
            tools: Value::Array(Vec::new()),
            head_len: 0,
            deferred_tools: Vec::new(),
            max_output_tokens: None,
            effort: None,
            stream: true,
            cache_key: None,
        }
    }

    pub fn tool_list(&self) -> &[Value] {
        self.tools.as_array().map(Vec::as_slice).unwrap_or_default()
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    /// Anything else the provider said, kept verbatim.
    Other(String),
}

impl FinishReason {
    /// Maps both wires' names (`tool_calls`/`tool_use`, `length`/`max_tokens`, ...).
    pub fn from_wire(s: &str) -> Self {
        match s {
            "stop" | "end_turn" | "stop_sequence" => FinishReason::Stop,
            "tool_calls" | "tool_use" | "function_call" => FinishReason::ToolCalls,
            "length" | "max_tokens" => FinishReason::Length,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

/// Token accounting, with the prefix-cache split both wires report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every prompt token, cached or not.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's prefix cache.
    pub cache_hit_tokens: u64,
    /// Prompt tokens not served from cache (DeepSeek reports them; derived elsewhere).
    pub cache_miss_tokens: u64,
    /// Prompt tokens written into the cache (Anthropic's cache creation).
    pub cache_write_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_hit_tokens += other.cache_hit_tokens;
        self.cache_miss_tokens += other.cache_miss_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// The result of one call; identical in shape whether it was streamed or not.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub text: String,
    pub reasoning: Option<String>,
    pub reasoning_signature: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    /// The provider's token counts; all zero when `usage_reported` is false.
    pub usage: Usage,
    /// Whether the answer carried usage at all. Some servers (llama.cpp's
    /// Python server streaming, proxies) send none: that is "unknown", not 0.
    pub usage_reported: bool,
}

impl ModelResponse {
    /// The usage when the provider reported it.
    pub fn reported_usage(&self) -> Option<Usage> {
        self.usage_reported.then_some(self.usage)
    }
}

/// What a streaming call reports as it goes (a non-streaming call reports the
/// same events at once, so a UI needs one code path).
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// A tool call began; `index` is its position in this response.
    ToolCallBegin {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallArgumentsDelta {
        index: usize,
        fragment: String,
    },
    /// A retryable failure; the call is tried again after `wait`.
    Retrying {
        attempt: u32,
        wait: std::time::Duration,
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::Effort;

    #[test]
    fn strum_names_are_the_serde_names() {
        quiver_testkit::assert_strum_matches_serde::<Effort>();
        for effort in Effort::VARIANTS {
            assert_eq!(Effort::parse(effort.as_str()), Some(*effort));
        }
        assert_eq!(Effort::parse("Low"), None, "config values are lowercase, as before");
    }
}
