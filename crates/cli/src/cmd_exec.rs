//! `quiver exec "PROMPT"|-` and `quiver exec resume SESSION_ID "PROMPT"`: a
//! headless agent run. Thin wiring: flags and output here; config layers,
//! transcripts, resume, event output and exit status live in
//! `quiver_agent::exec`. The engine's host comes from [`setup::host`] (native
//! tools plus MCP), so the model sees exactly the surface `quiver catalog` shows.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use quiver_agent::Effort;
use quiver_agent::exec::{self, ExecOptions, paths, resume};
use quiver_agent::relay;
use quiver_agent::run::{CompactionPolicy, EnginePort};
use quiver_engine::{Mode, Workspace};

use crate::agent_session::{self, AgentSession, OpenError};
use crate::setup;

#[derive(clap::Args)]
#[command(
    override_usage = "quiver exec [OPTIONS] \"PROMPT\" | -\n       quiver exec [OPTIONS] resume SESSION_ID \"PROMPT\"\n       quiver exec [OPTIONS] --from-relay [\"PROMPT\"]",
    after_help = "Exit status: 0 the model finished with an answer; 1 it gave up, hit --max-turns or the token \
budget, or the provider failed (the error names it); 2 usage or config error (a missing API key names its \
variable); 130 interrupted (Ctrl-C: running tools are cancelled, the transcript is kept).\n\n\
Config: [model] (provider, model, effort, max_output_tokens, context_window) and [providers.NAME] \
(base_url, api_key_env, wire, default_model) in ~/.config/quiver/config.toml ($QUIVER_CONFIG_DIR) and the \
workspace's quiver.toml; a project file may not set base_url or api_key_env. Flags win over both. Keys come \
only from the environment (DEEPSEEK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY, or the provider's api_key_env).\n\n\
Sessions are recorded in $QUIVER_STATE_DIR/sessions/<id>.jsonl (default ~/.local/state/quiver/sessions); \
`quiver exec resume ID PROMPT` continues one with its history and loaded tools, `quiver audit FILE` reports \
its prompt-cache behaviour, `quiver replay FILE` re-runs its tool calls. `quiver relay` (or a compaction) \
writes the workspace's .quiver/handoff.md; `--from-relay` starts a new session from it (the prompt is then \
optional: by default the session takes the relay's next action).\n\n\
Approvals: in agent mode, risky steps are asked on the terminal (y / n / a = always this session) when stdin \
and stderr are terminals and the prompt is not read from stdin; otherwise they are refused with a reason the \
model sees. plan refuses every write; yolo asks nothing (deny rules still hold).\n\n\
Tools: the catalog's head plus anything `tool_search` loads; `fim_edit` fills a marked region of a file \
through the provider's fill-in-the-middle endpoint (DeepSeek's /beta/completions; other providers report \
that they have none)."
)]
pub struct Args {
    /// The prompt (`-` reads it from stdin), or `resume SESSION_ID PROMPT`.
    #[arg(required_unless_present = "from_relay", num_args = 0..=3, value_name = "PROMPT")]
    words: Vec<String>,
    /// Start from the workspace's session relay (.quiver/handoff.md, see `quiver relay`).
    #[arg(long)]
    from_relay: bool,
    /// With --from-relay: read the relay from FILE instead.
    #[arg(long, value_name = "FILE", requires = "from_relay")]
    relay_file: Option<PathBuf>,
    #[command(flatten)]
    model_flags: crate::agent_session::ModelFlags,
    /// plan (read-only), agent (asks for risky steps), yolo (asks nothing). Default agent.
    #[arg(long)]
    mode: Option<Mode>,
    /// The workspace the tools work in (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Stop (exit 1) after this many model requests.
    #[arg(long, default_value_t = 50)]
    max_turns: u32,
    /// Reasoning effort: low, medium or high.
    #[arg(long, value_parser = parse_effort)]
    effort: Option<Effort>,
    /// One JSON event per line on stdout instead of human output.
    #[arg(long)]
    json: bool,
    /// Also write the final answer to FILE.
    #[arg(long, value_name = "FILE")]
    output_last_message: Option<PathBuf>,
}

fn parse_effort(s: &str) -> Result<Effort, String> {
    Effort::parse(s).ok_or_else(|| format!("`{s}` is not one of low, medium, high"))
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("quiver: {message}");
    ExitCode::from(exec::EXIT_USAGE)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (resume_id, prompt) = match args.words.as_slice() {
        [] if args.from_relay => (None, String::new()),
        [p] => (None, p.clone()),
        [r, id, p] if r == "resume" && !args.from_relay => (Some(id.clone()), p.clone()),
        [r, ..] if r == "resume" => return Ok(usage_error("--from-relay starts a new session; it cannot resume one")),
        _ => return Ok(usage_error("expected \"PROMPT\", `-`, or `resume SESSION_ID \"PROMPT\"`")),
    };
    let stdin_prompt = prompt == "-";
    let prompt = if stdin_prompt {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        prompt
    };
    if prompt.trim().is_empty() && !args.from_relay {
        return Ok(usage_error("the prompt is empty"));
    }
    let resumed = match &resume_id {
        Some(id) => match paths::session_path(id).map_err(anyhow::Error::from).and_then(|p| resume::read(&p)) {
            Ok(r) => Some(r),
            Err(e) => return Ok(usage_error(format!("cannot resume `{id}`: {e:#}"))),
        },
        None => None,
    };
    let recorded_ws = resumed.as_ref().and_then(|r| r.workspace.clone()).map(PathBuf::from);
    let dir = match args.workspace.clone().or(recorded_ws) {
        Some(dir) => dir,
        None => setup::workspace_dir(None)?,
    };
    let workspace = match Workspace::new(&dir) {
        Ok(w) => w,
        Err(e) => return Ok(usage_error(format!("workspace {}: {e:#}", dir.display()))),
    };
    let prompt = if args.from_relay {
        let file = args.relay_file.clone().unwrap_or_else(|| workspace.root().join(relay::RELAY_FILE));
        match relay::read(&file) {
            Ok(text) => relay::start_prompt(&text, Some(&prompt)),
            Err(e) => return Ok(usage_error(e)),
        }
    } else {
        prompt
    };
    let mode = args.mode.or_else(|| resumed.as_ref()?.mode.as_deref()?.parse().ok()).unwrap_or(Mode::Agent);

    let cli = args.model_flags.overrides(args.effort);
    // --json: children's events, tagged with their agent id, on the same stream.
    let tap = args.json.then(|| -> quiver_agent::subagent::EventTap {
        Arc::new(|event| setup::out(&quiver_engine::canonical::to_string(&event)))
    });
    let AgentSession { config, provider, host, manager, mut ctx, history, transcript_path, window, .. } =
        match agent_session::open(&workspace, &cli, mode, resumed, tap) {
            Ok(session) => session,
            Err(OpenError::Usage(e)) => return Ok(usage_error(e)),
            Err(OpenError::Other(e)) => return Err(e),
        };
    let session_id = ctx.session.id().to_string();
    if mode == Mode::Agent
        && let Some(approver) = exec::approver::TerminalApprover::if_interactive(stdin_prompt)
    {
        ctx.approver = Some(Arc::new(approver));
    }
    if !args.json {
        eprintln!(
            "quiver: session {session_id} ({} {}, {}) → {}",
            config.provider,
            config.model,
            mode.as_str(),
            transcript_path.display()
        );
    }
    let options = ExecOptions {
        model: config.model.clone(),
        effort: config.effort,
        max_output_tokens: config.max_output_tokens,
        max_turns: args.max_turns,
        token_budget: None,
        compaction: Some(CompactionPolicy::new(window)),
        json: args.json,
        stream: true,
    };
    // Compaction keeps its relay as the workspace's hand-off file, except in
    // plan mode, which changes nothing in the workspace.
    let port = EnginePort::hosted(host, ctx);
    let port = if mode == Mode::Plan { port } else { port.with_relay_file() };
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(async {
        let report = tokio::select! {
            report = exec::run(provider.as_ref(), &port, &options, history, &prompt) => Some(report),
            _ = tokio::signal::ctrl_c() => None,
        };
        manager.shutdown().await;
        report
    });
    // Every transcript event was flushed as it was written; nothing to flush here.
    let Some(report) = report else {
        if args.json {
            setup::out(r#"{"status":"interrupted","type":"session_ended"}"#);
        }
        eprintln!("quiver: interrupted; session {session_id} kept in {}", transcript_path.display());
        return Ok(ExitCode::from(exec::EXIT_INTERRUPTED));
    };
    if let Some(error) = &report.error {
        eprintln!("quiver: {error}");
    }
    if !args.json && !report.answer.is_empty() {
        setup::out(&report.answer);
    }
    if let Some(file) = &args.output_last_message {
        write_answer(file, &report.answer)?;
    }
    Ok(ExitCode::from(report.exit))
}

fn write_answer(file: &Path, answer: &str) -> anyhow::Result<()> {
    std::fs::write(file, answer).map_err(|e| anyhow::anyhow!("writing {}: {e}", file.display()))
}
