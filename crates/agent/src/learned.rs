//! What `quiver providers check` learned about a server and the wire then
//! uses: the cached entry of (base URL, model, `tool_choice`) under the state
//! directory. A leaf of the crate (the wires and the config read it; the
//! probe in `crate::probe` writes it), so it reads only the `learned` part of
//! a cached report.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::deferred::DeferredTools;

/// What the `content` of an assistant turn that only calls tools is sent as.
///
/// The OpenAI spec makes `content` "required unless `tool_calls` or
/// `function_call` is specified", so leaving it out is the documented form,
/// and it is what every server we know of accepts: vLLM and LM Studio validate
/// against the OpenAI types (content optional), Ollama treats a missing
/// content as empty, llama.cpp's server only requires "'content' or
/// 'tool_calls'". `null` (what OpenAI's own answers carry) is refused by
/// llama-cpp-python (its request validation wants a string: HTTP 500) and by
/// chat templates that test `content is string`. A server that wants the key
/// anyway says so naming `content`; the provider then switches to `Empty`
/// (a string every validator accepts), then `Null`, and keeps the shape that
/// worked for the rest of the session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolTurnContent {
    #[default]
    Omit,
    Empty,
    Null,
}

impl ToolTurnContent {
    /// The next shape to try after a server refused this one naming `content`.
    pub fn next(self) -> Option<Self> {
        match self {
            ToolTurnContent::Omit => Some(ToolTurnContent::Empty),
            ToolTurnContent::Empty => Some(ToolTurnContent::Null),
            ToolTurnContent::Null => None,
        }
    }
}

/// The behaviours the wire takes from a check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    /// `Some(false)`: the server cannot stream (an empty or broken stream, or it said so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// `Some(false)`: it cannot stream a request that has tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_with_tools: Option<bool>,
    /// The `content` of a tool-only assistant turn it accepts, when not the default (left out).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "tool_turns")]
    pub tool_turn_content: Option<ToolTurnContent>,
    /// `Some(false)`: a request with an image is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Messages wire: `Some(false)`: `defer_loading` is refused, or accepted
    /// and the deferred definition counted as prompt (measured by the input
    /// tokens); `Some(true)`: it was kept out (kept for the record: unset,
    /// only Anthropic's own API defers, see `AnthropicProvider::with_deferred_tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_tools: Option<bool>,
    /// Responses wire: `Some(false)`: the client-executed `tool_search` tool
    /// (or its `tool_search_output`) is refused; `Some(true)`: a tool only
    /// its output delivered was called (kept for the record: the model id
    /// decides, see `responses::client_tool_search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_search: Option<bool>,
}

impl Learned {
    /// What quiver does differently for this server, one phrase each.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.stream == Some(false) {
            out.push("nothing is streamed".to_string());
        } else if self.stream_with_tools == Some(false) {
            out.push("requests with tools are sent without streaming".to_string());
        }
        match self.tool_turn_content {
            Some(ToolTurnContent::Empty) => out.push("tool-only assistant turns carry `content: \"\"`".into()),
            Some(ToolTurnContent::Null) => out.push("tool-only assistant turns carry `content: null`".into()),
            Some(ToolTurnContent::Omit) | None => {}
        }
        if self.vision == Some(false) {
            out.push("tool images reach the model as text stand-ins".to_string());
        }
        if self.deferred_tools == Some(false) {
            out.push(
                "loaded tools are appended to `tools` (the server does not keep deferred tools out of the prompt)"
                    .to_string(),
            );
        }
        if self.tool_search == Some(false) {
            out.push(
                "`tool_search` is sent as an ordinary function and loaded tools are appended to `tools` (the server \
                 refused the client-executed tool search)"
                    .to_string(),
            );
        }
        out
    }

    /// The Responses wire's client tool search: off when the check found
    /// the server refuses it, else the model decides.
    pub fn client_tool_search(&self) -> Option<bool> {
        (self.tool_search == Some(false)).then_some(false)
    }

    /// The Messages wire's `deferred_tools` mode: the setting when there is
    /// one, else `append` when the check found the server does not keep
    /// deferred tools out, else unset (the wire's default by base URL).
    pub fn deferred_mode(&self, setting: Option<DeferredTools>) -> Option<DeferredTools> {
        setting.or((self.deferred_tools == Some(false)).then_some(DeferredTools::Append))
    }
}

mod tool_turns {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::ToolTurnContent;

    pub fn serialize<S: Serializer>(value: &Option<ToolTurnContent>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(ToolTurnContent::Omit) | None => s.serialize_str("omit"),
            Some(ToolTurnContent::Empty) => s.serialize_str("empty"),
            Some(ToolTurnContent::Null) => s.serialize_str("null"),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ToolTurnContent>, D::Error> {
        Ok(match Option::<String>::deserialize(d)?.as_deref() {
            Some("empty") => Some(ToolTurnContent::Empty),
            Some("null") => Some(ToolTurnContent::Null),
            Some("omit") => Some(ToolTurnContent::Omit),
            _ => None,
        })
    }
}

pub(crate) fn normalized(base_url: &str) -> &str {
    base_url.trim_end_matches('/')
}

/// The cache file of (base URL, model, `tool_choice` setting) under the
/// state directory (the setting changes what the server does with tools).
pub fn cache_path(base_url: &str, model: &str, tool_choice: Option<&str>) -> Option<PathBuf> {
    let dir = crate::state::state_dir()?.join("providers");
    let mut hash = Sha256::new();
    hash.update(normalized(base_url).as_bytes());
    hash.update([0]);
    hash.update(model.as_bytes());
    if let Some(choice) = tool_choice {
        hash.update([0]);
        hash.update(choice.as_bytes());
    }
    let hex = hex::encode(hash.finalize());
    Some(dir.join(format!("{}.json", &hex[..16])))
}

/// The part of a cached report the wire needs.
#[derive(Deserialize)]
struct Cached {
    base_url: String,
    model: String,
    #[serde(default)]
    tool_choice: Option<String>,
    #[serde(default)]
    learned: Learned,
}

/// What the wire should use for (base URL, model, `tool_choice`): the cached
/// report's, or nothing (an unreadable or foreign file is nothing).
pub fn learned_for(base_url: &str, model: &str, tool_choice: Option<&str>) -> Learned {
    let Some(text) = cache_path(base_url, model, tool_choice).and_then(|p| std::fs::read_to_string(p).ok()) else {
        return Learned::default();
    };
    match serde_json::from_str::<Cached>(&text) {
        Ok(c)
            if normalized(&c.base_url) == normalized(base_url)
                && c.model == model
                && c.tool_choice.as_deref() == tool_choice =>
        {
            c.learned
        }
        _ => Learned::default(),
    }
}
