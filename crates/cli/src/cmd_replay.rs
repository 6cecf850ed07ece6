//! `quiver replay TRANSCRIPT [--workspace DIR]`: re-dispatch every recorded call
//! in a scratch copy of the workspace and compare results. Exits 1 on any
//! difference or failure.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use quiver_engine::AliasState;
use quiver_engine::replay::{self, Verdict};
use quiver_engine::transcript::{Event, Transcript};
use quiver_engine::{Mode, Workspace};

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    transcript: PathBuf,
    /// The workspace to copy for the replay (default: an empty one).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Print the diff of every differing call.
    #[arg(long)]
    verbose: bool,
    /// The most permissive mode the replay may use; a transcript recorded in a
    /// more permissive mode is replayed in this one (default: agent).
    #[arg(long, default_value = "agent")]
    max_mode: Mode,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let transcript = Transcript::read(&args.transcript)?;
    if let Some((line, _)) = &transcript.torn_tail {
        eprintln!(
            "replay: line {line} of {} is torn (cut off mid-write); replaying everything before it",
            args.transcript.display()
        );
    }
    for (line, _) in &transcript.damaged {
        eprintln!("replay: line {line} of {} is unreadable and was skipped", args.transcript.display());
    }
    let scratch_parent = tempfile::tempdir().context("creating a scratch directory")?;
    let root = match &args.workspace {
        Some(dir) => replay::scratch_copy(dir, scratch_parent.path())?,
        None => {
            let root = scratch_parent.path().join("workspace");
            std::fs::create_dir_all(&root)?;
            root
        }
    };
    let workspace = Workspace::new(&root)?;
    // `remember` writes outside the workspace: in a replay it writes to a
    // scratch memory file, never the user's.
    let options = quiver_tools::NativeOptions { memory_file: Some(scratch_parent.path().join("memory.md")) };
    let engine = setup::engine_with(args.workspace.as_deref(), None, &options)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(replay::replay(engine, &transcript, workspace, args.max_mode))?;

    let session = match transcript.start() {
        Some(Event::SessionStart { session, .. }) => session.clone(),
        _ => "?".into(),
    };
    setup::out(&format!("replay {} (session {session}, {} calls)", args.transcript.display(), report.calls.len()));
    let mut notices = Vec::new();
    for call in &report.calls {
        let verdict = match &call.verdict {
            Verdict::Identical => "identical".to_string(),
            Verdict::Differs(_) => "DIFFERS".to_string(),
            Verdict::Failed(e) => format!("FAILED: {e}"),
            Verdict::NoRecordedResult => "DIFFERS: no recorded result".to_string(),
        };
        let alias = match &call.alias_of {
            Some((to, AliasState::Deprecated)) => {
                notices.push(format!("{} -> {to}", call.name));
                format!(" (deprecated: use {to})")
            }
            Some((to, AliasState::HiddenCompatibility)) => format!(" (hidden alias of {to})"),
            Some((to, AliasState::Removed)) => format!(" (removed: use {to})"),
            None => String::new(),
        };
        setup::out(&format!("  #{:<3} {:<24} {verdict}{alias}", call.index, call.name));
        if let (true, Verdict::Differs(diff)) = (args.verbose, &call.verdict) {
            setup::out(diff);
        }
    }
    let identical = report.count(|v| *v == Verdict::Identical);
    let failed = report.count(|v| matches!(v, Verdict::Failed(_)));
    let differs = report.calls.len() - identical - failed;
    notices.dedup();
    setup::out(&format!(
        "replay: {identical} identical, {differs} differ, {failed} failed; deprecation notices: {}",
        if notices.is_empty() { "none".to_string() } else { notices.join(", ") }
    ));
    Ok(if report.all_identical() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
