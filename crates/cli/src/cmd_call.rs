//! `quiver call NAME [--args JSON] [--workspace DIR] [--mode M]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use quiver_engine::spill::SpillStore;
use quiver_engine::{Workspace, canonical};

use crate::setup;

#[derive(clap::Args)]
pub struct Args {
    name: String,
    /// Arguments as a JSON object.
    #[arg(long, default_value = "{}")]
    args: String,
    #[arg(long)]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    audience: setup::AudienceArgs,
}

/// Prints the result JSON; exits 1 when the result is an error result.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let workspace = Workspace::new(&dir).with_context(|| format!("workspace {}", dir.display()))?;
    let call_args: serde_json::Value =
        serde_json::from_str(&args.args).with_context(|| format!("--args is not valid JSON: {}", args.args))?;
    let (host, manager) = setup::host(Some(workspace.root()), None, None, &quiver_tools::NativeOptions::default())?;
    let ctx = host.context(workspace, args.audience.audience());
    let runtime = tokio::runtime::Runtime::new()?;
    let result = runtime.block_on(async {
        let result = ctx.call(&args.name, call_args).await;
        manager.shutdown().await;
        result
    })?;
    // The result shows what a model would get (a summary and a handle), but
    // no later call of this process can read the handle back: the spill files
    // go with it, unless the user named a folder to keep them in.
    let keep = std::env::var_os("QUIVER_SPILL_DIR").is_some_and(|d| !d.is_empty());
    if !keep && ctx.session.state::<SpillStore>().discard(ctx.session.id()) {
        eprintln!("quiver call: the spilled output was removed with this call; set QUIVER_SPILL_DIR to keep it");
    }
    setup::out(&canonical::to_string_pretty(&serde_json::to_value(&result)?));
    Ok(if result.is_error { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
