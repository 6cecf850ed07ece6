//! `quiver audit TRANSCRIPT`: per model request, the bytes shared with the
//! previous request, head changes (must be 0), cache-hit tokens and the tools
//! loaded, then a summary line. Exits 1 when the head changed.

use std::path::PathBuf;
use std::process::ExitCode;

use quiver_agent::exec::audit;
use quiver_engine::transcript::Transcript;

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    /// A session transcript (`$QUIVER_STATE_DIR/sessions/<id>.jsonl`).
    transcript: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let transcript = Transcript::read(&args.transcript)?;
    let report = audit::audit(&transcript);
    for line in report.lines() {
        setup::out(&line);
    }
    Ok(if report.head_changes == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
