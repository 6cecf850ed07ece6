//! The interactive loop: terminal events, the run's events and answers from
//! background commands go into the [`App`]; its actions go to the [`Driver`].
//! A frame is drawn after each batch of events, never on a timer while idle
//! (the spinner ticks only while a run works), so an idle session costs no CPU.

use std::time::{Duration, Instant};

use crate::app::{Action, App, Overlay};
use crate::driver::{Driver, DriverSetup};
pub use crate::event::{UiEvent, UiReceiver, UiSender, channel};
use crate::render::{self, TranscriptCache};
use crate::terminal::{self, Tui};
use crate::theme::Theme;
use crossterm::event::{Event, EventStream};
use futures::StreamExt;

pub struct Options {
    /// Sent as the first prompt once the screen is up (`quiver "PROMPT"`).
    pub prompt: Option<String>,
    pub theme: Theme,
    /// Shown at the top: how the session started (resumed, new).
    pub banner: Vec<String>,
    /// Open the session picker first (`quiver resume` without an id).
    pub pick_session: bool,
}

/// Spinner frames while a run works.
const TICK: Duration = Duration::from_millis(100);
/// Files offered for `@path` completion, at most.
const MENTION_FILES: usize = 20_000;

/// Runs the interactive session until the person quits. The terminal is
/// restored on every way out.
pub async fn run(setup: DriverSetup, tx: UiSender, rx: UiReceiver, options: Options) -> anyhow::Result<()> {
    let mut tui = terminal::init()?;
    let result = event_loop(&mut tui, setup, tx, rx, options).await;
    terminal::restore();
    result
}

async fn event_loop(
    tui: &mut Tui,
    setup: DriverSetup,
    tx: UiSender,
    mut rx: UiReceiver,
    options: Options,
) -> anyhow::Result<()> {
    let theme = options.theme;
    let mut driver = Driver::new(setup, tx.clone());
    let mut app = crate::commands::app_for(&driver, &options.banner);
    if options.pick_session {
        let items = driver.setup.hooks.sessions(&driver.setup.ctx);
        app.overlay = Some(Overlay::Sessions { items, selected: 0 });
    }
    let mut cache = TranscriptCache::default();
    spawn_file_list(&driver, &tx);
    tokio::task::spawn_blocking(crate::highlight::warm_up);
    let mut terminal_events = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    let mut pending: Vec<Action> = options.prompt.iter().map(|p| Action::Submit(p.clone())).collect();
    let mut last_work = Instant::now();
    // A terminal closed under us (SIGHUP) or a polite kill (SIGTERM) leaves
    // like a quit, so the terminal is restored and the transcript flushed.
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        for action in pending.drain(..) {
            crate::commands::perform(action, &mut app, &mut driver, &tx, tui, &mut cache)?;
        }
        if app.should_quit {
            break;
        }
        app.now = Instant::now();
        tui.draw(|frame| render::draw(frame, &mut app, &mut cache, &theme))?;
        let animating = app.running() || app.quit_armed.is_some();
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => pending.extend(on_terminal(&mut app, event)),
                Some(Err(e)) => return Err(e.into()),
                // The terminal is gone: leave as after Ctrl-C twice.
                None => pending.push(Action::Quit),
            },
            Some(event) = rx.recv() => {
                pending.extend(on_ui(&mut app, &mut driver, event));
                // Drain what else arrived, so a fast stream costs one frame per batch.
                while let Ok(event) = rx.try_recv() {
                    pending.extend(on_ui(&mut app, &mut driver, event));
                }
            }
            _ = hangup.recv() => pending.push(Action::Quit),
            _ = terminate.recv() => pending.push(Action::Quit),
            _ = tick.tick(), if animating => {
                if app.quit_armed.is_some_and(|t| t.elapsed() > Duration::from_secs(2)) {
                    app.quit_armed = None;
                }
                if app.running() && last_work.elapsed() > Duration::from_millis(500) {
                    app.work = driver.setup.hooks.work(&driver.setup.ctx);
                    last_work = Instant::now();
                }
            }
        }
    }
    if driver.running() {
        driver.interrupt();
    }
    Ok(())
}

fn on_terminal(app: &mut App, event: Event) -> Vec<Action> {
    app.now = Instant::now();
    match event {
        Event::Key(key) => app.on_key(key),
        Event::Paste(text) => {
            app.on_paste(&text);
            Vec::new()
        }
        // The next draw lays out for the new size.
        Event::Resize(..) | Event::FocusGained | Event::FocusLost | Event::Mouse(_) => Vec::new(),
    }
}

fn on_ui(app: &mut App, driver: &mut Driver, event: UiEvent) -> Vec<Action> {
    match event {
        UiEvent::Run(event) => app.on_run_event(event),
        UiEvent::RunDone { messages, error } => {
            driver.finished(messages);
            app.run_finished(false);
            // The run's own end event usually said it already.
            if let Some(error) = error.filter(|_| !app.failure_shown) {
                app.error(error);
            }
            app.work = driver.setup.hooks.work(&driver.setup.ctx);
            app.palette_tools = driver.setup.hooks.palette_tools(&driver.setup.ctx);
            // Follow-ups the run ended before reading become the next prompt.
            let queued = app.take_queued();
            if !queued.is_empty() {
                return vec![Action::Submit(queued.join("\n\n"))];
            }
        }
        UiEvent::Approval(approval) => app.ask(approval),
        UiEvent::Panel { title, lines } => app.overlay = Some(Overlay::Panel { title, lines, scroll: 0 }),
        UiEvent::Notice(text) => app.info(text),
        UiEvent::Failure(text) => app.error(text),
        UiEvent::Work(work) => app.work = work,
        UiEvent::Files(files) => app.files = std::sync::Arc::new(files),
    }
    Vec::new()
}

/// The workspace's files for `@path` completion, listed off the loop
/// (gitignore respected, hidden files skipped).
fn spawn_file_list(driver: &Driver, tx: &UiSender) {
    let root = driver.setup.ctx.workspace.root().to_path_buf();
    let tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let mut files = Vec::new();
        for entry in ignore::WalkBuilder::new(&root).build().flatten() {
            if entry.file_type().is_some_and(|t| t.is_file())
                && let Ok(rel) = entry.path().strip_prefix(&root)
            {
                files.push(rel.to_string_lossy().into_owned());
                if files.len() >= MENTION_FILES {
                    break;
                }
            }
        }
        files.sort();
        let _ = tx.send(UiEvent::Files(files));
    });
}
