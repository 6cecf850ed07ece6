//! What a check learned, kept per (base URL, model) in
//! `$QUIVER_STATE_DIR/providers/<hash>.json` (the whole report, so `quiver
//! providers check` can show it again), and read back when a provider is
//! built for that base URL and model (see `AgentConfig::build_provider`).
//!
//! Only what a check proved is kept, and only what makes the wire more
//! conservative: it never turns streaming on or images on. A stale entry is
//! harmless in the other direction too: the wire still falls back on its own
//! when a server it streams to cannot stream with tools.

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Report;
use crate::openai::ToolTurnContent;

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
        out
    }
}

mod tool_turns {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::openai::ToolTurnContent;

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

fn normalized(base_url: &str) -> &str {
    base_url.trim_end_matches('/')
}

/// The cache file of (base URL, model, `tool_choice` setting) under the
/// state directory (the setting changes what the server does with tools).
pub fn cache_path(base_url: &str, model: &str, tool_choice: Option<&str>) -> Option<PathBuf> {
    let dir = crate::places::state_dir()?.join("providers");
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

/// The cached report of (base URL, model, `tool_choice`), if any (an
/// unreadable or foreign file is none).
pub fn load(base_url: &str, model: &str, tool_choice: Option<&str>) -> Option<Report> {
    let text = std::fs::read_to_string(cache_path(base_url, model, tool_choice)?).ok()?;
    let report: Report = serde_json::from_str(&text).ok()?;
    let same = normalized(&report.base_url) == normalized(base_url)
        && report.model == model
        && report.tool_choice.as_deref() == tool_choice;
    same.then_some(report)
}

/// What the wire should use for (base URL, model, `tool_choice`): the cached
/// report's, or nothing.
pub fn learned_for(base_url: &str, model: &str, tool_choice: Option<&str>) -> Learned {
    load(base_url, model, tool_choice).map(|r| r.learned).unwrap_or_default()
}

/// Writes `report` to its cache file atomically; returns the path.
pub fn store(report: &Report) -> std::io::Result<PathBuf> {
    let path = cache_path(&report.base_url, &report.model, report.tool_choice.as_deref())
        .ok_or_else(|| std::io::Error::other("no state directory: set QUIVER_STATE_DIR"))?;
    let dir = path.parent().ok_or_else(|| std::io::Error::other("the cache path has no directory"))?;
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}
