//! The main screens, drawn on ratatui's test backend and pinned as text.

use std::sync::Arc;
use std::time::Duration;

use quiver_agent::message::{StreamEvent, Usage};
use quiver_agent::run::RunEvent;
use quiver_engine::Mode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::oneshot;

use crate::app::{App, Approval, Footer, Overlay, RunState};
use crate::palette::PaletteTool;
use crate::render::{TranscriptCache, draw};
use crate::theme::Theme;
use crate::work::{AgentLine, JobLine, WorkSnapshot};

fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut cache = TranscriptCache::default();
    terminal.draw(|frame| draw(frame, app, &mut cache, &Theme::plain())).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>().trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn app(mode: Mode) -> App {
    let mut app = App::new(
        mode,
        Footer {
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            context_window: 128_000,
            ..Footer::default()
        },
    );
    app.yolo_confirmed = true;
    app
}

fn running(app: &mut App, prompt: &str) {
    app.run_started(prompt);
    app.run = RunState::Running { since: app.now, turn: 1 };
}

fn tool(app: &mut App, id: &str, name: &str, args: &str, output: &str, error: bool) {
    app.on_run_event(RunEvent::ToolCallBegun { id: id.into(), name: name.into(), arguments: args.into() });
    app.on_run_event(RunEvent::ToolCallEnded {
        id: id.into(),
        name: name.into(),
        duration: Duration::from_millis(42),
        error: error.then(|| output.to_string()),
        child_usage: None,
        output: output.into(),
    });
}

#[test]
fn a_streamed_answer_with_markdown() {
    let mut app = app(Mode::Agent);
    running(&mut app, "explain the retry loop");
    for piece in
        ["The loop **retries** three times:\n\n", "```rust\nfor attempt in 0..3 {\n", "    send()?;\n}\n```\n\nThen it"]
    {
        app.on_run_event(RunEvent::Delta(StreamEvent::TextDelta(piece.into())));
    }
    let usage = Usage { input_tokens: 12_400, output_tokens: 600, cache_hit_tokens: 11_000, ..Usage::default() };
    app.on_run_event(RunEvent::Usage { turn: 1, usage: Some(usage), total: usage, unreported: 0, shared_share: None });
    insta::assert_snapshot!(screen(&mut app, 80, 20));
}

#[test]
fn a_tool_cell_folded_then_unfolded() {
    let mut app = app(Mode::Agent);
    running(&mut app, "what is in src?");
    let listing: String = (1..=9).map(|i| format!("src/file{i}.rs\n")).collect();
    tool(&mut app, "c1", "list_dir", r#"{"path":"src"}"#, &listing, false);
    insta::assert_snapshot!("tool_folded", screen(&mut app, 70, 16));
    app.toggle_fold();
    insta::assert_snapshot!("tool_unfolded", screen(&mut app, 70, 16));
}

#[test]
fn an_edit_shows_its_diff_and_a_failure_shows_its_error() {
    let mut app = app(Mode::Agent);
    running(&mut app, "fix the typo");
    let diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn main() {\n-    printn!(\"hi\");\n+    println!(\"hi\");\n }\n";
    tool(
        &mut app,
        "c1",
        "edit_file",
        r#"{"path":"src/lib.rs","old_string":"printn","new_string":"println"}"#,
        diff,
        false,
    );
    tool(&mut app, "c2", "exec_shell", r#"{"command":"cargo test"}"#, "error[E0425]: cannot find value `x`", true);
    insta::assert_snapshot!(screen(&mut app, 72, 20));
}

#[test]
fn an_approval_prompt_in_front_of_the_composer() {
    let mut app = app(Mode::Agent);
    running(&mut app, "install the deps");
    tool(&mut app, "c1", "read_file", r#"{"path":"package.json"}"#, "{ \"name\": \"web\" }", false);
    let (reply, _answer) = oneshot::channel();
    app.ask(Approval {
        question:
            "exec_shell wants to run `npm ci` with network access (the sandbox blocks it).\nIt may write: node_modules/"
                .into(),
        reply,
    });
    insta::assert_snapshot!(screen(&mut app, 80, 16));
}

#[test]
fn the_job_center_and_mcp_panels() {
    let mut app = app(Mode::Agent);
    app.overlay = Some(Overlay::Panel {
        title: " jobs · Esc closes ".into(),
        lines: vec![
            "id        status      elapsed  command".into(),
            "job-1     running        12.0s  npm run dev  (.)".into(),
            "          │ ready on http://localhost:5173".into(),
            "job-2     exit 0          3.1s  cargo build  (.)".into(),
        ],
        scroll: 0,
    });
    insta::assert_snapshot!("jobs", screen(&mut app, 80, 12));
    app.overlay = Some(Overlay::Panel {
        title: " mcp · Esc closes ".into(),
        lines: vec![
            "this session's servers:".into(),
            "everything       connected     13 tools  npx -y @modelcontextprotocol/server-everything".into(),
            "    mcp__everything__echo".into(),
            "broken           failed        0 tools  /nonexistent/server".into(),
            "    ! cannot start `/nonexistent/server`: No such file or directory".into(),
            "off              disabled      0 tools  uvx some-server".into(),
        ],
        scroll: 0,
    });
    insta::assert_snapshot!("mcp", screen(&mut app, 90, 12));
}

#[test]
fn the_palette_groups_mcp_tools_by_server() {
    let mut app = app(Mode::Agent);
    app.palette_tools = vec![
        PaletteTool {
            name: "mcp__everything__echo".into(),
            server: Some("everything".into()),
            description: "Echoes back the input".into(),
        },
        PaletteTool {
            name: "mcp__everything__add".into(),
            server: Some("everything".into()),
            description: "Adds two numbers".into(),
        },
        PaletteTool {
            name: "mcp__gh__list_issues".into(),
            server: Some("gh".into()),
            description: "List issues".into(),
        },
        PaletteTool { name: "read_file".into(), server: None, description: "Read a file".into() },
    ];
    app.overlay = Some(Overlay::Palette(crate::palette::Palette::new(crate::palette::entries(&app.palette_tools))));
    if let Some(Overlay::Palette(p)) = &mut app.overlay {
        p.type_str("mcp__");
    }
    insta::assert_snapshot!(screen(&mut app, 80, 14));
}

fn work() -> WorkSnapshot {
    WorkSnapshot {
        checklist: vec![(true, "read the failing test".into()), (false, "fix the parser".into())],
        task: Some(("t-7".into(), "parser bug".into(), "active".into())),
        jobs: vec![JobLine {
            id: "job-1".into(),
            command: "cargo watch".into(),
            status: "running".into(),
            elapsed_secs: 75,
        }],
        agents: vec![AgentLine { id: "a1".into(), name: "explorer".into(), state: "running".into() }],
    }
}

#[test]
fn the_work_panel_is_the_same_in_every_mode() {
    let mut shown = Vec::new();
    for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
        let mut app = app(mode);
        app.work = work();
        app.show_work = true;
        let text = screen(&mut app, 100, 22);
        // Only the footer's mode differs.
        let body: Vec<&str> = text.lines().take(21).collect();
        shown.push(body.join("\n"));
        if mode == Mode::Agent {
            insta::assert_snapshot!(text);
        }
    }
    assert_eq!(shown[0], shown[1]);
    assert_eq!(shown[1], shown[2]);
}

#[test]
fn a_40_by_10_terminal_still_has_transcript_composer_and_footer() {
    let mut app = app(Mode::Agent);
    running(&mut app, "a long prompt that has to wrap in a small terminal");
    app.on_run_event(RunEvent::Delta(StreamEvent::TextDelta("Working on it: reading the files first.".into())));
    app.composer.set_text("and the tests");
    insta::assert_snapshot!(screen(&mut app, 40, 10));
    // Smaller than anyone should use: nothing panics.
    for (w, h) in [(1, 1), (10, 3), (20, 5)] {
        let _ = screen(&mut app, w, h);
    }
}

#[test]
fn help_lists_keys_and_commands() {
    let mut app = app(Mode::Agent);
    app.overlay = Some(Overlay::Help);
    insta::assert_snapshot!(screen(&mut app, 100, 34));
}

#[test]
fn scrolling_a_long_transcript_shows_earlier_cells_and_stops_at_the_top() {
    let mut app = app(Mode::Agent);
    app.files = Arc::new(Vec::new());
    for i in 0..200 {
        app.transcript.push(crate::cells::CellKind::User { text: format!("message {i}"), steered: false });
    }
    let bottom = screen(&mut app, 40, 12);
    assert!(bottom.contains("message 199"), "{bottom}");
    app.scroll = 20;
    let up = screen(&mut app, 40, 12);
    assert!(up.contains("message 189") && !up.contains("message 199"), "{up}");
    app.scroll = 100_000;
    let top = screen(&mut app, 40, 12);
    assert!(top.contains("message 0"), "{top}");
    assert!(app.scroll < 1000, "the scroll is clamped at the top: {}", app.scroll);
}
