//! `quiver lint [--manifest FILE]`

use std::path::PathBuf;
use std::process::ExitCode;

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    /// A manifest (TOML) or extension metadata (JSON) laid over the built-in one.
    #[arg(long)]
    manifest: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().ok();
    let engine = setup::engine(cwd.as_deref(), args.manifest.as_deref())?;
    let findings = quiver_engine::lint::lint(&engine, quiver_engine::VERSION);
    for f in findings.iter().filter(|f| f.warning) {
        eprintln!("lint: {f}");
    }
    let mut errors: Vec<String> = findings.iter().filter(|f| !f.warning).map(|f| f.to_string()).collect();
    // Every other command skips a broken project manifest with a warning; lint is where it fails.
    let (_, skipped) = quiver_engine::Manifest::load_layered_reporting(cwd.as_deref())?;
    errors.extend(skipped.iter().map(|e| format!("the project's manifest was ignored: {e:#}")));
    if errors.is_empty() {
        let names = engine.registry().len() + engine.manifest().aliases.len();
        setup::out(&format!(
            "lint: ok ({} tools, {names} names, {} profiles)",
            engine.registry().len(),
            engine.manifest().profiles.len()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    for f in &errors {
        eprintln!("lint: {f}");
    }
    eprintln!("lint: {} problem(s)", errors.len());
    Ok(ExitCode::FAILURE)
}
