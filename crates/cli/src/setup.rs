//! Building the engine the way every subcommand needs it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use quiver_agent::subagent::AgentHub;
use quiver_engine::{Engine, EngineHost, Manifest, Registry};
use quiver_mcp::{McpConfig, McpManager, McpProvider};
use quiver_rlm::{ChildModel, RlmProvider};

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
    let (host, manager, _agents) =
        host_with(workspace, mcp_config, extra_manifest, options, rlm_child_model(workspace))?;
    Ok((host, manager))
}

/// [`host`], with the RLM tools' child model given (`quiver exec` passes one
/// from its own config, flags included), and the sub-agent hub its `agent_*`
/// tools use: a caller with a model provider configures it (`quiver exec`,
/// `quiver mcp serve`); until then those tools answer with what to configure.
pub fn host_with(
    workspace: Option<&Path>,
    mcp_config: Option<&Path>,
    extra_manifest: Option<&Path>,
    options: &quiver_tools::NativeOptions,
    rlm_child: ChildModel,
) -> anyhow::Result<(Arc<EngineHost>, Arc<McpManager>, Arc<AgentHub>)> {
    let config = McpConfig::load_for_workspace(workspace, mcp_config).context("reading the MCP server config")?;
    let manager = McpManager::new(config);
    let (registry, agents) = native_registry(options)?;
    let providers = vec![McpProvider::shared(&manager), RlmProvider::shared(rlm_child)];
    let host = EngineHost::new(registry, manifest(workspace, extra_manifest)?, providers)?;
    agents.attach_host(&host);
    Ok((host, manager, agents))
}
/// Gives the sub-agent tools the model provider from the user's config (for
/// `quiver mcp serve`, which has no flags for one); when there is none, the
/// reason goes into every refusal instead.
pub fn configure_agents(agents: &AgentHub, workspace: &Path) {
    use quiver_agent::exec::paths;
    let runtime = (|| -> Result<quiver_agent::subagent::AgentRuntime, String> {
        let layers = paths::read_layers(workspace).map_err(|e| e.to_string())?;
        let limits = quiver_agent::subagent::SubagentLimits::from_layers(&layers).map_err(|e| e.to_string())?;
        let config = paths::load_config(&layers, &quiver_agent::CliOverrides::default()).map_err(|e| e.to_string())?;
        let provider = config
            .build_provider(&quiver_sandbox::secret_env, quiver_agent::HttpOptions::default())
            .map_err(|e| e.to_string())?;
        Ok(quiver_agent::subagent::AgentRuntime {
            provider: Arc::from(provider),
            provider_name: config.provider.clone(),
            model: config.model.clone(),
            effort: config.effort,
            max_output_tokens: config.max_output_tokens,
            limits,
            root_system: quiver_agent::exec::SYSTEM_PROMPT.to_string(),
            events: None,
        })
    })();
    match runtime {
        Ok(runtime) => agents.configure(runtime),
        Err(reason) => agents.set_unavailable(reason),
    }
}

/// quiver's native tools: the tools crate's, plus the sub-agent tools.
fn native_registry(options: &quiver_tools::NativeOptions) -> anyhow::Result<(Registry, Arc<AgentHub>)> {
    let mut registry = quiver_tools::native_registry_with(options)?;
    let agents = AgentHub::new();
    quiver_agent::subagent::register_tools(&agents, &mut registry)?;
    Ok((registry, agents))
}

/// quiver's own surface only (native and `mcp_*` tools, no configured servers):
/// what `bench search --native` measures, the same on every machine. The
/// built-in manifest is overlaid by `overlay` only (never the user's or a
/// project's file: a bench run must not depend on them).
pub fn own_engine(overlay: Option<&Path>) -> anyhow::Result<Arc<Engine>> {
    let (registry, _agents) = native_registry(&quiver_tools::NativeOptions::default())?;
    let rlm = RlmProvider::shared(ChildModel::unavailable("quiver's own surface has no model config"));
    let mut manifest = Manifest::builtin()?;
    if let Some(path) = overlay {
        manifest.overlay_file(path)?;
    }
    let host = EngineHost::new(registry, manifest, vec![McpProvider::shared(&McpManager::empty()), rlm])?;
    Ok(host.engine())
}

/// The child model of RLM sessions' `sub_query*`, from the user and project
/// config (see [`rlm_child_for`]). A broken config leaves the REPL usable and
/// makes child queries fail with the config's error.
pub fn rlm_child_model(workspace: Option<&Path>) -> ChildModel {
    use quiver_agent::exec::paths;
    let root = match workspace_dir(workspace) {
        Ok(root) => root,
        Err(e) => return ChildModel::unavailable(format!("{e:#}")),
    };
    let config = match paths::read_layers(&root)
        .and_then(|layers| paths::load_config(&layers, &quiver_agent::CliOverrides::default()))
    {
        Ok(config) => config,
        Err(e) => return ChildModel::unavailable(e.to_string()),
    };
    rlm_child_for(config)
}

/// The configured provider with `deepseek-v4-flash` on DeepSeek, else that
/// provider's model. The key is read (`secret_env`) on the first child query,
/// in quiver's process only; every provider's key variable is removed from the
/// REPL's environment.
pub fn rlm_child_for(config: quiver_agent::AgentConfig) -> ChildModel {
    let model = if config.provider == quiver_agent::config::DEFAULT_PROVIDER {
        quiver_rlm::DEFAULT_CHILD_MODEL.to_string()
    } else {
        config.model.clone()
    };
    let secret_env: Vec<String> = config.providers.values().map(|p| p.api_key_env.clone()).collect();
    let factory: quiver_rlm::ProviderFactory = Arc::new(move || {
        let provider = config
            .build_provider(&quiver_sandbox::secret_env, quiver_agent::HttpOptions::default())
            .map_err(|e| e.to_string())?;
        Ok(Arc::from(provider))
    });
    ChildModel::new(model, factory, secret_env)
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
