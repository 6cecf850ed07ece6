//! Building the engine the way every subcommand needs it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use quiver_engine::{Engine, EngineHost, Manifest};
use quiver_mcp::{McpConfig, McpManager, McpProvider};

/// Who the surface is built for: `--provider`, `--model`, `--mode`.
#[derive(clap::Args)]
pub struct AudienceArgs {
    /// Provider profile from the manifest (`default`, `arcee`, ...).
    #[arg(long, default_value = "default")]
    provider: String,
    /// Model id (decides model-gated tools such as `tool_agent`).
    #[arg(long)]
    model: Option<String>,
    #[arg(long, default_value = "agent")]
    mode: quiver_engine::Mode,
}

impl AudienceArgs {
    pub fn audience(&self) -> quiver_engine::Audience {
        quiver_engine::Audience { provider: self.provider.clone(), model: self.model.clone(), mode: self.mode }
    }
}

/// The workspace: `--workspace`, else the current directory.
pub fn workspace_dir(arg: Option<&Path>) -> anyhow::Result<PathBuf> {
    match arg {
        Some(p) => Ok(p.to_path_buf()),
        None => std::env::current_dir().context("reading the current directory"),
    }
}

/// Built-in manifest, user and project overlays, then an explicit file if given.
pub fn manifest(workspace: Option<&Path>, extra: Option<&Path>) -> anyhow::Result<Manifest> {
    let mut manifest = Manifest::load_layered(workspace)?;
    if let Some(path) = extra {
        manifest.overlay_file(path)?;
    }
    Ok(manifest)
}

/// The full surface: native tools, the `mcp_*` tools, and the tools of every
/// configured MCP server known from its cached tool list (servers start only
/// when one of their tools is called, and a project's servers only with the
/// user's approval).
pub fn engine(workspace: Option<&Path>, extra_manifest: Option<&Path>) -> anyhow::Result<Arc<Engine>> {
    engine_with(workspace, extra_manifest, &quiver_tools::NativeOptions::default())
}

/// [`engine`], with options for the native tools.
pub fn engine_with(
    workspace: Option<&Path>,
    extra_manifest: Option<&Path>,
    options: &quiver_tools::NativeOptions,
) -> anyhow::Result<Arc<Engine>> {
    Ok(host(workspace, None, extra_manifest, options)?.0.engine())
}

/// The engine's host over quiver's native tools with MCP as its one tool
/// provider; the manager is returned so a long-lived caller can stop the
/// servers it started.
pub fn host(
    workspace: Option<&Path>,
    mcp_config: Option<&Path>,
    extra_manifest: Option<&Path>,
    options: &quiver_tools::NativeOptions,
) -> anyhow::Result<(Arc<EngineHost>, Arc<McpManager>)> {
    let config = McpConfig::load_for_workspace(workspace, mcp_config).context("reading the MCP server config")?;
    let manager = McpManager::new(config);
    let registry = quiver_tools::native_registry_with(options)?;
    let host = EngineHost::new(registry, manifest(workspace, extra_manifest)?, vec![McpProvider::new(&manager)])?;
    Ok((host, manager))
}

/// quiver's own surface only (native and `mcp_*` tools, no configured servers):
/// what `bench search --native` measures, the same on every machine.
pub fn own_engine() -> anyhow::Result<Arc<Engine>> {
    let registry = quiver_tools::native_registry()?;
    let host = EngineHost::new(registry, Manifest::builtin()?, vec![McpProvider::new(&McpManager::empty())])?;
    Ok(host.engine())
}

/// Prints a line to stdout (the CLI's contract output). A closed pipe (`quiver
/// catalog | head`) ends the process quietly instead of panicking.
pub fn out(line: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("quiver: writing to stdout: {e}");
        std::process::exit(2);
    }
}
