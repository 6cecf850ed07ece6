//! `quiver relay [FOCUS] [--session ID]`: asks the model to write a session
//! relay (`# Session relay`) from a recorded session and keeps it as the
//! workspace's `.quiver/handoff.md`, for `quiver exec --from-relay` (or a
//! person) to pick up. The shape and the file are `quiver_agent::relay`'s.

use std::path::PathBuf;
use std::process::ExitCode;

use quiver_agent::exec::{self, paths, resume};
use quiver_agent::relay;

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
    #[command(flatten)]
    model_flags: crate::agent_session::ModelFlags,
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
        None => match quiver_agent::exec::sessions::workspace_sessions(&root).into_iter().next() {
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

    let cli = args.model_flags.overrides(None);
    let (_, config, provider) = match crate::agent_session::configured_provider(&root, &cli) {
        Ok(found) => found,
        Err(e) => return Ok(usage_error(e)),
    };
    let focus = args.focus.join(" ");
    let runtime = tokio::runtime::Runtime::new()?;
    let asked = runtime.block_on(relay::ask(
        provider.as_ref(),
        exec::SYSTEM_PROMPT,
        &config.model,
        config.max_output_tokens,
        &session.messages,
        Some(&focus),
    ));
    let doc = match asked {
        Ok(doc) => doc,
        Err(e) => {
            eprintln!("quiver: {e}");
            return Ok(ExitCode::from(exec::EXIT_GAVE_UP));
        }
    };
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
