//! One agent session's parts, as `quiver exec` and the interactive front end
//! both need them: config layers, provider, the engine's host (native tools,
//! MCP, sub-agents), the context with its session and transcript, and a
//! resumed session's history. One place, so the two front ends cannot drift.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quiver_agent::exec::{self, paths, resume::Resumed};
use quiver_agent::run::{ProviderFim, compact};
use quiver_agent::subagent::{AgentHub, AgentRuntime, EventTap, SubagentLimits};
use quiver_agent::{AgentConfig, CliOverrides, HttpOptions, Message, Provider};
use quiver_engine::{Audience, EngineHost, Mode, Session, ToolContext, Workspace};
use quiver_mcp::McpManager;

/// Which model a session talks to: the flags `quiver`, `quiver exec` and
/// `quiver relay` share (they win over the config files).
#[derive(clap::Args, Debug, Default, Clone)]
pub(crate) struct ModelFlags {
    /// deepseek (default), openai, anthropic, or a provider from your config.
    #[arg(long)]
    pub provider: Option<String>,
    /// The model id (default: the provider's default model or `[model] model`).
    #[arg(long)]
    pub model: Option<String>,
    /// Send requests to this base URL instead (vLLM, llama.cpp, OpenRouter, ...).
    #[arg(long)]
    pub base_url: Option<String>,
}

impl ModelFlags {
    pub fn overrides(&self, effort: Option<quiver_agent::Effort>) -> CliOverrides {
        CliOverrides {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            effort,
            max_output_tokens: None,
        }
    }
}

pub(crate) struct AgentSession {
    pub config: AgentConfig,
    pub provider: Arc<dyn Provider>,
    pub host: Arc<EngineHost>,
    pub manager: Arc<McpManager>,
    pub agents: Arc<AgentHub>,
    pub ctx: ToolContext,
    /// A resumed session's conversation (empty for a new one).
    pub history: Vec<Message>,
    pub transcript_path: PathBuf,
    /// The model's context window, for compaction and the footer.
    pub window: u64,
}

/// Why a session could not be opened: a usage error (exit 2, one line) or
/// anything else.
pub(crate) enum OpenError {
    Usage(String),
    Other(anyhow::Error),
}

impl From<anyhow::Error> for OpenError {
    fn from(e: anyhow::Error) -> Self {
        OpenError::Other(e)
    }
}

/// Opens a session in `workspace`: new, or `resumed`. `events` taps the
/// sub-agents' events (exec's `--json`).
pub(crate) fn open(
    workspace: &Workspace,
    cli: &CliOverrides,
    mode: Mode,
    resumed: Option<Resumed>,
    events: Option<EventTap>,
) -> Result<AgentSession, OpenError> {
    let (layers, config, provider) = configured_provider(workspace.root(), cli).map_err(OpenError::Usage)?;
    let window = paths::context_window_override(&layers).unwrap_or_else(|| compact::context_window_of(&config.model));
    let limits = SubagentLimits::from_layers(&layers).map_err(|e| OpenError::Usage(e.to_string()))?;
    let native = quiver_tools::NativeOptions::default();
    let rlm_child = crate::setup::rlm_child_for(config.clone());
    let (host, manager, agents) = crate::setup::host_with(Some(workspace.root()), None, None, &native, rlm_child)?;
    agents.configure(AgentRuntime {
        provider: Arc::clone(&provider),
        provider_name: config.provider.clone(),
        model: config.model.clone(),
        effort: config.effort,
        max_output_tokens: config.max_output_tokens,
        limits,
        root_system: exec::SYSTEM_PROMPT.to_string(),
        events,
    });
    crate::search_model::attach(&host)?;
    let audience = Audience { provider: config.provider.clone(), model: Some(config.model.clone()), mode };
    let mut ctx = host.context(workspace.clone(), audience.clone());
    let mut history = Vec::new();
    if let Some(r) = resumed {
        ctx.session = Arc::new(Session::new(r.session_id));
        ctx.session.restore_lazy_state(r.lazy);
        history = r.messages;
    }
    // `fim_edit` completes through the same provider (an error names it when
    // the provider has no fill-in-the-middle endpoint).
    ctx.fim = Some(Arc::new(ProviderFim(Arc::clone(&provider))));
    let session_id = ctx.session.id().to_string();
    let transcript_path = paths::session_path(&session_id).map_err(anyhow::Error::from)?;
    ctx.transcript =
        Some(exec::open_transcript(&transcript_path, &session_id, workspace, &audience, &config.provider)?);
    Ok(AgentSession { config, provider, host, manager, agents, ctx, history, transcript_path, window })
}

/// Config files that exist, in order: (trust, path, text).
pub(crate) type ConfigLayers = Vec<(quiver_agent::Trust, String, String)>;

/// The config layers of `root` (user, then project), the settings they and
/// the flags resolve to, and the provider those name; an error is a usage
/// error (a missing key names its variable).
pub(crate) fn configured_provider(
    root: &Path,
    cli: &CliOverrides,
) -> Result<(ConfigLayers, quiver_agent::AgentConfig, Arc<dyn Provider>), String> {
    let layers = paths::read_layers(root).map_err(|e| e.to_string())?;
    let config = paths::load_config(&layers, cli).map_err(|e| e.to_string())?;
    let provider =
        config.build_provider(&quiver_sandbox::secret_env, HttpOptions::default()).map_err(|e| e.to_string())?;
    Ok((layers, config, Arc::from(provider)))
}
