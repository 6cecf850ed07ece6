//! `quiver sandbox [--policy read-only|workspace-write] [--network] -- CMD…`
//! and `quiver sandbox --check`.
//!
//! Runs a command in the sandbox a model-written line gets in agent mode (the
//! same builder, deny rules, limits and environment scrub), so a user can see
//! for themselves what a command may do, and prints which mechanisms this
//! machine offers and what each leaves open.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use quiver_engine::Workspace;
use quiver_sandbox::SandboxMechanism;
use quiver_tools::process::Launch;

use crate::setup;

#[derive(clap::Args)]
#[command(arg_required_else_help = true)]
pub struct Args {
    /// What the command may write: nothing but its private /tmp, or the workspace too.
    #[arg(long, value_enum, default_value_t = Policy::WorkspaceWrite)]
    policy: Policy,
    /// Let the command reach the network (an approved `escalate: "network"`).
    #[arg(long)]
    network: bool,
    /// The workspace (writable under workspace-write): `--workspace`, else the current directory.
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Force a mechanism instead of the best this machine offers.
    #[arg(long, value_enum)]
    mechanism: Option<Mechanism>,
    /// Print which mechanisms work on this machine and what each protects, then exit.
    #[arg(long, conflicts_with = "command")]
    check: bool,
    /// The command and its arguments (no shell: use `-- sh -c '…'` for one).
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Policy {
    ReadOnly,
    WorkspaceWrite,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Mechanism {
    Namespaces,
    Landlock,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.check {
        setup::out(check_report().trim_end());
        return Ok(if quiver_tools::process::sandbox_available() { ExitCode::SUCCESS } else { ExitCode::FAILURE });
    }
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("nothing to run: give the command after `--`, e.g. `quiver sandbox -- ls -la`");
    };
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let workspace = Workspace::new(&dir).with_context(|| format!("workspace {}", dir.display()))?;
    let engine = setup::engine(Some(workspace.root()), None)?;
    let audience =
        quiver_engine::Audience { provider: "default".into(), model: None, mode: quiver_engine::Mode::Agent };
    let ctx = engine.context(workspace, audience);
    let mechanism = args.mechanism.map(|m| match m {
        Mechanism::Namespaces => SandboxMechanism::Namespaces,
        Mechanism::Landlock => SandboxMechanism::Landlock,
    });
    let read_only = matches!(args.policy, Policy::ReadOnly);
    let launch = Launch::standalone(&ctx, read_only, args.network, mechanism).map_err(|e| anyhow::anyhow!("{e}"))?;

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(rest);
        let running = launch.prepare(&mut cmd)?;
        let mut child = cmd.spawn().with_context(|| format!("cannot start `{program}`"))?;
        running.started(child.id());
        let status = tokio::select! {
            status = child.wait() => status?,
            // The terminal's Ctrl-C reaches quiver; the job may sit in a
            // process group of its own, so quiver ends it.
            _ = tokio::signal::ctrl_c() => {
                running.kill();
                return Ok(ExitCode::from(130));
            }
        };
        Ok(exit_code(status))
    })
}

/// The command's own code, or 128 + the signal that ended it, as shells report it.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Every mechanism, whether it works here (or why not), and what it leaves open.
pub fn check_report() -> String {
    let probe = quiver_sandbox::probe();
    let mut out = String::new();
    let state = |r: &Result<(), quiver_sandbox::ProbeError>| match r {
        Ok(()) => "available".to_string(),
        Err(e) => format!("unavailable: {e}"),
    };
    out.push_str(&format!("namespaces: {}\n", state(&probe.namespaces)));
    out.push_str(&format!(
        "landlock: {}\n",
        match &probe.landlock {
            Ok(abi) => format!("available (ABI {abi})"),
            Err(e) => format!("unavailable: {e}"),
        }
    ));
    out.push_str(&format!("seccomp: {}\n", state(&probe.seccomp)));
    let active = quiver_tools::process::mechanism();
    out.push_str(&format!("in use: {}\n", active.as_str()));
    match active {
        SandboxMechanism::None => {
            out.push_str("agent mode asks before every model-written command: there is no sandbox to run it in\n")
        }
        _ => {
            out.push_str("protects:\n");
            for line in active.protects() {
                out.push_str(&format!("  - {line}\n"));
            }
        }
    }
    let gaps = active.gaps();
    if !gaps.is_empty() {
        out.push_str("does not protect (the namespace sandbox would):\n");
        for line in gaps {
            out.push_str(&format!("  - {line}\n"));
        }
    }
    out
}
