//! Carrying out the app's actions against the engine: runs, interrupts,
//! session switches, and the slash commands that need more than the screen.
//! Anything slow (a relay, `/mcp validate`, `/jobs wait`) runs as a task and
//! answers with a `UiEvent`, so the screen never freezes.

use std::sync::Arc;

use quiver_agent::exec;
use quiver_agent::relay;
use quiver_engine::{Mode, SearchOptions};
use serde_json::json;

use crate::app::{Action, App, Footer, Overlay};
use crate::driver::Driver;
use crate::event::{UiEvent, UiSender};
use crate::render::TranscriptCache;
use crate::slash::Slash;
use crate::terminal::Tui;

pub fn perform(
    action: Action,
    app: &mut App,
    driver: &mut Driver,
    tx: &UiSender,
    tui: &mut Tui,
    cache: &mut TranscriptCache,
) -> anyhow::Result<()> {
    match action {
        Action::Submit(prompt) => {
            if driver.running() {
                // Typed while a run works (e.g. the run ended with follow-ups queued).
                if let Ok(mut queue) = app.queued.lock() {
                    queue.push(prompt);
                }
                return Ok(());
            }
            app.run_started(&prompt);
            driver.start(prompt, Arc::clone(&app.queued));
        }
        Action::Interrupt => {
            if driver.running() {
                driver.interrupt();
                app.run_finished(true);
                // Follow-ups the run never read go back to the composer, not away.
                let queued = app.take_queued();
                if !queued.is_empty() && app.composer.is_empty() {
                    app.composer.set_text(&queued.join("\n\n"));
                }
            }
        }
        Action::Quit => {
            app.should_quit = true;
        }
        Action::Suspend => {
            #[cfg(unix)]
            crate::terminal::suspend(tui)?;
        }
        Action::Resume(id) => match driver.switch_session(Some(&id)) {
            Ok(()) => reset_view(app, driver, cache, format!("resumed session {id}")),
            Err(e) => app.error(format!("cannot resume {id}: {e:#}")),
        },
        Action::Command(command) => command_action(command, app, driver, tx, cache),
    }
    Ok(())
}

/// A fresh screen for the driver's (new or resumed) session.
fn reset_view(app: &mut App, driver: &Driver, cache: &mut TranscriptCache, banner: String) {
    let files = Arc::clone(&app.files);
    let composer = std::mem::take(&mut app.composer);
    *app = app_for(driver, &[banner]);
    app.files = files;
    app.composer = composer;
    cache.clear();
}

fn panel(app: &mut App, title: &str, lines: Vec<String>) {
    app.overlay = Some(Overlay::Panel { title: format!(" {title} · Esc closes "), lines, scroll: 0 });
}

fn command_action(command: Slash, app: &mut App, driver: &mut Driver, tx: &UiSender, cache: &mut TranscriptCache) {
    let busy = driver.running();
    match command {
        Slash::Mode(Some(mode)) => {
            driver.set_mode(mode);
            app.mode = mode;
            let what = match mode {
                Mode::Plan => "plan: reads only; every write is refused",
                Mode::Agent => "agent: works in the sandbox; risky steps are asked",
                Mode::Yolo => "yolo: nothing is asked; deny rules still hold",
            };
            app.info(format!("mode {what}"));
        }
        Slash::Mode(None) => app.info(format!("mode {} (Shift+Tab switches)", app.mode)),
        Slash::Model(None) => app.info(format!("model {} · {}", driver.setup.provider_name, driver.setup.model)),
        Slash::Model(Some(model)) => {
            driver.set_model(&model);
            app.footer.model = model.clone();
            app.info(format!("model {model}: the next request starts a new prompt cache"));
        }
        Slash::Status => panel(app, "status", status_lines(app, driver)),
        Slash::Tools(query) => panel(app, "tools", tool_lines(driver, query.as_deref())),
        Slash::Diff => spawn_diff(driver, tx),
        Slash::Compact if busy => app.error("a turn is running: /compact when it is done"),
        Slash::Compact => {
            app.info("compacting the conversation…");
            app.run = crate::app::RunState::Running { since: app.now, turn: 0 };
            driver.compact();
        }
        Slash::Resume => {
            let items = driver.setup.hooks.sessions(&driver.setup.ctx);
            app.overlay = Some(Overlay::Sessions { items, selected: 0 });
        }
        Slash::New if busy => app.error("a turn is running: Esc first, then /new"),
        Slash::New => match driver.switch_session(None) {
            Ok(()) => reset_view(app, driver, cache, "new session".into()),
            Err(e) => app.error(format!("cannot start a new session: {e:#}")),
        },
        Slash::Jobs(args) => spawn_hook_panel(driver, tx, HookPanel::Jobs, args),
        Slash::Mcp(args) => spawn_hook_panel(driver, tx, HookPanel::Mcp, args),
        Slash::Relay(_) if driver.setup.history.is_empty() => app.error("nothing to relay yet: the session is empty"),
        Slash::Relay(focus) => {
            app.info("writing the session relay…");
            let provider = Arc::clone(&driver.setup.provider);
            let (model, max) = (driver.setup.model.clone(), driver.setup.max_output_tokens);
            let history = driver.setup.history.clone();
            let root = driver.setup.ctx.workspace.root().to_path_buf();
            let tx = tx.clone();
            tokio::spawn(async move {
                let event =
                    match relay::ask(provider.as_ref(), exec::SYSTEM_PROMPT, &model, max, &history, focus.as_deref())
                        .await
                    {
                        Ok(doc) => match relay::write(&root, &doc) {
                            Ok(path) => UiEvent::Panel {
                                title: format!(" relay → {} · Esc closes ", path.display()),
                                lines: doc.lines().map(str::to_string).collect(),
                            },
                            Err(e) => UiEvent::Failure(format!("relay not written: {e}")),
                        },
                        Err(e) => UiEvent::Failure(format!("relay: {e}")),
                    };
                let _ = tx.send(event);
            });
        }
        Slash::Agent(None) => {
            let agents = driver.setup.hooks.work(&driver.setup.ctx).agents;
            let lines = if agents.is_empty() {
                vec!["no sub-agents in this session; `/agent PROMPT` asks the model to start one".into()]
            } else {
                agents.iter().map(|a| format!("{}  {}  {}", a.id, a.state, a.name)).collect()
            };
            panel(app, "agents", lines);
        }
        Slash::Agent(Some(prompt)) => {
            submit(app, driver, &format!("Hand this to a sub-agent (agent_open), then report what it found: {prompt}"));
        }
        Slash::Rlm(prompt) => {
            let line = match prompt {
                Some(p) => format!("Use the RLM tool (rlm) for this, then answer from its result: {p}"),
                None => "Use the RLM tool (rlm) on the task so far and answer from its result.".into(),
            };
            submit(app, driver, &line);
        }
        // Handled by the app itself.
        Slash::Help | Slash::Quit | Slash::Work => {}
    }
}

/// A prompt a command writes for the person: sent as if typed.
fn submit(app: &mut App, driver: &mut Driver, line: &str) {
    for action in app.submit_line(line) {
        if let Action::Submit(prompt) = action {
            app.run_started(&prompt);
            driver.start(prompt, Arc::clone(&app.queued));
        }
    }
}

/// The commands answered by the composing program's hooks.
#[derive(Clone, Copy)]
enum HookPanel {
    Jobs,
    Mcp,
}

/// Runs a hook command as a task; its lines come back as a panel.
fn spawn_hook_panel(driver: &Driver, tx: &UiSender, which: HookPanel, args: Vec<String>) {
    let hooks = Arc::clone(&driver.setup.hooks);
    let ctx = driver.setup.ctx.clone();
    let tx = tx.clone();
    tokio::spawn(async move {
        let (name, answer) = match which {
            HookPanel::Jobs => ("jobs", hooks.jobs(&ctx, &args).await),
            HookPanel::Mcp => ("mcp", hooks.mcp(&ctx, &args).await),
        };
        let title = match args.is_empty() {
            true => format!(" {name} · Esc closes "),
            false => format!(" {name} {} · Esc closes ", args.join(" ")),
        };
        let _ = tx.send(match answer {
            Ok(lines) => UiEvent::Panel { title, lines },
            Err(e) => UiEvent::Failure(e),
        });
    });
}

fn status_lines(app: &App, driver: &Driver) -> Vec<String> {
    let s = &driver.setup;
    let f = &app.footer;
    vec![
        format!("session     {}", s.ctx.session.id()),
        format!("transcript  {}", s.transcript_path.display()),
        format!("workspace   {}", s.ctx.workspace.root().display()),
        format!("provider    {} · {}", s.provider_name, s.model),
        format!("mode        {}", driver.mode()),
        format!("messages    {}", s.history.len()),
        format!(
            "tokens      {} in ({} cached) · {} out",
            f.total.input_tokens, f.total.cache_hit_tokens, f.total.output_tokens
        ),
        format!("loaded      {}", s.ctx.session.loaded().join(", ")),
    ]
}

/// Loaded tools, or what a search of the surface finds (without loading it:
/// browsing must not change what the model is sent).
fn tool_lines(driver: &Driver, query: Option<&str>) -> Vec<String> {
    let ctx = &driver.setup.ctx;
    let loaded = ctx.session.loaded();
    match query {
        None => {
            let mut lines = vec!["loaded by this session (after the head):".to_string()];
            if loaded.is_empty() {
                lines.push("  (none yet: tool_search loads them)".into());
            }
            lines.extend(loaded.iter().map(|n| format!("  {n}")));
            lines.push(String::new());
            lines.push("/tools QUERY searches the whole surface".into());
            lines
        }
        Some(query) => {
            let options = SearchOptions { limit: 15, ..SearchOptions::default() };
            match ctx.surface.search(query, &options, &ctx.audience, &loaded) {
                Ok(specs) if specs.is_empty() => vec![format!("nothing matches `{query}`")],
                Ok(specs) => specs
                    .iter()
                    .map(|s| format!("{:<28} {}", s.name, crate::cells::first_line(&s.description)))
                    .collect(),
                Err(e) => vec![e],
            }
        }
    }
}

/// `/diff`: the workspace's changes, through the same `git_diff` tool the
/// model uses (sandboxed, no external diff drivers), kept out of the
/// session's transcript: the person looked, the model did not.
fn spawn_diff(driver: &Driver, tx: &UiSender) {
    let mut ctx = driver.setup.ctx.clone();
    ctx.transcript = None;
    let changed = relay::Facts::from_messages(&driver.setup.history);
    let tx = tx.clone();
    tokio::spawn(async move {
        let mut lines = Vec::new();
        if !changed.changed_files.is_empty() {
            lines.push(format!("files this session's tools wrote: {}", changed.changed_files.join(", ")));
            lines.push(String::new());
        }
        match ctx.call("git_diff", json!({})).await {
            Ok(result) => lines.extend(result.content_text().lines().map(str::to_string)),
            Err(e) => lines.push(format!("git_diff: {e:#}")),
        }
        let _ = tx.send(UiEvent::Panel { title: " diff · Esc closes ".into(), lines });
    });
}

fn footer_of(setup: &crate::driver::DriverSetup) -> Footer {
    Footer {
        provider: setup.provider_name.clone(),
        model: setup.model.clone(),
        session_id: setup.ctx.session.id().to_string(),
        context_window: setup.context_window,
        ..Footer::default()
    }
}

/// The app for a driver's session: the history (a resumed session's)
/// shown as cells, the surface for the palette.
pub fn app_for(driver: &Driver, banner: &[String]) -> App {
    let mut app = App::new(driver.mode(), footer_of(&driver.setup));
    for line in banner {
        app.info(line.clone());
    }
    crate::history::show(&mut app, &driver.setup.history);
    app.palette_tools = driver.setup.hooks.palette_tools(&driver.setup.ctx);
    app.work = driver.setup.hooks.work(&driver.setup.ctx);
    app
}
