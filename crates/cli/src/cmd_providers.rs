//! `quiver providers check [NAME] [--json] [--recheck]`: what a configured
//! provider's server does (see `quiver_agent::probe`), as one table. The
//! result is cached per base URL and model in the state directory and used by
//! the wire from then on; a cached result is shown again unless `--recheck`.
//!
//! Exit status: 0 when the server answered a plain chat (quiver can work with
//! it, around whatever the table says), 1 when it did not, 2 on usage errors.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use quiver_agent::CliOverrides;
use quiver_agent::exec::paths;
use quiver_agent::probe::{self, Report, Target};
use serde_json::json;

use crate::setup;

#[derive(clap::Subcommand)]
pub enum Providers {
    /// Probe a provider: reachable, key, model, chat, streaming, tool calls, usage, deferred tools, vision, FIM.
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The provider (default: the configured one, `[model] provider`).
    name: Option<String>,
    /// The model to check (default: the configured one).
    #[arg(long)]
    model: Option<String>,
    /// Probe this base URL instead of the provider's.
    #[arg(long)]
    base_url: Option<String>,
    /// The workspace whose `quiver.toml` is read too (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Probe again even when a cached result exists.
    #[arg(long)]
    recheck: bool,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: Providers) -> anyhow::Result<ExitCode> {
    match cmd {
        Providers::Check(args) => check(args),
    }
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("quiver: {message}");
    ExitCode::from(2)
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let root = setup::workspace_dir(args.workspace.as_deref())?;
    let cli = CliOverrides {
        provider: args.name.clone(),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        effort: None,
        max_output_tokens: None,
    };
    let config = match paths::read_layers(&root).and_then(|layers| paths::load_config(&layers, &cli)) {
        Ok(config) => config,
        Err(e) => return Ok(usage_error(e)),
    };
    let mut target = match Target::from_config(&config, &quiver_sandbox::secret_env) {
        Ok(target) => target,
        Err(e) => return Ok(usage_error(e)),
    };
    target.timeout = std::time::Duration::from_secs(args.timeout.max(1));
    let choice = target.tool_choice.as_deref();
    let cached = if args.recheck { None } else { probe::load(&target.base_url, &target.model, choice) };
    let (report, from_cache) = match cached {
        Some(report) => (report, true),
        None => {
            let runtime = tokio::runtime::Runtime::new()?;
            (runtime.block_on(probe::check(&target)), false)
        }
    };
    let stored =
        if from_cache { probe::cache_path(&target.base_url, &target.model, choice) } else { Some(store(&report)) };
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["cached"] = json!(from_cache);
        value["cache_file"] = json!(stored.as_ref().map(|p| p.display().to_string()));
        value["works_around"] = json!(report.learned.describe());
        setup::out(&quiver_engine::canonical::to_string(&value));
    } else {
        print_table(&report, from_cache, stored.as_ref());
    }
    Ok(if report.usable() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Caches `report`; a state directory that cannot be written is reported, not fatal.
fn store(report: &Report) -> PathBuf {
    match probe::store(report) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("quiver: the result is not cached: {e}");
            PathBuf::new()
        }
    }
}

fn print_table(report: &Report, from_cache: bool, stored: Option<&PathBuf>) {
    setup::out(&format!("{} ({} wire) {}, model {}", report.provider, report.wire, report.base_url, report.model));
    let width = report.rows.iter().map(|r| probe::label(&r.check).chars().count()).max().unwrap_or(0);
    for row in &report.rows {
        let time = row.ms.map(|ms| format!(" ({ms} ms)")).unwrap_or_default();
        setup::out(&format!("  {:width$}  {:3}  {}{time}", probe::label(&row.check), row.status.as_str(), row.detail));
    }
    let around = report.learned.describe();
    if around.is_empty() {
        setup::out("quiver works around: nothing");
    } else {
        setup::out(&format!("quiver works around: {}", around.join("; ")));
    }
    let when = if from_cache {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        format!("checked {} ago (cached; --recheck probes again)", ago(now.saturating_sub(report.checked_at)))
    } else {
        "checked now".to_string()
    };
    match stored.filter(|p| !p.as_os_str().is_empty()) {
        Some(path) => setup::out(&format!("{when}; {}", path.display())),
        None => setup::out(&when),
    }
}

fn ago(secs: u64) -> String {
    match secs {
        0..120 => format!("{secs} s"),
        120..7200 => format!("{} min", secs / 60),
        7200..172_800 => format!("{} h", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}
