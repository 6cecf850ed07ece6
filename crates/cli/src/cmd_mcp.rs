//! `quiver mcp serve [--transport stdio|http] [--listen ADDR] [--config FILE] [--mode M] [--workspace DIR]`
//!
//! quiver as an MCP server: any MCP client (Claude Code, Codex, Cursor, ...)
//! gets quiver's first-turn head plus `tool_search`, and every tool behind it.
//! The commands that manage the servers quiver itself uses (`add`, `list`,
//! ...) are in `cmd_mcp_manage.rs`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::McpConfig;
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};

use crate::setup;

/// The env var holding the HTTP bearer token when `--token-env` is not given.
const DEFAULT_TOKEN_ENV: &str = "QUIVER_MCP_TOKEN";

/// Shown under `quiver mcp --help`.
const MCP_HELP: &str = "\
Servers live in your own config, $QUIVER_CONFIG_DIR/config.toml (else ~/.config/quiver/config.toml),
as [mcp_servers.NAME] tables; add, remove, enable, disable and import edit that file only, keeping
its comments. A workspace's .mcp.json and quiver.toml add servers too (list shows them), but quiver
never edits them, and their servers start only once you approve them (quiver mcp trust NAME).
A server's tools reach a model as mcp__NAME__<tool>.

Examples:
  quiver mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src
  quiver mcp add gh --env GITHUB_TOKEN=... -- github-mcp-server stdio
  quiver mcp add docs --url https://docs.example.com/mcp --bearer-token-env DOCS_TOKEN
  quiver mcp import ~/.config/Claude/claude_desktop_config.json
  quiver mcp validate            start every enabled server, list its tools; exit 1 on any failure";

#[derive(clap::Subcommand)]
#[command(after_long_help = MCP_HELP)]
pub enum Mcp {
    /// Serve quiver's tools to an MCP client (stdio by default, or streamable HTTP at /mcp).
    Serve(ServeArgs),
    /// Add a server to your config: `add NAME [--env K=V]... -- CMD ARGS...` or `add NAME --url URL`.
    Add(crate::cmd_mcp_manage::AddArgs),
    /// Every configured server: name, enabled/disabled, transport, command or URL, source file.
    List(crate::cmd_mcp_manage::ListArgs),
    /// Everything about one server (secret-looking values masked).
    Get(crate::cmd_mcp_manage::GetArgs),
    /// Remove a server from your config.
    Remove(crate::cmd_mcp_manage::NameArgs),
    /// Turn a server back on.
    Enable(crate::cmd_mcp_manage::NameArgs),
    /// Turn a server off: it stays in your config and listed, and is never started.
    Disable(crate::cmd_mcp_manage::NameArgs),
    /// Read the config, start each enabled server (or those named), list its tools; exit 1 on any failure.
    Validate(crate::cmd_mcp_manage::ValidateArgs),
    /// The tools a server offers, under the names quiver exposes them by (mcp__NAME__<tool>).
    Tools(crate::cmd_mcp_manage::ToolsArgs),
    /// Import a Claude-style {"mcpServers": {...}} JSON into your config (existing names only with --force).
    Import(crate::cmd_mcp_manage::ImportArgs),
    /// Allow a server defined by this workspace's .mcp.json / quiver.toml to start (remembered
    /// for its exact current config; an edited config is asked about again).
    Trust(TrustArgs),
    /// Forget an approval given with `quiver mcp trust` or at a prompt.
    Untrust(TrustArgs),
    /// Sign in to an HTTP server that requires OAuth (opens the browser, or prints the URL).
    Login(crate::cmd_mcp_auth::LoginArgs),
    /// Delete the tokens `quiver mcp login` stored for a server.
    Logout(crate::cmd_mcp_auth::LoginArgs),
    /// Run quiver's MCP client once against URL: one session, list and call every tool.
    #[command(hide = true)]
    ConformanceClient(crate::cmd_mcp_auth::ConformanceArgs),
}

#[derive(clap::Args)]
pub struct TrustArgs {
    /// The server's name in the project's config.
    name: String,
    #[arg(long)]
    workspace: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    Stdio,
    Http,
}

#[derive(clap::Args)]
pub struct ServeArgs {
    #[arg(long, value_enum, default_value = "stdio")]
    transport: Transport,
    /// HTTP listen address (default 127.0.0.1:0, an ephemeral loopback port).
    #[arg(long)]
    listen: Option<String>,
    /// Allow a non-loopback --listen address.
    #[arg(long)]
    allow_remote: bool,
    /// Env var holding the HTTP bearer token (default: QUIVER_MCP_TOKEN, if set).
    #[arg(long)]
    token_env: Option<String>,
    /// Config file with `[mcp_servers.NAME]` tables (or a Claude-style mcpServers JSON).
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long, default_value = "agent")]
    mode: Mode,
    #[arg(long)]
    workspace: Option<PathBuf>,
    #[arg(long, default_value = "default")]
    provider: String,
    #[arg(long)]
    model: Option<String>,
    /// Extra lifecycle manifest laid over the built-in and user/project ones.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Record each session's calls, results and loads to `DIR/<session>.jsonl`
    /// (replayable with `quiver replay`).
    #[arg(long)]
    transcript_dir: Option<PathBuf>,
    /// Durable tasks (task_create) and due automations run while the server is
    /// up, this many at once, each a `quiver exec` child; 0 leaves them to
    /// `quiver tasks run`.
    #[arg(long, default_value_t = 2)]
    task_workers: usize,
}

/// `mcp serve --token-env`'s variable: a secret of quiver's whatever its name.
pub fn token_env(command: &Mcp) -> Option<&str> {
    match command {
        Mcp::Serve(args) => args.token_env.as_deref(),
        _ => None,
    }
}

pub fn run(command: Mcp) -> anyhow::Result<ExitCode> {
    match command {
        Mcp::Serve(args) => serve(args),
        Mcp::Add(args) => crate::cmd_mcp_manage::add(args),
        Mcp::List(args) => crate::cmd_mcp_manage::list(args),
        Mcp::Get(args) => crate::cmd_mcp_manage::get(args),
        Mcp::Remove(args) => crate::cmd_mcp_manage::remove(args),
        Mcp::Enable(args) => crate::cmd_mcp_manage::set_enabled(args, true),
        Mcp::Disable(args) => crate::cmd_mcp_manage::set_enabled(args, false),
        Mcp::Validate(args) => crate::cmd_mcp_manage::validate(args),
        Mcp::Tools(args) => crate::cmd_mcp_manage::tools(args),
        Mcp::Import(args) => crate::cmd_mcp_manage::import(args),
        Mcp::Trust(args) => trust(args, true),
        Mcp::Untrust(args) => trust(args, false),
        Mcp::Login(args) => crate::cmd_mcp_auth::login(args),
        Mcp::Logout(args) => crate::cmd_mcp_auth::logout(args),
        Mcp::ConformanceClient(args) => crate::cmd_mcp_auth::conformance_client(args),
    }
}

/// Records (or forgets) the user's approval of a project-defined server, in
/// the user's state directory: the same record an approval at a prompt writes.
fn trust(args: TrustArgs, allow: bool) -> anyhow::Result<ExitCode> {
    use quiver_engine::permissions::command::CommandOrigin;
    use quiver_engine::permissions::trust::{Source, TrustStore};
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let config = McpConfig::load_for_workspace(Some(&dir), None).context("reading the MCP server config")?;
    let store = TrustStore::from_env();
    let Some(server) = config.servers.get(&args.name) else {
        let names: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        bail!("no MCP server named `{}` in this workspace's config (configured: {})", args.name, names.join(", "));
    };
    if server.trust != Source::Project {
        setup::out(&format!(
            "`{}` comes from your own config ({}); it needs no approval",
            args.name,
            server.source.display()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let request = server.launch_request();
    let CommandOrigin::Config { key, .. } = &request.origin else {
        bail!("`{}` is not a configured server", args.name)
    };
    if allow {
        store.trust(key)?;
        setup::out(&format!("trusted `{}` ({}) for {}", args.name, request.line, dir.display()));
    } else {
        let removed = store.revoke(&key.workspace, &key.subject)?;
        setup::out(&format!(
            "{} `{}` for {}",
            if removed { "forgot" } else { "had no approval of" },
            args.name,
            dir.display()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The runtime `mcp serve` runs on. A stdio session is one client whose
/// calls are mostly waiting on I/O (tools do their heavy work on the blocking
/// pool), and it shares the machine with the servers it fronts: one thread
/// spares the cross-thread wake-ups that a second worker costs on every
/// message (measured with `gateway_latency`, 8 concurrent callers on 2 cores:
/// quiver's CPU per relayed call 131-161 -> 97-110 us with one worker,
/// throughput +15-25%), and the current-thread scheduler spares what the
/// multi-thread one does on every batch of tasks even with one worker (its
/// timing statistics, the park/unpark hand-off). HTTP serves many sessions
/// and keeps a worker per core; `TOKIO_WORKER_THREADS` overrides both (and
/// selects the multi-thread scheduler for stdio).
fn serve_runtime(transport: &Transport) -> std::io::Result<tokio::runtime::Runtime> {
    if matches!(transport, Transport::Stdio) && std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        return tokio::runtime::Builder::new_current_thread().enable_all().build();
    }
    tokio::runtime::Builder::new_multi_thread().enable_all().build()
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let workspace = Workspace::new(&dir).with_context(|| format!("workspace {}", dir.display()))?;
    let token = token(&args)?;
    let runtime = serve_runtime(&args.transport).context("starting the async runtime")?;
    runtime.block_on(async {
        let (host, manager, agents) = setup::host_with(
            Some(workspace.root()),
            args.config.as_deref(),
            args.manifest.as_deref(),
            &quiver_tools::NativeOptions::default(),
            setup::rlm_child_model(Some(workspace.root())),
        )?;
        setup::configure_agents(&agents, workspace.root());
        crate::search_model::attach(&host)?;
        let audience = Audience { provider: args.provider.clone(), model: args.model.clone(), mode: args.mode };
        // Servers of the user's own config with no cached tool list start
        // discovering now, so the first tool_search can already find their tools.
        manager.start_discovery(&host.context(workspace.clone(), audience.clone()));
        let mut surface = Surface::hosted(host, manager, workspace, audience);
        surface.transcript_dir = args.transcript_dir.clone();
        let surface = Arc::new(surface);
        let pool = TaskPool::start(args.task_workers);
        let served = match args.transport {
            Transport::Stdio => {
                if args.listen.is_some() || args.allow_remote {
                    bail!("--listen and --allow-remote apply to --transport http only");
                }
                // Run by hand, a silent stdio server looks hung: say what it is.
                if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                    eprintln!(
                        "quiver speaks MCP on stdin/stdout and waits for an MCP client; register it with one, e.g. \
                         `claude mcp add quiver -- quiver mcp serve --workspace \"$PWD\"` (Ctrl-C to stop)"
                    );
                }
                tokio::select! {
                    served = quiver_mcp::server::serve_stdio(surface.clone()) => served,
                    () = shutdown_signal() => Ok(()),
                }
            }
            Transport::Http => {
                let options = HttpOptions { listen: args.listen.clone(), allow_remote: args.allow_remote, token };
                let server = HttpServer::bind(surface.clone(), options).await?;
                // Tests and scripts read the port from this line.
                eprintln!("listening on {}", server.url());
                server.run_until(shutdown_signal()).await
            }
        };
        // Downstream servers and task runs are our children: stop them whatever happened.
        pool.stop().await;
        surface.shutdown().await;
        served
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The durable-task pool running beside the server (`--task-workers`).
struct TaskPool {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

impl TaskPool {
    /// Grace for running tasks to record their interruption when the server stops;
    /// a run still going after it dies with this process and is reported
    /// interrupted by the next pool once its lease lapses.
    const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

    fn start(workers: usize) -> TaskPool {
        if workers == 0 {
            return TaskPool { stop: None, handle: None };
        }
        // No store (no state directory, a store from a newer quiver) must not
        // stop the server: its tools still work, tasks just do not run here.
        let store = match crate::cmd_tasks::store() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("quiver: durable tasks will not run in this server: {e:#}");
                return TaskPool { stop: None, handle: None };
            }
        };
        let options = crate::tasks_pool::PoolOptions {
            workers,
            lease_ms: 30_000,
            once: false,
            exec_args: Vec::new(),
            owner: format!("mcp-serve-{}-{}", std::process::id(), store.now()),
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            let stop = async {
                let _ = rx.await;
            };
            if let Err(e) = crate::tasks_pool::run(store, options, stop).await {
                eprintln!("quiver: the task pool stopped: {e:#}");
            }
        });
        TaskPool { stop: Some(tx), handle: Some(handle) }
    }

    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(handle) = self.handle.take() {
            let _ = tokio::time::timeout(Self::STOP_GRACE, handle).await;
        }
    }
}

/// Ctrl-C or SIGTERM: stop serving so downstream servers get shut down
/// instead of being orphaned.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `--token-env VAR` must name a set, non-empty variable; without it the
/// default variable is used when present.
fn token(args: &ServeArgs) -> anyhow::Result<Option<String>> {
    match &args.token_env {
        Some(var) => match quiver_sandbox::secret_env(var) {
            Some(value) if !value.trim().is_empty() => Ok(Some(value.trim().to_string())),
            _ => bail!("--token-env {var}: that environment variable is not set (or empty)"),
        },
        None => {
            Ok(quiver_sandbox::secret_env(DEFAULT_TOKEN_ENV).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()))
        }
    }
}
