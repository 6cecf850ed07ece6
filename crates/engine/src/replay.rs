//! Replay: re-dispatch every recorded call of a transcript, in order, in a
//! scratch copy of a workspace, and compare each result with the recorded one.
//! This is the executable form of the promise that old names keep working.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use serde_json::Value;

use crate::audience::Audience;
use crate::canonical;
use crate::engine::Engine;
use crate::lifecycle::Resolution;
use crate::manifest::AliasState;
use crate::permissions::Mode;
use crate::session::Session;
use crate::transcript::{Event, Transcript};
use crate::workspace::Workspace;

/// Metadata keys whose values legitimately change run to run.
const VOLATILE_KEYS: &[&str] =
    &["duration_ms", "elapsed_ms", "started_at", "finished_at", "timestamp", "mtime", "modified", "pid"];

/// Words results used for arguments before one vocabulary (see
/// `input_alias.rs`), read as today's on both sides. A result recorded then
/// says "poll it with exec_shell_wait {"task_id": ...}" where one now says
/// `job_id`: the tool did the same thing, only the word changed. (Both sides
/// are rewritten, so `task_id` and `job_id` are one word to a comparison.)
const FORMER_WORDS: &[(&str, &str)] = &[
    ("task_id", "job_id"),
    // Shell jobs were `task-N` (a durable task's id) before they were `job-N`.
    ("task-", "job-"),
    ("max_results", "limit"),
    ("max_entries", "limit"),
    ("continue with start=", "continue with offset="),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Identical,
    /// A unified diff of the normalized recorded and replayed results.
    Differs(String),
    /// The call could not be replayed (a fatal tool error).
    Failed(String),
    /// The transcript holds the call but not its result (it was cut off).
    NoRecordedResult,
}

#[derive(Debug, Clone)]
pub struct CallReplay {
    pub index: usize,
    pub name: String,
    /// `Some((replacement, state))` when the name is an alias.
    pub alias_of: Option<(String, AliasState)>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Default)]
pub struct ReplayReport {
    pub calls: Vec<CallReplay>,
}

impl ReplayReport {
    pub fn count(&self, f: impl Fn(&Verdict) -> bool) -> usize {
        self.calls.iter().filter(|c| f(&c.verdict)).count()
    }

    pub fn all_identical(&self) -> bool {
        self.calls.iter().all(|c| c.verdict == Verdict::Identical)
    }
}

/// Replays `transcript` against `engine` in `scratch` (already a copy). The
/// transcript's recorded mode is used only up to `max_mode`: a transcript file
/// is input like any other and must not grant itself `yolo`.
pub async fn replay(
    engine: Arc<Engine>,
    transcript: &Transcript,
    scratch: Workspace,
    max_mode: Mode,
) -> anyhow::Result<ReplayReport> {
    let (audience, recorded_root) = match transcript.start() {
        Some(Event::SessionStart { provider, model, mode, workspace, .. }) => {
            let mode = lower(mode.parse().unwrap_or_default(), max_mode);
            (Audience { provider: provider.clone(), model: model.clone(), mode }, workspace.clone())
        }
        _ => (Audience { mode: lower(Mode::Agent, max_mode), ..Audience::default() }, String::new()),
    };
    let scratch_root = scratch.root().to_string_lossy().into_owned();
    let mut ctx = engine.context(scratch, audience);
    ctx.session = Arc::new(Session::new("replay"));
    let roots: Vec<&str> =
        [recorded_root.as_str(), scratch_root.as_str()].into_iter().filter(|r| !r.is_empty()).collect();

    let mut report = ReplayReport::default();
    for (i, (name, args, recorded, _)) in transcript.calls().into_iter().enumerate() {
        // Searches advance turns in a live session; mirror that so load turns match.
        ctx.session.advance_turn();
        let alias_of = match engine.lifecycle().resolve(name, engine.registry()) {
            Resolution::Alias { entry, .. } | Resolution::Removed { entry, .. } => {
                Some((entry.replacement.clone(), entry.state))
            }
            _ => None,
        };
        let verdict = match engine.dispatch(name, args.clone(), &ctx).await {
            Err(e) => Verdict::Failed(format!("{e:#}")),
            Ok(result) => match recorded {
                None => Verdict::NoRecordedResult,
                Some(recorded) => {
                    let want = normalize(&serde_json::to_value(recorded)?, &roots);
                    let got = normalize(&serde_json::to_value(&result)?, &roots);
                    if want == got { Verdict::Identical } else { Verdict::Differs(diff(&want, &got)) }
                }
            },
        };
        report.calls.push(CallReplay { index: i + 1, name: name.to_string(), alias_of, verdict });
    }
    Ok(report)
}

/// The more restrictive of two modes (plan < agent < yolo).
fn lower(a: Mode, b: Mode) -> Mode {
    let rank = |m: Mode| match m {
        Mode::Plan => 0,
        Mode::Agent => 1,
        Mode::Yolo => 2,
    };
    if rank(a) <= rank(b) { a } else { b }
}

/// Blanks volatile fields and rewrites workspace and temp paths, so two runs
/// of the same call compare equal when they did the same thing.
pub fn normalize(value: &Value, roots: &[&str]) -> Value {
    let tmp = std::env::temp_dir().to_string_lossy().trim_end_matches('/').to_string();
    normalize_inner(value, roots, &tmp)
}

fn normalize_inner(value: &Value, roots: &[&str], tmp: &str) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if VOLATILE_KEYS.contains(&k.as_str()) {
                        Value::String("<volatile>".into())
                    } else {
                        normalize_inner(v, roots, tmp)
                    };
                    (current_words(k), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| normalize_inner(v, roots, tmp)).collect()),
        Value::String(s) => Value::String(normalize_text(s, roots, tmp)),
        other => other.clone(),
    }
}

/// Durations written into text (`after 0.01 s`, `took 35 ms`).
fn duration_pattern() -> &'static regex::Regex {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // A constant pattern, exercised by the unit test below: it cannot fail at run time.
    #[allow(clippy::expect_used)]
    PATTERN.get_or_init(|| regex::Regex::new(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b").expect("valid duration pattern"))
}

/// `text` with each of [`FORMER_WORDS`] (as a whole word) in today's word.
fn current_words(text: &str) -> String {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // Built from constant words, exercised by the unit test below: it cannot fail at run time.
    #[allow(clippy::expect_used)]
    let pattern = PATTERN.get_or_init(|| {
        let words: Vec<String> = FORMER_WORDS
            .iter()
            .map(|(old, _)| {
                let tail = if old.ends_with(|c: char| c.is_alphanumeric() || c == '_') { r"\b" } else { "" };
                format!(r"\b{}{tail}", regex::escape(old))
            })
            .collect();
        regex::Regex::new(&words.join("|")).expect("valid former-word pattern")
    });
    pattern
        .replace_all(text, |found: &regex::Captures<'_>| {
            let old = &found[0];
            FORMER_WORDS.iter().find(|(former, _)| *former == old).map_or(old, |(_, new)| *new).to_string()
        })
        .into_owned()
}

fn normalize_text(s: &str, roots: &[&str], tmp: &str) -> String {
    let mut out = current_words(&duration_pattern().replace_all(s, "<duration>"));
    for root in roots {
        out = out.replace(root, "<workspace>");
    }
    // Any other path under the temp dir (spill files, job logs): keep the file
    // name, drop the per-run directory.
    let prefix = format!("{tmp}/");
    while let Some(start) = out.find(&prefix) {
        let rest = &out[start + prefix.len()..];
        let end = rest.find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '`').unwrap_or(rest.len());
        let path = &rest[..end];
        let file = path.rsplit('/').next().unwrap_or(path).to_string();
        out = format!("{}<tmp>/{}{}", &out[..start], file, &rest[end..]);
    }
    out
}

fn diff(want: &Value, got: &Value) -> String {
    let a = canonical::to_string_pretty(want);
    let b = canonical::to_string_pretty(got);
    similar::TextDiff::from_lines(&a, &b).unified_diff().context_radius(2).header("recorded", "replayed").to_string()
}

/// Copies `from` into a new directory under `into` (symlinks copied as links),
/// returning the copy's root. Skips build output that replay never needs.
pub fn scratch_copy(from: &Path, into: &Path) -> anyhow::Result<PathBuf> {
    let root = into.join("workspace");
    std::fs::create_dir_all(&root)?;
    copy_dir(from, &root).with_context(|| format!("copying {} for replay", from.display()))?;
    Ok(root)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "target" || name == "node_modules" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            std::fs::create_dir_all(&dst)?;
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_transcript_cannot_raise_the_replay_mode() {
        assert_eq!(lower(Mode::Yolo, Mode::Agent), Mode::Agent);
        assert_eq!(lower(Mode::Plan, Mode::Yolo), Mode::Plan);
        assert_eq!(lower(Mode::Agent, Mode::Agent), Mode::Agent);
    }

    #[test]
    fn normalization_blanks_volatile_fields_and_paths() {
        let tmp = std::env::temp_dir().to_string_lossy().trim_end_matches('/').to_string();
        let v = json!({
            "content": format!("wrote /old/ws/a.txt; log at {tmp}/run-123/job_1.log done"),
            "metadata": {"duration_ms": 17, "exit_code": 0}
        });
        let n = normalize(&v, &["/old/ws"]);
        assert_eq!(n["content"], "wrote <workspace>/a.txt; log at <tmp>/job_1.log done");
        let timed = normalize(&json!("[task-1 exited with code 0 after 0.01 s] took 35ms"), &[]);
        assert_eq!(timed, json!("[job-1 exited with code 0 after <duration>] took <duration>"));
        assert_eq!(n["metadata"]["duration_ms"], "<volatile>");
        assert_eq!(n["metadata"]["exit_code"], 0);
    }

    /// A background start recorded before one vocabulary and the same start now.
    #[test]
    fn normalization_reads_former_argument_words_as_todays() {
        let recorded = json!({
            "content": "Started task-1 in the background\nPoll its output with exec_shell_wait {\"task_id\": \"task-1\"}",
            "metadata": {"task_id": "task-1", "note": "raise max_results"}
        });
        let now = json!({
            "content": "Started job-1 in the background\nPoll its output with exec_shell_wait {\"job_id\": \"job-1\"}",
            "metadata": {"job_id": "job-1", "note": "raise limit"}
        });
        assert_eq!(normalize(&recorded, &[]), normalize(&now, &[]));
        // Whole words only: a longer word that begins with one is left alone.
        assert_eq!(normalize(&json!("task_ids max_results_x"), &[]), json!("task_ids max_results_x"));
        assert_ne!(normalize(&json!("task-1 exited"), &[]), normalize(&json!("job-2 exited"), &[]));
        // A word that merely ends in one is left alone too.
        assert_eq!(normalize(&json!("subtask-1"), &[]), json!("subtask-1"));
    }
}
