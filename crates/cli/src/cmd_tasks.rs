//! `quiver tasks [--json] [--state S]` lists durable tasks; `quiver tasks run`
//! runs the worker pool (and due automations) in the foreground.

use std::process::ExitCode;

use quiver_durable::{Store, TaskFilter, TaskState};

use crate::setup;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    /// One JSON object per task instead of a table.
    #[arg(long)]
    json: bool,
    /// Only tasks in this state (queued, running, succeeded, failed, cancelled, interrupted).
    #[arg(long)]
    state: Vec<String>,
    /// At most this many, newest first.
    #[arg(long, default_value_t = 50)]
    limit: usize,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Run queued tasks (each a `quiver exec` child) and due automations until Ctrl-C.
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// How many tasks run at once.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Exit once nothing is queued or running.
    #[arg(long)]
    once: bool,
    /// Passed to every run's `quiver exec`.
    #[arg(long)]
    provider: Option<String>,
    /// Passed to every run's `quiver exec`.
    #[arg(long)]
    base_url: Option<String>,
    /// Passed to every run's `quiver exec` (default 50).
    #[arg(long)]
    max_turns: Option<u32>,
    /// How long a claimed task stays this pool's without a heartbeat; a task
    /// whose pool died is reported interrupted once its lease lapses.
    #[arg(long, default_value_t = 30_000)]
    lease_ms: i64,
}

pub(crate) fn store() -> anyhow::Result<Store> {
    let dir = std::env::var_os(quiver_tools::work::WORK_DIR_ENV)
        .map(std::path::PathBuf::from)
        .or_else(Store::default_dir)
        .ok_or_else(|| anyhow::anyhow!("no state directory for durable tasks: set QUIVER_STATE_DIR"))?;
    Ok(Store::open(&dir)?)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(Sub::Run(run)) => run_pool(run),
        None => list(&args),
    }
}

fn list(args: &Args) -> anyhow::Result<ExitCode> {
    let states = args.state.iter().map(|s| TaskState::parse(s)).collect::<Result<Vec<_>, _>>()?;
    let tasks = store()?.list_tasks(&TaskFilter { states, limit: Some(args.limit) })?;
    if args.json {
        for t in &tasks {
            setup::out(&serde_json::to_string(t)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if tasks.is_empty() {
        setup::out("no tasks");
        return Ok(ExitCode::SUCCESS);
    }
    for t in &tasks {
        let prompt: String = t.prompt.chars().take(60).collect::<String>().replace('\n', " ");
        setup::out(&format!("{:<10} {:<12} {:<24} {prompt}", t.id, t.state.as_str(), t.created_at));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_pool(args: RunArgs) -> anyhow::Result<ExitCode> {
    let store = store()?;
    let mut exec_args = Vec::new();
    if let Some(p) = args.provider {
        exec_args.extend(["--provider".to_string(), p]);
    }
    if let Some(u) = args.base_url {
        exec_args.extend(["--base-url".to_string(), u]);
    }
    if let Some(n) = args.max_turns {
        exec_args.extend(["--max-turns".to_string(), n.to_string()]);
    }
    let options = crate::tasks_pool::PoolOptions {
        workers: args.workers,
        lease_ms: args.lease_ms.max(100),
        once: args.once,
        exec_args,
        owner: format!("pool-{}-{}", std::process::id(), store.now()),
    };
    eprintln!("quiver: task pool ({} workers) on {}", options.workers, store.dir().display());
    let runtime = tokio::runtime::Runtime::new()?;
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let finished = runtime.block_on(crate::tasks_pool::run(store, options, stop))?;
    eprintln!("quiver: task pool stopped after {finished} task(s)");
    Ok(ExitCode::SUCCESS)
}
