//! Append-only session transcripts (JSONL, one event per line, flushed per
//! event) and a reader that survives a torn last line: whatever was written
//! before a crash is read back, and the torn tail is reported, not fatal.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::result::ToolResult;
use crate::session::{LazyToolState, Session};

pub const TRANSCRIPT_VERSION: u32 = 1;

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStart {
        version: u32,
        session: String,
        quiver_version: String,
        workspace: String,
        provider: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        mode: String,
    },
    Message {
        role: String,
        content: Value,
    },
    ToolCall {
        call_id: String,
        name: String,
        arguments: Value,
    },
    ToolResult {
        call_id: String,
        name: String,
        result: ToolResult,
    },
    /// Tools that entered the catalog tail (by search, discovery or direct call).
    Load {
        turn: u64,
        names: Vec<String>,
    },
    Unload {
        names: Vec<String>,
    },
    /// A `tool_search` and what it loaded.
    Search {
        turn: u64,
        query: String,
        loaded: Vec<String>,
    },
    /// Context compaction: the tail starts empty again. The estimated
    /// request size before and after (absent in transcripts from before they
    /// were recorded).
    Compaction {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before_tokens: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_tokens: Option<u64>,
    },
    /// One request to a model (the agent loop's). What `quiver audit` reads:
    /// the request's size and how much of it repeats the previous request's
    /// bytes (what a provider's prefix cache can serve), the head's hash
    /// (which must never change within a session) and the usage reported.
    /// Hashes and sizes only: a request body can carry secrets from files.
    ModelRequest {
        turn: u64,
        /// `sha256:<hex>` of the request's canonical linearization.
        request_hash: String,
        bytes: u64,
        /// Bytes shared with the previous request's linearization; absent for
        /// the first request of a process (a new or resumed session).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shared_prefix_bytes: Option<u64>,
        /// Whether tools and messages only append to the previous request's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extends_previous: Option<bool>,
        head_hash: String,
        tools: u64,
        /// The catalog tail (loaded tools) sent with this request.
        #[serde(default)]
        tail: Vec<String>,
        /// The provider's usage for this request (tokens, cache hits), when it answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Value>,
        /// The order the provider's prefix cache reads a request in, which
        /// `bytes` and `shared_prefix_bytes` follow (e.g. Anthropic's
        /// `tools(not deferred)>system>messages`); absent in older transcripts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_order: Option<String>,
    },
}

/// Appends events; each is one line, written and flushed before `append` returns.
pub struct TranscriptWriter {
    path: PathBuf,
    file: Mutex<File>,
    next_call: std::sync::atomic::AtomicU64,
}

impl TranscriptWriter {
    /// Opens for appending (creating the file and its directory if needed).
    pub fn open(path: impl AsRef<Path>) -> anyhow::Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .with_context(|| format!("opening transcript {}", path.display()))?;
        // A crash can leave a torn last line; start on a fresh line so the next
        // event is not glued onto it.
        if ends_mid_line(&mut file)? {
            file.write_all(b"\n")?;
        }
        // A reopened transcript continues its call numbering, so a resumed
        // session never reuses an id that already has a recorded result.
        let last_call = Transcript::read(&path)
            .map(|t| {
                t.events
                    .iter()
                    .filter_map(|e| match e {
                        Event::ToolCall { call_id, .. } => call_id.strip_prefix("call_")?.parse::<u64>().ok(),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        Ok(TranscriptWriter { path, file: Mutex::new(file), next_call: std::sync::atomic::AtomicU64::new(last_call) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&self, event: &Event) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(event)?;
        line.push('\n');
        let mut file = self.file.lock();
        // One write call per line keeps concurrent appenders from interleaving.
        file.write_all(line.as_bytes()).with_context(|| format!("appending to {}", self.path.display()))?;
        file.flush()?;
        Ok(())
    }

    /// A fresh call id for a tool call recorded by this writer.
    pub fn next_call_id(&self) -> String {
        let n = self.next_call.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        format!("call_{n}")
    }
}

fn ends_mid_line(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// A transcript read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    pub events: Vec<Event>,
    /// A last line cut short (a crash mid-write): its 1-based line number and text.
    pub torn_tail: Option<(usize, String)>,
    /// Unreadable lines before the end (a torn line that a resumed session
    /// wrote past): reported and skipped, never fatal.
    pub damaged: Vec<(usize, String)>,
}

impl Transcript {
    /// Reads a transcript. A damaged last line is the torn tail a crash leaves;
    /// damaged lines elsewhere are collected in `damaged`. Either way every
    /// readable event is kept.
    pub fn read(path: impl AsRef<Path>) -> anyhow::Result<Transcript> {
        let path = path.as_ref();
        let file = File::open(path).with_context(|| format!("opening transcript {}", path.display()))?;
        let mut lines: Vec<(usize, String, bool)> = Vec::new();
        let mut reader = BufReader::new(file);
        let mut buf = Vec::new();
        let mut n = 0;
        loop {
            buf.clear();
            let read = reader.read_until(b'\n', &mut buf)?;
            if read == 0 {
                break;
            }
            n += 1;
            let complete = buf.ends_with(b"\n");
            let text = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
            lines.push((n, text, complete));
        }
        let mut transcript = Transcript::default();
        let last = lines.len();
        for (i, (line_no, text, complete)) in lines.into_iter().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Event>(&text) {
                Ok(event) if complete || i + 1 < last => transcript.events.push(event),
                // A last line without its newline parsed fine: the write finished
                // except for the newline; keep it.
                Ok(event) => transcript.events.push(event),
                Err(_) if i + 1 == last => transcript.torn_tail = Some((line_no, text)),
                Err(_) => transcript.damaged.push((line_no, text)),
            }
        }
        Ok(transcript)
    }

    pub fn start(&self) -> Option<&Event> {
        self.events.iter().find(|e| matches!(e, Event::SessionStart { .. }))
    }

    /// The loaded-tool state at the end of the transcript, for resuming.
    pub fn lazy_state(&self) -> LazyToolState {
        let session = Session::new("replay");
        for event in &self.events {
            match event {
                Event::Load { turn, names } => {
                    while session.turn() < *turn {
                        session.advance_turn();
                    }
                    session.load(names);
                }
                Event::Unload { names } => names.iter().for_each(|n| {
                    session.unload(n);
                }),
                Event::Compaction { .. } => session.reset_loads(),
                Event::Search { query, loaded, .. } => session.record_search(query, loaded.clone()),
                _ => {}
            }
        }
        session.lazy_state()
    }

    /// Recorded tool calls paired with their results, in call order.
    pub fn calls(&self) -> Vec<(&str, &Value, Option<&ToolResult>, &str)> {
        let mut out = Vec::new();
        for event in &self.events {
            if let Event::ToolCall { call_id, name, arguments } = event {
                let result = self.events.iter().find_map(|e| match e {
                    Event::ToolResult { call_id: id, result, .. } if id == call_id => Some(result),
                    _ => None,
                });
                out.push((name.as_str(), arguments, result, call_id.as_str()));
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
