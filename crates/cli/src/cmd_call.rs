//! `quiver call NAME [--args JSON] [--workspace DIR] [--mode M]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
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
    setup::out(&canonical::to_string_pretty(&serde_json::to_value(&result)?));
    Ok(if result.is_error { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
