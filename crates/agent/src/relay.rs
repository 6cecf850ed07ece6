//! The session relay (`quiver relay`, `/relay` in the interactive agent): a compact Markdown hand-off,
//! `# Session relay`, that lets a fresh session pick up where another stopped.
//! `quiver relay [focus]` asks the model to write one from a recorded
//! session; compaction writes one as a side effect; `quiver exec --from-relay`
//! starts from it.
//!
//! The model writes the prose, quiver owns the shape: [`document`] puts the
//! sections in a fixed order and fills any the model left out from what the
//! transcript proves (files the write tools touched, the checklist's open item,
//! the last verification results), so a relay is never missing a section a
//! reader looks for.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::message::Message;

/// Where the relay lives, relative to the workspace root.
pub const RELAY_FILE: &str = ".quiver/handoff.md";
pub const HEADING: &str = "# Session relay";
/// The sections, in the order a relay lists them.
pub const SECTIONS: [&str; 6] =
    ["Goal", "Current checklist item", "Changed files", "Decisions", "Verification state", "Next action"];
/// A relay larger than this is not a relay; `--from-relay` refuses it rather
/// than paste a transcript into a fresh session.
pub const MAX_RELAY_BYTES: usize = 64 * 1024;

/// The instruction that asks the model for a relay. Compaction sends it with
/// no focus, so its bytes are stable for the prefix cache.
pub fn instruction(focus: Option<&str>) -> String {
    let mut text = String::from(
        "Do not call any tool. Write a session relay in Markdown: the heading `# Session relay`, then \
exactly these `##` sections: Goal; Current checklist item; Changed files; Decisions; Verification state; \
Next action (one concrete step). Be complete but brief: the relay is all the next session will know.",
    );
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        text.push_str(&format!(" Focus the relay on: {focus}"));
    }
    text
}

/// What the transcript proves, used where the model's relay is silent.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Facts {
    pub goal: Option<String>,
    /// Workspace-relative paths the write tools were called on, first touch first.
    pub changed_files: Vec<String>,
    /// The first checklist item not completed, from the last checklist write.
    pub checklist_item: Option<String>,
    /// The last result of each verification tool call (name: first line).
    pub verification: Vec<String>,
}

impl Facts {
    pub fn from_messages(messages: &[Message]) -> Facts {
        let mut facts = Facts::default();
        let mut calls: Vec<(String, String, Value)> = Vec::new();
        for message in messages {
            match message {
                Message::User { text } if facts.goal.is_none() => facts.goal = Some(first_paragraph(text)),
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls {
                        let args = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                        calls.push((call.id.clone(), call.name.clone(), args));
                    }
                }
                Message::Tool { call_id, content, is_error, .. } => {
                    let Some((_, name, args)) = calls.iter().find(|(id, _, _)| id == call_id) else { continue };
                    facts.note_call(name, args, content, *is_error);
                }
                _ => {}
            }
        }
        facts
    }

    fn note_call(&mut self, name: &str, args: &Value, content: &str, is_error: bool) {
        match name {
            "write_file" | "edit_file" | "fim_edit" if !is_error => {
                if let Some(path) = args["path"].as_str() {
                    self.touch(path);
                }
            }
            "apply_patch" if !is_error => {
                let patch = args["patch"].as_str().or_else(|| args["input"].as_str()).unwrap_or_default();
                for path in patched_paths(patch) {
                    self.touch(&path);
                }
            }
            "checklist_write" => {
                if let Some(items) = args["items"].as_array() {
                    self.checklist_item = items
                        .iter()
                        .find(|i| i["status"].as_str() != Some("completed"))
                        .and_then(|i| i["content"].as_str().or_else(|| i["text"].as_str()))
                        .map(str::to_string);
                }
            }
            "run_tests" | "task_gate_run" | "task_shell_wait"
                if !(name == "task_shell_wait" && args["gate"].is_null()) =>
            {
                let line = content.lines().find(|l| !l.trim().is_empty()).unwrap_or("(no output)");
                let line: String = line.chars().take(160).collect();
                let entry = format!("{name}: {}{line}", if is_error { "error: " } else { "" });
                self.verification.retain(|v| !v.starts_with(&format!("{name}:")));
                self.verification.push(entry);
            }
            _ => {}
        }
    }

    fn touch(&mut self, path: &str) {
        if !self.changed_files.iter().any(|p| p == path) {
            self.changed_files.push(path.to_string());
        }
    }

    /// The section's text when the model gave none.
    fn fallback(&self, section: &str) -> String {
        let none = "(none recorded)".to_string();
        match section {
            "Goal" => self.goal.clone().unwrap_or(none),
            "Current checklist item" => self.checklist_item.clone().unwrap_or(none),
            "Changed files" if !self.changed_files.is_empty() => {
                self.changed_files.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n")
            }
            "Verification state" if !self.verification.is_empty() => {
                self.verification.iter().map(|v| format!("- {v}")).collect::<Vec<_>>().join("\n")
            }
            _ => none,
        }
    }
}

fn first_paragraph(text: &str) -> String {
    let para = text.trim().split("\n\n").next().unwrap_or_default();
    let mut out: String = para.chars().take(600).collect();
    if out.len() < para.len() {
        out.push('…');
    }
    out
}

/// Paths a unified diff (or a `*** Update File:` style patch) changes.
fn patched_paths(patch: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for line in patch.lines() {
        let path = if let Some(rest) = line.strip_prefix("+++ ") {
            rest.split('\t').next().unwrap_or_default().trim().trim_start_matches("b/")
        } else if let Some(rest) =
            ["*** Update File: ", "*** Add File: ", "*** Delete File: "].iter().find_map(|p| line.strip_prefix(p))
        {
            rest.trim()
        } else {
            continue;
        };
        if !path.is_empty() && path != "/dev/null" && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

/// The relay document: the model's sections in [`SECTIONS`] order (matched by
/// title, case-insensitively), each missing one filled from `facts`, and any
/// extra section the model wrote kept after them.
pub fn document(model_text: &str, facts: &Facts) -> String {
    let (sections, loose) = split_sections(model_text);
    let mut out = String::from(HEADING);
    out.push('\n');
    if !loose.trim().is_empty() && sections.is_empty() {
        // No sections at all: keep what the model said, under the shape.
        out.push_str(&format!("\n{}\n", loose.trim()));
    }
    for title in SECTIONS {
        let body = sections
            .iter()
            .find(|(t, _)| normalize(t) == normalize(title))
            .map(|(_, b)| b.trim().to_string())
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| facts.fallback(title));
        out.push_str(&format!("\n## {title}\n{body}\n"));
    }
    for (title, body) in &sections {
        if !SECTIONS.iter().any(|s| normalize(s) == normalize(title)) && !body.trim().is_empty() {
            out.push_str(&format!("\n## {}\n{}\n", title.trim(), body.trim()));
        }
    }
    out
}

fn normalize(title: &str) -> String {
    title.trim().trim_end_matches(':').to_lowercase()
}

/// `## Title` sections after the heading; text before the first section (and
/// not the heading itself) is returned as the loose part.
fn split_sections(text: &str) -> (Vec<(String, String)>, String) {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut loose = String::new();
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            sections.push((title.to_string(), String::new()));
        } else if line.trim_start().starts_with("# ") && line.to_lowercase().contains("session relay") {
            continue;
        } else if let Some((_, body)) = sections.last_mut() {
            body.push_str(line);
            body.push('\n');
        } else {
            loose.push_str(line);
            loose.push('\n');
        }
    }
    (sections, loose)
}

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("no relay at {0}: write one with `quiver relay` (or let a long session compact)")]
    Missing(PathBuf),
    #[error("{path} is not a session relay: it must start with `{HEADING}`")]
    NotARelay { path: PathBuf },
    #[error("{path} is {bytes} bytes; a relay is at most {MAX_RELAY_BYTES} bytes")]
    TooLarge { path: PathBuf, bytes: u64 },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0} is a symbolic link; quiver writes the relay only to a plain file inside the workspace")]
    Symlink(PathBuf),
}

/// Reads and checks a relay for `--from-relay`.
pub fn read(path: &Path) -> Result<String, RelayError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RelayError::Missing(path.to_path_buf())),
        Err(source) => return Err(RelayError::Io { path: path.to_path_buf(), source }),
    };
    if meta.len() > MAX_RELAY_BYTES as u64 {
        return Err(RelayError::TooLarge { path: path.to_path_buf(), bytes: meta.len() });
    }
    let text = std::fs::read_to_string(path).map_err(|source| RelayError::Io { path: path.to_path_buf(), source })?;
    if !text.trim_start().starts_with(HEADING) {
        return Err(RelayError::NotARelay { path: path.to_path_buf() });
    }
    Ok(text)
}

/// The first user message of a session started from a relay.
pub fn start_prompt(relay: &str, prompt: Option<&str>) -> String {
    let ask = prompt
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or("Continue the work: check the state the relay describes, then take its next action.");
    format!("This session continues earlier work, handed over in the relay below.\n\n{}\n\n{ask}", relay.trim())
}

/// Writes the relay to `root/.quiver/handoff.md`, atomically (a reader sees
/// the old relay or the new one, never half). A `.quiver` or `handoff.md`
/// that is a symbolic link is refused: a cloned repository must not be able
/// to point quiver's write somewhere else.
pub fn write(root: &Path, text: &str) -> Result<PathBuf, RelayError> {
    let dir = root.join(".quiver");
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => return Err(RelayError::Symlink(dir)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir(&dir).map_err(|source| RelayError::Io { path: dir.clone(), source })?;
        }
        Err(source) => return Err(RelayError::Io { path: dir, source }),
    }
    let path = root.join(RELAY_FILE);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(RelayError::Symlink(path));
    }
    let io = |source| RelayError::Io { path: path.clone(), source };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    // rename() replaces the name, never follows a link planted after the check.
    tmp.persist(&path).map_err(|e| io(e.error))?;
    Ok(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "relay_tests.rs"]
mod tests;

/// Asks the model for a relay of `history` (with `focus`, if any) and builds
/// the document. No tools go with the request: the relay is prose about the
/// session, never more work. `system` is the session's own system prompt (the
/// request then shares the conversation's prefix). An empty answer is an error.
pub async fn ask(
    provider: &dyn crate::provider::Provider,
    system: &str,
    model: &str,
    max_output_tokens: Option<u32>,
    history: &[Message],
    focus: Option<&str>,
) -> Result<String, String> {
    let mut messages = history.to_vec();
    messages.push(Message::user(instruction(focus)));
    let request = crate::message::ModelRequest {
        model: model.to_string(),
        system: system.to_string(),
        messages,
        tools: serde_json::Value::Array(Vec::new()),
        head_len: 0,
        deferred_tools: Vec::new(),
        max_output_tokens,
        effort: None,
        stream: true,
        cache_key: None,
    };
    let mut ignore = |_| {};
    let response = provider.complete(&request, &mut ignore).await.map_err(|e| e.to_string())?;
    if response.text.trim().is_empty() {
        return Err("the model answered with an empty relay; nothing written".into());
    }
    Ok(document(&response.text, &Facts::from_messages(history)))
}
