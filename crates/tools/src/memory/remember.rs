//! `remember`: appends a fact to the user's memory file, which outlives sessions
//! and workspaces. The file is the user's, outside any workspace, so writing it
//! needs no approval and is allowed in every mode (the tool's risk is `read`: it
//! never changes the project).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

const MAX_TEXT_CHARS: usize = 4000;
const MAX_TAGS: usize = 10;
const MAX_TAG_CHARS: usize = 32;

/// The memory tool; `file` pins the memory file (embedders, tests), otherwise it is
/// found from the environment on each call.
#[derive(Debug, Default, Clone)]
pub struct Remember {
    file: Option<PathBuf>,
}

impl Remember {
    pub fn at(file: impl Into<PathBuf>) -> Self {
        Remember { file: Some(file.into()) }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberInput {
    /// The fact to keep across sessions: a preference, convention or lesson.
    pub text: String,
    /// Short labels to find it by, e.g. ["build", "style"].
    #[serde(default)]
    pub tags: Option<Vec<String>>,
}

impl Tool for Remember {
    type Input = RememberInput;
    const NAME: &'static str = "remember";
    const DOMAIN: Domain = Domain::Memory;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS;

    fn description(&self) -> String {
        "Save a fact, preference or lesson to the user's long-term memory file (kept across sessions).".into()
    }

    async fn run(&self, input: RememberInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = input.text.trim();
        if text.is_empty() {
            return Err(ToolError::model("`text` is empty; say what to remember"));
        }
        let chars = text.chars().count();
        if chars > MAX_TEXT_CHARS {
            return Err(ToolError::model(format!(
                "`text` is {chars} characters; keep a memory under {MAX_TEXT_CHARS} (one fact per call)"
            )));
        }
        let tags = clean_tags(input.tags.unwrap_or_default())?;
        let file = match &self.file {
            Some(file) => file.clone(),
            None => memory_file(|k| std::env::var_os(k)).ok_or_else(|| {
                ToolError::model(
                    "no memory file location: set QUIVER_MEMORY_FILE or QUIVER_HOME (no home directory found)",
                )
            })?,
        };
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let entry = format_entry(&stamp, &tags, text);
        let bytes = entry.len();
        let target = file.clone();
        tokio::task::spawn_blocking(move || append(&target, entry.as_bytes()))
            .await
            .map_err(|e| ToolError::Fatal(e.into()))?
            .map_err(|e| ToolError::model(format!("cannot append to the memory file {}: {e}", file.display())))?;
        Ok(ToolOutput::text(format!("Remembered in {}.", file.display()))
            .with_meta("path", file.display().to_string())
            .with_meta("timestamp", stamp)
            .with_meta("tags", tags)
            .with_meta("bytes", bytes))
    }
}

/// `$QUIVER_MEMORY_FILE`, else `$QUIVER_HOME/memory.md`, else
/// `<config dir>/quiver/memory.md` (`~/.config/quiver/memory.md` on Linux), next
/// to the user's manifest overlay. `env` is injected so tests need not mutate the
/// process environment.
pub fn memory_file(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(file) = set("QUIVER_MEMORY_FILE") {
        return Some(PathBuf::from(file));
    }
    if let Some(home) = set("QUIVER_HOME") {
        return Some(PathBuf::from(home).join("memory.md"));
    }
    dirs::config_dir().map(|d| d.join("quiver").join("memory.md"))
}

fn clean_tags(raw: Vec<String>) -> Result<Vec<String>, ToolError> {
    if raw.len() > MAX_TAGS {
        return Err(ToolError::model(format!("at most {MAX_TAGS} `tags`, got {}", raw.len())));
    }
    let mut tags: Vec<String> = Vec::with_capacity(raw.len());
    for tag in raw {
        let tag = tag.trim().trim_start_matches('#').to_string();
        let valid = !tag.is_empty()
            && tag.chars().count() <= MAX_TAG_CHARS
            && tag.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':'));
        if !valid {
            return Err(ToolError::model(format!(
                "tag {tag:?} is not a short label: use 1-{MAX_TAG_CHARS} letters, digits or - _ . / : (no spaces)"
            )));
        }
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Ok(tags)
}

/// One Markdown list item; continuation lines are indented so a multi-line memory
/// stays one item.
fn format_entry(stamp: &str, tags: &[String], text: &str) -> String {
    let mut entry = format!("- {stamp}");
    if !tags.is_empty() {
        entry.push_str(&format!(" [{}]", tags.join(", ")));
    }
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            entry.push(' ');
        } else {
            entry.push_str("\n  ");
        }
        entry.push_str(line.trim_end());
    }
    entry.push('\n');
    entry
}

/// Appends with `O_APPEND` in a single `write`: the kernel places each write at
/// the end atomically, so concurrent sessions never interleave inside an entry.
/// The file is private to the user (0600; its folder 0700 when created here).
fn append(file: &Path, entry: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    let mut handle = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(file)?;
    handle.write_all(entry)
}

#[cfg(test)]
#[path = "remember_tests.rs"]
mod tests;
