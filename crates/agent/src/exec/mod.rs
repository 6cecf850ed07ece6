//! `quiver exec`: one headless agent run over the engine, the logic behind
//! the CLI's thin command. The CLI builds the engine's host and context (it
//! owns the MCP wiring); everything else (config layers, transcript, resume,
//! event output, exit status, audit) is here so it can be tested and reused.

pub mod approver;
pub mod audit;
pub mod paths;
pub mod render;
pub mod resume;
pub mod sessions;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use quiver_engine::transcript::{Event, TRANSCRIPT_VERSION, TranscriptWriter};
use quiver_engine::{Audience, Workspace};

use crate::message::{Effort, Message};
use crate::provider::Provider;
use crate::run::{AgentLoop, CompactionPolicy, RunEvent, RunLimits, RunStatus, ToolPort};

/// Exit codes of `quiver exec`: a contract for scripts (`exec --help` lists
/// them, `crates/cli/tests` holds them).
pub const EXIT_DONE: u8 = 0;
pub const EXIT_GAVE_UP: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_INTERRUPTED: u8 = 130;

/// The system prompt. Constant on purpose: it is part of every request's
/// cached prefix, and a resumed session must send the same bytes.
pub const SYSTEM_PROMPT: &str = "You are quiver, a coding agent working in the user's workspace. \
Use the tools to read, search, change and verify code; paths are relative to the workspace. \
More tools exist than are listed: call tool_search to find and load them. \
When a call is refused, read the reason and adapt. Finish with a short answer that says what you did.";

#[derive(Debug, Clone)]
pub struct ExecOptions {
    pub model: String,
    pub effort: Option<Effort>,
    pub max_output_tokens: Option<u32>,
    pub max_turns: u32,
    pub token_budget: Option<u64>,
    pub compaction: Option<CompactionPolicy>,
    pub json: bool,
    pub stream: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExecReport {
    pub exit: u8,
    pub status: Option<RunStatus>,
    /// The last assistant text.
    pub answer: String,
    /// A failure worth a line on stderr (it names the provider).
    pub error: Option<String>,
}

/// Opens a session's transcript, writing its start when it is new.
pub fn open_transcript(
    path: &Path,
    session_id: &str,
    workspace: &Workspace,
    audience: &Audience,
    provider: &str,
) -> anyhow::Result<Arc<TranscriptWriter>> {
    let fresh = !path.exists();
    let writer = TranscriptWriter::open(path)?;
    if fresh {
        writer.append(&Event::SessionStart {
            version: TRANSCRIPT_VERSION,
            session: session_id.to_string(),
            quiver_version: quiver_engine::VERSION.to_string(),
            workspace: workspace.root().to_string_lossy().into_owned(),
            provider: provider.to_string(),
            model: audience.model.clone(),
            mode: audience.mode.as_str().to_string(),
        })?;
    }
    Ok(Arc::new(writer))
}

/// Writes a line to stdout; a closed pipe is not worth a panic.
fn out(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

fn err(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Runs the prompt, printing events as they come, and says how to exit.
pub async fn run(
    provider: &dyn Provider,
    port: &dyn ToolPort,
    options: &ExecOptions,
    history: Vec<Message>,
    prompt: &str,
) -> ExecReport {
    let json = options.json;
    let mut sink = move |event: RunEvent| {
        if json {
            if let Some(value) = render::json_event(&event) {
                out(&quiver_engine::canonical::to_string(&value));
            }
        } else if let Some(line) = render::human_line(&event) {
            err(&line);
        }
    };
    let agent = AgentLoop {
        provider,
        tools: port,
        model: options.model.clone(),
        system: SYSTEM_PROMPT.to_string(),
        max_output_tokens: options.max_output_tokens,
        effort: options.effort,
        stream: options.stream,
        limits: RunLimits { max_turns: options.max_turns, token_budget: options.token_budget },
        compaction: options.compaction,
    };
    match agent.run(history, prompt, &mut sink).await {
        Ok(outcome) => {
            let exit = if outcome.status == RunStatus::Done { EXIT_DONE } else { EXIT_GAVE_UP };
            let error = match &outcome.status {
                RunStatus::Done => None,
                RunStatus::MaxTurns => Some(format!("stopped after --max-turns {} turns", options.max_turns)),
                RunStatus::TokenBudget => Some("stopped: the token budget is spent".into()),
                RunStatus::Stopped(reason) => Some(format!("the model stopped without an answer ({reason:?})")),
                RunStatus::Failed(message) => Some(message.clone()),
            };
            ExecReport { exit, status: Some(outcome.status), answer: outcome.final_text, error }
        }
        Err(e) => ExecReport { exit: EXIT_GAVE_UP, status: None, answer: String::new(), error: Some(e.to_string()) },
    }
}
