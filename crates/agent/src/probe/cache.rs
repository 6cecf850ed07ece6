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

use super::Report;
use crate::learned::normalized;
pub use crate::learned::{Learned, cache_path, learned_for};

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
