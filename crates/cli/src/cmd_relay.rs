//! `quiver relay [FOCUS] [--session ID]`: asks the model to write a session
//! relay (`# Session relay`) from a recorded session and keeps it as the
//! workspace's `.quiver/handoff.md`, for `quiver exec --from-relay` (or a
//! person) to pick up. The shape and the file are `quiver_agent::relay`'s.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use quiver_agent::exec::{self, paths, resume};
use quiver_agent::relay::{self, Facts};
use quiver_agent::{CliOverrides, Message, ModelRequest};

use crate::setup;

#[derive(clap::Args)]
#[command(after_help = "The relay has the sections Goal, Current checklist item, Changed files, Decisions, \
Verification state and Next action. The model writes them from the session's history; any it leaves out \
is filled from what the transcript shows (files the write tools changed, the checklist's open item, the \
last test and gate results). Long sessions also write this file when they compact.\n\n\
Provider and model come from the same config as `quiver exec` (flags win).")]
pub struct Args {
    /// What the next session should concentrate on (optional).
    focus: Vec<String>,
    /// The session to relay (default: this workspace's newest top-level session).
    #[arg(long)]
    session: Option<String>,
    /// The workspace (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    #[arg(long)]
    provider: Option<String>,
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    base_url: Option<String>,
    /// Print the relay instead of writing .quiver/handoff.md.
    #[arg(long)]
    stdout: bool,
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("quiver: {message}");
    ExitCode::from(exec::EXIT_USAGE)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let root = match std::fs::canonicalize(&dir) {
        Ok(r) => r,
        Err(e) => return Ok(usage_error(format!("workspace {}: {e}", dir.display()))),
    };
    let transcript = match &args.session {
        Some(id) => match paths::session_path(id) {
            Ok(p) if p.is_file() => p,
            Ok(p) => return Ok(usage_error(format!("no session `{id}` ({} does not exist)", p.display()))),
            Err(e) => return Ok(usage_error(e)),
        },
        None => match newest_session(&root) {
            Some(p) => p,
            None => {
                return Ok(usage_error(format!(
                    "no recorded session for {}: run `quiver exec` here first, or name one with --session",
                    root.display()
                )));
            }
        },
    };
    let session = match resume::read(&transcript) {
        Ok(s) => s,
        Err(e) => return Ok(usage_error(format!("cannot read {}: {e:#}", transcript.display()))),
    };
    if session.messages.is_empty() {
        return Ok(usage_error(format!("session {} has no conversation to relay", session.session_id)));
    }

    let cli = CliOverrides {
        provider: args.provider.clone(),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        effort: None,
        max_output_tokens: None,
    };
    let (_, config, provider) = match crate::cmd_exec::configured_provider(&root, &cli) {
        Ok(found) => found,
        Err(e) => return Ok(usage_error(e)),
    };
    let focus = args.focus.join(" ");
    let mut messages = session.messages.clone();
    messages.push(Message::user(relay::instruction(Some(&focus))));
    // No tools: the relay is prose about the session, never more work.
    let request = ModelRequest {
        model: config.model.clone(),
        system: exec::SYSTEM_PROMPT.to_string(),
        messages,
        tools: serde_json::Value::Array(Vec::new()),
        head_len: 0,
        deferred_tools: Vec::new(),
        max_output_tokens: config.max_output_tokens,
        effort: None,
        stream: true,
        cache_key: None,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let response = runtime.block_on(async {
        let mut ignore = |_| {};
        provider.complete(&request, &mut ignore).await
    });
    let response = match response {
        Ok(r) if !r.text.trim().is_empty() => r,
        Ok(_) => {
            eprintln!("quiver: the model answered with an empty relay; nothing written");
            return Ok(ExitCode::from(exec::EXIT_GAVE_UP));
        }
        Err(e) => {
            eprintln!("quiver: {e}");
            return Ok(ExitCode::from(exec::EXIT_GAVE_UP));
        }
    };
    let doc = relay::document(&response.text, &Facts::from_messages(&session.messages));
    if args.stdout {
        setup::out(doc.trim_end());
        return Ok(ExitCode::SUCCESS);
    }
    match relay::write(&root, &doc) {
        Ok(path) => {
            eprintln!(
                "quiver: relay of session {} written to {}; continue with `quiver exec --from-relay`",
                session.session_id,
                path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("quiver: {e}");
            Ok(ExitCode::from(exec::EXIT_GAVE_UP))
        }
    }
}

/// This workspace's newest session that is not a sub-agent's (those are
/// listed in the sub-agent store with their parent).
fn newest_session(root: &Path) -> Option<PathBuf> {
    let dir = paths::sessions_dir()?;
    let children: Vec<String> = quiver_agent::subagent::store::store_path()
        .and_then(|p| quiver_agent::subagent::store::load(&p).ok())
        .map(|records| records.into_iter().map(|r| r.session_id).collect())
        .unwrap_or_default();
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let Some(id) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if children.iter().any(|c| c == id) {
            continue;
        }
        let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else { continue };
        if best.as_ref().is_some_and(|(t, _)| *t >= modified) || !started_in(&path, root) {
            continue;
        }
        best = Some((modified, path));
    }
    best.map(|(_, p)| p)
}

/// Whether the transcript's first line says it ran in `root`.
fn started_in(path: &Path, root: &Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    let Ok(start) = serde_json::from_str::<serde_json::Value>(&first) else { return false };
    start["workspace"].as_str().is_some_and(|w| Path::new(w) == root)
}
