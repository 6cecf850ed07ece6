//! The front end's state, with no terminal in it: the transcript, the
//! composer, the mode, what the run is doing, pending approvals and the open
//! overlay. Run events and keys go in; [`Action`]s come out for the runner
//! to carry out against the engine. Tests drive this directly.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quiver_agent::message::{StreamEvent, Usage};
use quiver_agent::run::{RunEvent, RunStatus};
use quiver_engine::Mode;
use tokio::sync::oneshot;

use crate::cells::{CellKind, ToolCell, ToolStatus, Transcript};
use crate::composer::Composer;
use crate::palette::Palette;
use crate::slash::Slash;
use crate::work::WorkSnapshot;

/// What the runner does for the app.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start a run with this prompt.
    Submit(String),
    Interrupt,
    Quit,
    Suspend,
    /// A command that needs the engine (mode, mcp, jobs, relay, ...).
    Command(Slash),
    /// A session from the picker.
    Resume(String),
}

/// A question the engine is waiting on.
pub struct Approval {
    pub question: String,
    pub reply: oneshot::Sender<Answer>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    Always,
    No,
}

/// A panel over the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    Palette(Palette),
    /// Text a command produced (`/jobs`, `/mcp`, `/status`, `/tools`, `/diff`).
    Panel {
        title: String,
        lines: Vec<String>,
        scroll: usize,
    },
    /// Recorded sessions of this workspace: (id, one-line description).
    Sessions {
        items: Vec<(String, String)>,
        selected: usize,
    },
    ConfirmYolo,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    Idle,
    Running { since: Instant, turn: u32 },
}

/// The footer's facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footer {
    pub provider: String,
    pub model: String,
    pub session_id: String,
    /// The last request's prompt + answer tokens, and the model's window.
    pub context_used: Option<u64>,
    pub context_window: u64,
    /// The last request's share of prompt tokens served from cache.
    pub cached_share: Option<f64>,
    /// `cached_share` is quiver's estimate (the prefix shared with the
    /// previous request), not the server's figure.
    pub cached_estimated: bool,
    pub total: Usage,
}

pub struct App {
    pub transcript: Transcript,
    pub composer: Composer,
    pub mode: Mode,
    pub run: RunState,
    pub footer: Footer,
    pub approvals: VecDeque<Approval>,
    pub overlay: Option<Overlay>,
    /// Follow-ups typed while the run works, taken by the run between turns.
    pub queued: Arc<Mutex<Vec<String>>>,
    pub work: WorkSnapshot,
    pub show_work: bool,
    /// Lines scrolled up from the bottom of the transcript (0 follows it).
    pub scroll: usize,
    /// The foldable cell Ctrl+O folds; `None` means the latest one.
    pub selected: Option<usize>,
    pub yolo_confirmed: bool,
    /// The first Ctrl-C's time: a second one soon after quits.
    pub quit_armed: Option<Instant>,
    /// "Now" for elapsed times (set by the runner's clock, fixed in tests).
    pub now: Instant,
    /// Completions for the `@path` being typed.
    pub mentions: Vec<String>,
    pub files: Arc<Vec<String>>,
    /// The tool surface for the palette (native and MCP, runtime names).
    pub palette_tools: Vec<crate::palette::PaletteTool>,
    pub should_quit: bool,
    /// The last approval was declined: the composer invites a reason, which
    /// (typed while the run works) reaches the model after the refused call.
    pub declined: bool,
    /// Reasoning streamed this turn (its summary would repeat it).
    turn_reasoned: bool,
    /// The run's failure is on screen already (its end repeats it).
    pub failure_shown: bool,
}

impl App {
    pub fn new(mode: Mode, footer: Footer) -> Self {
        App {
            transcript: Transcript::default(),
            composer: Composer::default(),
            mode,
            run: RunState::Idle,
            footer,
            approvals: VecDeque::new(),
            overlay: None,
            queued: Arc::new(Mutex::new(Vec::new())),
            work: WorkSnapshot::default(),
            show_work: false,
            scroll: 0,
            selected: None,
            yolo_confirmed: mode == Mode::Yolo,
            quit_armed: None,
            now: Instant::now(),
            mentions: Vec::new(),
            files: Arc::new(Vec::new()),
            palette_tools: Vec::new(),
            should_quit: false,
            declined: false,
            turn_reasoned: false,
            failure_shown: false,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.run, RunState::Running { .. })
    }

    pub fn queued(&self) -> Vec<String> {
        self.queued.lock().map(|q| q.clone()).unwrap_or_default()
    }

    /// Takes what was queued and not yet sent (the next run's prompt).
    pub fn take_queued(&self) -> Vec<String> {
        self.queued.lock().map(|mut q| std::mem::take(&mut *q)).unwrap_or_default()
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.transcript.push(CellKind::Info { text: text.into() });
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.transcript.push(CellKind::Error { text: text.into() });
    }

    /// A run starts with `prompt` (already shown or about to be).
    pub fn run_started(&mut self, prompt: &str) {
        self.transcript.push(CellKind::User { text: prompt.to_string(), steered: false });
        self.run = RunState::Running { since: self.now, turn: 0 };
        self.failure_shown = false;
        self.scroll = 0;
    }

    pub fn on_run_event(&mut self, event: RunEvent) {
        match event {
            RunEvent::SessionStarted { session_id, .. } => self.footer.session_id = session_id,
            RunEvent::TurnStarted { turn } => {
                self.turn_reasoned = false;
                if let RunState::Running { turn: t, .. } = &mut self.run {
                    *t = turn;
                }
            }
            RunEvent::Delta(StreamEvent::TextDelta(text)) => self.transcript.stream_text(&text),
            RunEvent::Delta(StreamEvent::ReasoningDelta(text)) => {
                self.turn_reasoned = true;
                self.transcript.stream_reasoning(&text);
            }
            RunEvent::Delta(StreamEvent::Retrying { attempt, wait, reason }) => self.info(format!(
                "retrying (attempt {attempt}) in {:.1}s: {}",
                wait.as_secs_f64(),
                crate::cells::first_line(&reason)
            )),
            RunEvent::Delta(_) => {}
            RunEvent::ModelMessage { text } => self.transcript.finish_text(&text),
            RunEvent::ReasoningSummary { summary, chars } => {
                // Streamed reasoning is already shown; a non-streaming reply shows its start.
                if !self.turn_reasoned {
                    self.transcript.push(CellKind::Reasoning { text: summary, chars });
                }
            }
            RunEvent::ToolCallBegun { id, name, arguments } => {
                self.transcript.push(CellKind::Tool(ToolCell {
                    id,
                    name,
                    arguments,
                    status: ToolStatus::Running,
                    duration: None,
                    output: String::new(),
                }));
            }
            RunEvent::ToolCallEnded { id, duration, error, output, .. } => {
                if let Some(index) = self.transcript.tool_index(&id) {
                    self.transcript.update(index, |cell| {
                        if let CellKind::Tool(tool) = &mut cell.kind {
                            tool.status = if error.is_some() { ToolStatus::Failed } else { ToolStatus::Done };
                            tool.duration = Some(duration);
                            tool.output = output;
                        }
                    });
                }
            }
            RunEvent::Steered { text } => {
                self.transcript.push(CellKind::User { text: text.clone(), steered: true });
                if let Ok(mut queue) = self.queued.lock()
                    && let Some(i) = queue.iter().position(|q| *q == text)
                {
                    queue.remove(i);
                }
            }
            RunEvent::Usage { usage, total, shared_share, .. } => {
                self.footer.total = total;
                match usage {
                    Some(u) => {
                        self.footer.context_used = Some(u.input_tokens + u.output_tokens);
                        self.footer.cached_share =
                            (u.input_tokens > 0).then(|| u.cache_hit_tokens as f64 / u.input_tokens as f64);
                        self.footer.cached_estimated = false;
                    }
                    // The server said nothing: what quiver can tell from the bytes it sent.
                    None if shared_share.is_some() => {
                        self.footer.cached_share = shared_share;
                        self.footer.cached_estimated = true;
                    }
                    None => {}
                }
            }
            RunEvent::Compacted { before_tokens, after_tokens, .. } => {
                self.info(format!("compacted the conversation (~{before_tokens} → ~{after_tokens} tokens)"));
            }
            RunEvent::TurnEnded { .. } => {}
            RunEvent::SessionEnded { status, .. } => {
                self.transcript.settle_streaming();
                match status {
                    RunStatus::Done => {}
                    RunStatus::MaxTurns => self.error("stopped: the turn limit was reached"),
                    RunStatus::TokenBudget => self.error("stopped: the token budget is spent"),
                    RunStatus::Stopped(reason) => {
                        self.error(format!("the model stopped without an answer ({reason:?})"))
                    }
                    RunStatus::Failed(message) => {
                        self.failure_shown = true;
                        self.error(message);
                    }
                }
            }
        }
    }

    /// The run's task ended (finished, failed or interrupted).
    pub fn run_finished(&mut self, interrupted: bool) {
        self.transcript.settle_streaming();
        if interrupted {
            self.info("interrupted: the conversation is kept; type to go on");
        }
        self.run = RunState::Idle;
        // Nobody will answer a question the stopped run asked.
        while let Some(approval) = self.approvals.pop_front() {
            let _ = approval.reply.send(Answer::No);
        }
    }

    pub fn ask(&mut self, approval: Approval) {
        self.approvals.push_back(approval);
    }

    pub fn answer(&mut self, answer: Answer) {
        if let Some(approval) = self.approvals.pop_front() {
            let verdict = match answer {
                Answer::Once => "approved once",
                Answer::Always => "approved for this session",
                Answer::No => "declined",
            };
            self.info(format!("{verdict}: {}", crate::cells::first_line(&approval.question)));
            self.declined = answer == Answer::No && self.running();
            let _ = approval.reply.send(answer);
        }
    }

    /// Switches mode; yolo asks once per session.
    pub fn request_mode(&mut self, mode: Mode) -> Option<Action> {
        if mode == Mode::Yolo && !self.yolo_confirmed {
            self.overlay = Some(Overlay::ConfirmYolo);
            return None;
        }
        Some(Action::Command(Slash::Mode(Some(mode))))
    }

    pub fn next_mode(&self) -> Mode {
        match self.mode {
            Mode::Plan => Mode::Agent,
            Mode::Agent => Mode::Yolo,
            Mode::Yolo => Mode::Plan,
        }
    }

    /// The foldable cell Ctrl+O acts on.
    pub fn fold_target(&self) -> Option<usize> {
        self.selected.or_else(|| self.transcript.cells.iter().rposition(|c| c.foldable()))
    }

    pub fn toggle_fold(&mut self) {
        if let Some(index) = self.fold_target() {
            self.transcript.update(index, |cell| cell.expanded = !cell.expanded);
        }
    }

    /// Moves the fold selection to the previous (`up`) or next foldable cell.
    pub fn select_foldable(&mut self, up: bool) {
        let cells = &self.transcript.cells;
        let current = self.fold_target();
        let next = if up {
            let end = current.unwrap_or(cells.len());
            cells[..end].iter().rposition(|c| c.foldable())
        } else {
            let start = current.map_or(cells.len(), |i| i + 1);
            cells.iter().skip(start).position(|c| c.foldable()).map(|i| start + i)
        };
        if let Some(index) = next {
            let old = self.selected.replace(index);
            for i in [old, Some(index)].into_iter().flatten() {
                self.transcript.update(i, |_| {});
            }
        }
    }

    pub fn elapsed(&self) -> Option<Duration> {
        match self.run {
            RunState::Running { since, .. } => Some(self.now.saturating_duration_since(since)),
            RunState::Idle => None,
        }
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
