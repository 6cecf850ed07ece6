//! `quiver`: the command-line face of the engine. Each subcommand is a thin
//! module over the library crates; output formats and exit codes are a
//! contract for scripts (`tests/cli.rs` holds them).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod agent_session;
mod cmd_agents;
mod cmd_audit;
mod cmd_bench;
#[cfg(feature = "semantic")]
mod cmd_bench_semantic;
mod cmd_bench_tui;
mod cmd_call;
mod cmd_catalog;
mod cmd_exec;
mod cmd_lint;
mod cmd_mcp;
mod cmd_mcp_auth;
mod cmd_mcp_manage;
mod cmd_models;
mod cmd_providers;
mod cmd_relay;
mod cmd_replay;
mod cmd_sandbox;
mod cmd_search;
mod cmd_tasks;
mod cmd_tools;
mod cmd_tui;
mod own_secrets;
mod search_model;
mod setup;
mod tasks_pool;
mod tui_hooks;

#[derive(Parser)]
#[command(
    name = "quiver",
    version,
    about = "Tool-surface engine and runtime for LLM coding agents",
    long_about = "Tool-surface engine and runtime for LLM coding agents.\n\n\
With no command, on a terminal, `quiver [PROMPT]` opens the interactive agent in the current directory \
(`quiver resume` or `--continue` picks up a recorded session). Without a terminal it prints usage and \
exits 2; scripts use `quiver exec`.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    interactive: cmd_tui::Args,
}

#[derive(Subcommand)]
enum Command {
    /// Every tool name with its lifecycle state, canonical name, domain and risk.
    Tools(cmd_tools::Args),
    /// The tool list a model gets for one request (head + loaded tail).
    Catalog(cmd_catalog::Args),
    /// Check the lifecycle manifest against the registered tools.
    Lint(cmd_lint::Args),
    /// Dispatch one tool call and print the result JSON.
    Call(cmd_call::Args),
    /// Search the tool surface the way `tool_search` does.
    Search(cmd_search::Args),
    /// Re-run a transcript's tool calls and compare the results.
    Replay(cmd_replay::Args),
    /// Benchmarks (quality and speed), reported as numbers.
    #[command(subcommand)]
    Bench(cmd_bench::Bench),
    /// Continue a recorded session in the interactive agent (no ID: choose one of this workspace's).
    Resume(cmd_tui::ResumeArgs),
    /// Run a headless coding agent on a prompt (`exec resume ID PROMPT` continues a session).
    Exec(cmd_exec::Args),
    /// Write a session relay (.quiver/handoff.md) from a recorded session, for `exec --from-relay`.
    Relay(cmd_relay::Args),
    /// Sub-agent records (id, name, role, state, boot, started, duration, tokens).
    Agents(cmd_agents::Args),
    /// Per model request of a session transcript: shared-prefix bytes, head changes, cache hits.
    Audit(cmd_audit::Args),
    /// Durable background tasks: list them, or `tasks run` the worker pool.
    Tasks(cmd_tasks::Args),
    /// MCP: serve quiver to MCP clients (`mcp serve`), and manage the servers quiver uses (`mcp add|list|validate|...`).
    #[command(subcommand)]
    Mcp(cmd_mcp::Mcp),
    /// Run a command in the sandbox agent mode runs model-written lines in; `--check` shows what this machine offers.
    Sandbox(cmd_sandbox::Args),
    /// Sentence-embedding models for tool search (`models pull`, `models list`).
    #[command(subcommand)]
    Models(cmd_models::Models),
    /// Model providers: `providers check [NAME]` probes what a server does (cached, used by the wire).
    #[command(subcommand)]
    Providers(cmd_providers::Providers),
}

/// Sets `RAYON_NUM_THREADS` to this machine's parallelism unless the user set
/// it: the same count rayon and candle default to, read once. Without it candle
/// works the count out on every matrix product (on Linux, reading cgroup files),
/// 1-1.5 ms of a 10 ms query encoding here.
#[allow(unsafe_code)]
fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    // SAFETY: called at the start of `main`, before any thread of this process
    // exists, so no other thread can be reading the environment.
    unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
}

fn main() -> ExitCode {
    // quiver started again as its own reaper (see `quiver_sandbox::reap_if_asked`):
    // nothing else of quiver's runs there.
    #[cfg(target_os = "linux")]
    if let Some(code) = quiver_sandbox::reap_if_asked() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    pin_thread_count();
    let cli = Cli::parse();
    let interactive = matches!(cli.command, None | Some(Command::Resume(_)));
    init_logging(interactive);
    // Still one thread: the keys leave quiver's environment (and the block
    // `/proc/<pid>/environ` shows) before anything could start another, and
    // before quiver turns non-dumpable, which would close its own
    // /proc/self/environ to it when it is not root.
    let token_env = match &cli.command {
        Some(Command::Mcp(mcp)) => cmd_mcp::token_env(mcp),
        _ => None,
    };
    let withheld = own_secrets::withhold(token_env);
    // No other process of the user's reads quiver's memory, where the keys
    // now are.
    if !quiver_sandbox::keep_own_memory_private() {
        tracing::debug!("could not make quiver non-dumpable");
    }
    match withheld {
        Ok(withheld) => {
            if let Some(why) = withheld.block_left.filter(|_| !withheld.names.is_empty()) {
                tracing::warn!(%why, "quiver's keys are out of its environment but still in /proc/<pid>/environ");
            }
        }
        Err(e) if cfg!(target_os = "linux") => tracing::warn!(%e, "quiver's keys stay in its environment"),
        Err(e) => tracing::debug!(%e, "quiver's keys stay in its environment"),
    }
    // Jobs' leftovers are swept as soon as quiver is gone, even after a kill -9.
    #[cfg(target_os = "linux")]
    quiver_sandbox::enable_reaper();
    let Some(command) = cli.command else {
        return finish(cmd_tui::run(cli.interactive));
    };
    let result = match command {
        Command::Tools(args) => cmd_tools::run(args),
        Command::Catalog(args) => cmd_catalog::run(args),
        Command::Lint(args) => cmd_lint::run(args),
        Command::Tasks(args) => cmd_tasks::run(args),
        Command::Call(args) => cmd_call::run(args),
        Command::Search(args) => cmd_search::run(args),
        Command::Bench(bench) => cmd_bench::run(bench),
        Command::Mcp(mcp) => cmd_mcp::run(mcp),
        Command::Models(cmd) => cmd_models::run(cmd),
        Command::Sandbox(args) => cmd_sandbox::run(args),
        Command::Providers(cmd) => cmd_providers::run(cmd),
        Command::Replay(args) => cmd_replay::run(args),
        Command::Exec(args) => cmd_exec::run(args),
        Command::Relay(args) => cmd_relay::run(args),
        Command::Audit(args) => cmd_audit::run(args),
        Command::Agents(args) => cmd_agents::run(args),
        Command::Resume(args) => cmd_tui::resume(args),
    };
    finish(result)
}

/// Logs go to stderr, except in the interactive agent, where a line on
/// stderr would land in the middle of the screen: there they go to
/// `$QUIVER_STATE_DIR/logs/quiver.log` (nowhere, if that cannot be opened).
fn init_logging(interactive: bool) {
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("QUIVER_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"))
    };
    if interactive {
        let file = quiver_agent::exec::paths::state_dir().and_then(|dir| {
            let dir = dir.join("logs");
            std::fs::create_dir_all(&dir).ok()?;
            std::fs::OpenOptions::new().create(true).append(true).open(dir.join("quiver.log")).ok()
        });
        let writer = std::sync::Mutex::new(match file {
            Some(file) => Box::new(file) as Box<dyn std::io::Write + Send>,
            None => Box::new(std::io::sink()),
        });
        tracing_subscriber::fmt().with_writer(writer).with_env_filter(filter()).with_ansi(false).init();
        return;
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter())
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("quiver: {err:#}");
            ExitCode::from(2)
        }
    }
}
