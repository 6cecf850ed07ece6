//! `quiver` on a terminal: the interactive agent. `quiver resume [ID]` and
//! `quiver --continue` pick up a recorded session of this workspace. The
//! session is opened exactly as `quiver exec` opens one (`agent_session`);
//! only the front end differs. Without a terminal it prints usage and exits
//! 2: a script that meant `quiver exec` must not hang on a screen nobody sees.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use quiver_agent::Effort;
use quiver_agent::exec::{self, paths, resume};
use quiver_engine::{Mode, Workspace};
use quiver_tui::driver::DriverSetup;
use quiver_tui::runner::{self, Options};
use quiver_tui::theme::Theme;

use crate::agent_session::{self, AgentSession, OpenError};
use crate::setup;

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// A first prompt, sent once the screen is up.
    #[arg(value_name = "PROMPT")]
    prompt: Option<String>,
    /// Continue the newest session recorded in this workspace.
    #[arg(short = 'c', long = "continue")]
    continue_last: bool,
    #[command(flatten)]
    model_flags: crate::agent_session::ModelFlags,
    /// plan, agent (default) or yolo; Shift+Tab switches while you work.
    #[arg(long)]
    mode: Option<Mode>,
    /// The workspace the tools work in (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Reasoning effort: low, medium or high.
    #[arg(long, value_parser = |s: &str| Effort::parse(s).ok_or_else(|| format!("`{s}` is not one of low, medium, high")))]
    effort: Option<Effort>,
    /// Model requests per prompt, at most.
    #[arg(long, default_value_t = 100)]
    max_turns: u32,
}

#[derive(clap::Args, Debug)]
pub struct ResumeArgs {
    /// The session to continue (default: choose from this workspace's sessions).
    id: Option<String>,
    /// Continue the newest session of this workspace without asking.
    #[arg(long)]
    last: bool,
    #[command(flatten)]
    rest: Args,
}

fn usage(message: &str) -> ExitCode {
    eprintln!("quiver: {message}");
    ExitCode::from(exec::EXIT_USAGE)
}

/// What to resume: a named session, the newest one, or the picker.
enum Start {
    New,
    Session(String),
    Newest,
    Pick,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let start = if args.continue_last { Start::Newest } else { Start::New };
    interactive(args, start)
}

pub fn resume(args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let start = match (args.id, args.last) {
        (Some(id), _) => Start::Session(id),
        (None, true) => Start::Newest,
        (None, false) => Start::Pick,
    };
    interactive(args.rest, start)
}

fn interactive(args: Args, start: Start) -> anyhow::Result<ExitCode> {
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        let mut help = <crate::Cli as clap::CommandFactory>::command();
        eprintln!("{}", help.render_usage());
        return Ok(usage(
            "the interactive agent needs a terminal; for scripts use `quiver exec \"PROMPT\"` (see quiver --help)",
        ));
    }
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let workspace = match Workspace::new(&dir) {
        Ok(w) => w,
        Err(e) => return Ok(usage(&format!("workspace {}: {e:#}", dir.display()))),
    };
    let mut pick = false;
    let resumed = match start {
        Start::New => None,
        Start::Pick => {
            pick = true;
            None
        }
        Start::Newest => match quiver_agent::exec::sessions::workspace_sessions(workspace.root()).into_iter().next() {
            Some(path) => Some(read_session(&path)?),
            None => return Ok(usage(&format!("no recorded session in {} to continue", workspace.root().display()))),
        },
        Start::Session(id) => {
            match paths::session_path(&id).map_err(anyhow::Error::from).and_then(|p| resume::read(&p)) {
                Ok(r) => Some(r),
                Err(e) => return Ok(usage(&format!("cannot resume `{id}`: {e:#}"))),
            }
        }
    };
    let mode = args.mode.or_else(|| resumed.as_ref()?.mode.as_deref()?.parse().ok()).unwrap_or(Mode::Agent);
    let cli = args.model_flags.overrides(args.effort);
    let runtime = tokio::runtime::Runtime::new()?;
    let _guard = runtime.enter();
    let resumed_from = resumed.as_ref().map(|r| r.session_id.clone());
    let AgentSession { config, provider, host, manager, agents, mut ctx, history, transcript_path, window } =
        match agent_session::open(&workspace, &cli, mode, resumed, None) {
            Ok(session) => session,
            Err(OpenError::Usage(e)) => return Ok(usage(&e)),
            Err(OpenError::Other(e)) => return Err(e),
        };
    let (tx, rx) = runner::channel();
    // Every mode gets the approver: plan and yolo never ask, agent asks here.
    ctx.approver = Some(Arc::new(quiver_tui::approval::UiApprover::new(tx.clone())));
    let hooks = Arc::new(crate::tui_hooks::CliHooks {
        host: Arc::clone(&host),
        manager: Arc::clone(&manager),
        agents,
        workspace: workspace.root().to_path_buf(),
    });
    let session_id = ctx.session.id().to_string();
    let banner = vec![match &resumed_from {
        Some(id) => format!("resumed session {id} · {} · {}", config.provider, config.model),
        None => {
            format!("quiver {} · session {session_id} · {} · {}", quiver_engine::VERSION, config.provider, config.model)
        }
    }];
    let setup = DriverSetup {
        provider,
        provider_name: config.provider.clone(),
        host,
        ctx,
        model: config.model.clone(),
        effort: config.effort,
        max_output_tokens: config.max_output_tokens,
        max_turns: args.max_turns,
        context_window: window,
        transcript_path: transcript_path.clone(),
        history,
        hooks,
    };
    let options = Options { prompt: args.prompt.clone(), theme: Theme::from_env(), banner, pick_session: pick };
    let result = runtime.block_on(async {
        let result = runner::run(setup, tx, rx, options).await;
        manager.shutdown().await;
        result
    });
    result?;
    // Where to find it again; on stderr, so stdout stays clean after exit.
    eprintln!("quiver: session {session_id} kept in {} (quiver resume {session_id})", transcript_path.display());
    Ok(ExitCode::SUCCESS)
}

fn read_session(path: &std::path::Path) -> anyhow::Result<resume::Resumed> {
    resume::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e:#}", path.display()))
}
