//! In-process measurements of the front end (what `quiver bench tui`
//! reports beside the process-level ones): frames drawn to a real crossterm
//! backend (ANSI encoding included) writing to nowhere.

use std::io::Sink;
use std::time::{Duration, Instant};

use quiver_agent::message::StreamEvent;
use quiver_agent::run::RunEvent;
use quiver_engine::Mode;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{TerminalOptions, Viewport};

use crate::app::{App, Footer};
use crate::cells::{CellKind, ToolCell, ToolStatus};
use crate::render::{TranscriptCache, draw};
use crate::theme::Theme;

/// Sorted durations' p50, p99 and max, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub n: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

pub fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    Stats { n: samples.len(), p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1.0) }
}

fn terminal(width: u16, height: u16) -> std::io::Result<Terminal<CrosstermBackend<Sink>>> {
    Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        TerminalOptions { viewport: Viewport::Fixed(Rect::new(0, 0, width, height)) },
    )
}

fn app() -> App {
    App::new(
        Mode::Agent,
        Footer {
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            context_window: 128_000,
            ..Footer::default()
        },
    )
}

const ANSWER: &str = "Here is what I changed:\n\n1. the parser now **skips** blank lines\n2. `retry` waits longer\n\n```rust\nfn parse(input: &str) -> Vec<Token> {\n    input.lines().filter(|l| !l.trim().is_empty()).map(Token::from).collect()\n}\n```\n\nThe tests pass.";

/// A transcript of `messages` cells: prompts, answers with code, tool calls.
pub fn long_transcript(messages: usize) -> App {
    let mut app = app();
    for i in 0..messages {
        let kind = match i % 3 {
            0 => CellKind::User { text: format!("step {i}: fix the next failing test"), steered: false },
            1 => CellKind::Tool(ToolCell {
                id: format!("c{i}"),
                name: "exec_shell".into(),
                arguments: r#"{"command":"cargo test -p parser"}"#.into(),
                status: ToolStatus::Done,
                duration: Some(Duration::from_millis(840)),
                output: "running 12 tests\n".repeat(8),
            }),
            _ => CellKind::Assistant { text: ANSWER.into(), streaming: false },
        };
        app.transcript.push(kind);
    }
    app
}

/// Frame times scrolling a `messages`-cell transcript from the bottom to
/// the top a page at a time (the first frame, which wraps what it shows, apart).
pub fn scroll(messages: usize, width: u16, height: u16) -> std::io::Result<(Duration, Stats)> {
    let mut app = long_transcript(messages);
    let mut term = terminal(width, height)?;
    let mut cache = TranscriptCache::default();
    let theme = Theme::colored();
    let started = Instant::now();
    term.draw(|f| draw(f, &mut app, &mut cache, &theme))?;
    let first = started.elapsed();
    let mut frames = Vec::new();
    let page = height as usize / 2;
    loop {
        let before = app.scroll;
        app.scroll += page;
        let started = Instant::now();
        term.draw(|f| draw(f, &mut app, &mut cache, &theme))?;
        frames.push(started.elapsed());
        // Clamped at the top: the whole transcript was shown.
        if app.scroll <= before {
            break;
        }
    }
    Ok((first, stats(frames)))
}

/// Keypress-to-frame while an answer streams at `tokens_per_sec` (a token is
/// ~4 characters) for `seconds`: the loop the runner runs (events in, a
/// frame per batch), with a key typed every 40 ms.
pub fn typing_while_streaming(tokens_per_sec: u32, seconds: u64, width: u16, height: u16) -> std::io::Result<Stats> {
    let mut app = long_transcript(300);
    app.run_started("explain the parser");
    let mut term = terminal(width, height)?;
    let mut cache = TranscriptCache::default();
    let theme = Theme::colored();
    term.draw(|f| draw(f, &mut app, &mut cache, &theme))?;
    let token_every = Duration::from_secs_f64(1.0 / f64::from(tokens_per_sec.max(1)));
    let key_every = Duration::from_millis(40);
    let start = Instant::now();
    let (mut next_token, mut next_key) = (start, start + key_every);
    let words = ANSWER.split_inclusive(' ').cycle();
    let mut words = words.take(usize::MAX);
    let mut samples = Vec::new();
    while start.elapsed() < Duration::from_secs(seconds) {
        let now = Instant::now();
        if now >= next_key {
            // From the key's arrival to its frame on the terminal.
            let pressed = Instant::now();
            app.on_key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('x')));
            term.draw(|f| draw(f, &mut app, &mut cache, &theme))?;
            samples.push(pressed.elapsed());
            next_key += key_every;
        } else if now >= next_token {
            let word = words.next().unwrap_or(" ").to_string();
            app.on_run_event(RunEvent::Delta(StreamEvent::TextDelta(word)));
            term.draw(|f| draw(f, &mut app, &mut cache, &theme))?;
            next_token += token_every;
        } else {
            std::thread::sleep(next_key.min(next_token).saturating_duration_since(now));
        }
    }
    Ok(stats(samples))
}
