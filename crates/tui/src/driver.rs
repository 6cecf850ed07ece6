//! The engine side of an interactive session: one `AgentLoop` run per
//! prompt, over the same provider, tool port, approver and transcript as
//! `quiver exec`. A run is a task; its events reach the front end over a
//! channel. Interrupting aborts the task and rebuilds the history from the
//! transcript (what `exec resume` does), so the next prompt continues a
//! conversation a provider accepts.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use quiver_agent::exec::{self, paths, resume};
use quiver_agent::message::{Effort, Message};
use quiver_agent::provider::{BoxFuture, Provider};
use quiver_agent::run::{AgentLoop, CompactionPolicy, EnginePort, RunLimits};
use quiver_engine::transcript::Transcript;
use quiver_engine::{EngineHost, Mode, Session, ToolContext, new_session_id};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::event::UiEvent;
use crate::palette::PaletteTool;
use crate::work::WorkSnapshot;

/// What only the composing program knows how to do (the CLI owns MCP
/// config and the tools' session state); the front end asks through this.
pub trait Hooks: Send + Sync {
    /// The Work panel's facts for this session now.
    fn work(&self, ctx: &ToolContext) -> WorkSnapshot;
    /// The tools the palette lists (runtime names, MCP servers named).
    fn palette_tools(&self, ctx: &ToolContext) -> Vec<PaletteTool>;
    /// `/jobs [show|poll|wait|stdin|cancel ID ...]`: the panel's lines.
    fn jobs<'a>(&'a self, ctx: &'a ToolContext, args: &'a [String]) -> BoxFuture<'a, Result<Vec<String>, String>>;
    /// `/mcp [init|add|enable|disable|remove|validate|reload ...]`.
    fn mcp<'a>(&'a self, ctx: &'a ToolContext, args: &'a [String]) -> BoxFuture<'a, Result<Vec<String>, String>>;
    /// Recorded sessions of this workspace, newest first: (id, description).
    fn sessions(&self, ctx: &ToolContext) -> Vec<(String, String)>;
}

pub struct DriverSetup {
    pub provider: Arc<dyn Provider>,
    pub provider_name: String,
    pub host: Arc<EngineHost>,
    /// The session's context: workspace, session, audience (mode), transcript.
    pub ctx: ToolContext,
    pub model: String,
    pub effort: Option<Effort>,
    pub max_output_tokens: Option<u32>,
    pub max_turns: u32,
    pub context_window: u64,
    pub transcript_path: PathBuf,
    /// A resumed session's conversation (empty for a new one).
    pub history: Vec<Message>,
    pub hooks: Arc<dyn Hooks>,
}

/// What a driver task does with the engine.
enum Work {
    Run { prompt: String, steering: Arc<Mutex<Vec<String>>> },
    Compact,
}

pub struct Driver {
    pub setup: DriverSetup,
    task: Option<JoinHandle<()>>,
    tx: mpsc::UnboundedSender<UiEvent>,
}

impl Driver {
    pub fn new(setup: DriverSetup, tx: mpsc::UnboundedSender<UiEvent>) -> Self {
        Driver { setup, task: None, tx }
    }

    pub fn mode(&self) -> Mode {
        self.setup.ctx.audience.mode
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.setup.ctx.audience.mode = mode;
    }

    pub fn set_model(&mut self, model: &str) {
        self.setup.model = model.to_string();
        self.setup.ctx.audience.model = Some(model.to_string());
    }

    pub fn running(&self) -> bool {
        self.task.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Starts a run of `prompt`; follow-ups queued in `steering` go to the
    /// model between turns. Ends with a `UiEvent::RunDone`.
    pub fn start(&mut self, prompt: String, steering: Arc<Mutex<Vec<String>>>) {
        self.spawn(Work::Run { prompt, steering });
    }

    /// `/compact`: summarizes the conversation now (a task like a run, with
    /// the same events), ending with a `UiEvent::RunDone`.
    pub fn compact(&mut self) {
        self.spawn(Work::Compact);
    }

    fn spawn(&mut self, work: Work) {
        let s = &self.setup;
        let provider = Arc::clone(&s.provider);
        let port = EnginePort::hosted(Arc::clone(&s.host), s.ctx.clone());
        // Compaction keeps its relay as the hand-off file, except in plan mode.
        let port = if s.ctx.audience.mode == Mode::Plan { port } else { port.with_relay_file() };
        let history = s.history.clone();
        let (model, effort, max_output_tokens, max_turns) =
            (s.model.clone(), s.effort, s.max_output_tokens, s.max_turns);
        let window = s.context_window;
        let tx = self.tx.clone();
        self.task = Some(tokio::spawn(async move {
            let agent = AgentLoop {
                provider: provider.as_ref(),
                tools: &port,
                model,
                system: exec::SYSTEM_PROMPT.to_string(),
                max_output_tokens,
                effort,
                stream: true,
                limits: RunLimits { max_turns, token_budget: None },
                compaction: Some(CompactionPolicy::new(window)),
            };
            let events_tx = tx.clone();
            let mut sink = move |event| {
                let _ = events_tx.send(UiEvent::Run(event));
            };
            let result = match work {
                Work::Run { prompt, steering } => {
                    let take = move || steering.lock().map(|mut q| std::mem::take(&mut *q)).unwrap_or_default();
                    agent.run_steered(history, &prompt, Some(&take), &mut sink).await.map(|outcome| outcome.messages)
                }
                Work::Compact => agent.compact_now(history, &mut sink).await,
            };
            let done = match result {
                Ok(messages) => UiEvent::RunDone { messages: Some(messages), error: None },
                Err(e) => UiEvent::RunDone { messages: None, error: Some(e.to_string()) },
            };
            let _ = tx.send(done);
        }));
    }

    /// The run finished: its conversation is the next run's history. Without
    /// one (a failure), the transcript says what the model saw.
    pub fn finished(&mut self, messages: Option<Vec<Message>>) {
        self.task = None;
        self.setup.history = match messages {
            Some(messages) => messages,
            None => self.history_from_transcript(),
        };
    }

    /// Stops the running turn: running tools are dropped (their processes
    /// die with their jobs), and the history is what the transcript kept.
    pub fn interrupt(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        self.setup.history = self.history_from_transcript();
    }

    /// Moves to a recorded session (`Some(id)`: its history and loaded
    /// tools) or a new one. The old session's jobs end with it.
    pub fn switch_session(&mut self, id: Option<&str>) -> anyhow::Result<()> {
        anyhow::ensure!(!self.running(), "a turn is running");
        let (session_id, history, lazy) = match id {
            Some(id) => {
                let resumed = resume::read(&paths::session_path(id)?)?;
                (resumed.session_id, resumed.messages, Some(resumed.lazy))
            }
            None => (new_session_id(), Vec::new(), None),
        };
        let session = Arc::new(Session::new(session_id.clone()));
        if let Some(lazy) = lazy {
            session.restore_lazy_state(lazy);
        }
        let path = paths::session_path(&session_id)?;
        let ctx = &self.setup.ctx;
        let transcript =
            exec::open_transcript(&path, &session_id, &ctx.workspace, &ctx.audience, &self.setup.provider_name)?;
        self.setup.ctx.session = session;
        self.setup.ctx.transcript = Some(transcript);
        self.setup.transcript_path = path;
        self.setup.history = history;
        Ok(())
    }

    fn history_from_transcript(&self) -> Vec<Message> {
        match Transcript::read(&self.setup.transcript_path) {
            Ok(transcript) => resume::history(&transcript),
            Err(e) => {
                tracing::warn!(error = %e, "could not re-read the transcript; keeping the last history");
                self.setup.history.clone()
            }
        }
    }
}
