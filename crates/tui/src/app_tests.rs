use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use quiver_agent::message::{FinishReason, StreamEvent, Usage};

use super::*;
use crate::cells::CellKind;

fn app() -> App {
    App::new(Mode::Agent, Footer { provider: "deepseek".into(), model: "deepseek-chat".into(), ..Footer::default() })
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) -> Vec<Action> {
    let mut actions = Vec::new();
    for c in text.chars() {
        actions.extend(app.on_key(key(KeyCode::Char(c))));
    }
    actions
}

#[test]
fn a_streamed_answer_becomes_one_final_cell() {
    let mut app = app();
    app.run_started("hi");
    app.on_run_event(RunEvent::TurnStarted { turn: 1 });
    for piece in ["Hel", "lo **wor", "ld**"] {
        app.on_run_event(RunEvent::Delta(StreamEvent::TextDelta(piece.into())));
    }
    assert!(
        matches!(&app.transcript.cells[1].kind, CellKind::Assistant { text, streaming: true } if text == "Hello **world**")
    );
    app.on_run_event(RunEvent::ModelMessage { text: "Hello **world**".into() });
    app.on_run_event(RunEvent::TurnEnded { turn: 1, finish_reason: FinishReason::Stop });
    assert_eq!(app.transcript.cells.len(), 2);
    assert!(matches!(&app.transcript.cells[1].kind, CellKind::Assistant { streaming: false, .. }));
}

#[test]
fn streamed_reasoning_is_not_repeated_by_its_summary() {
    let mut app = app();
    app.run_started("think");
    app.on_run_event(RunEvent::TurnStarted { turn: 1 });
    app.on_run_event(RunEvent::Delta(StreamEvent::ReasoningDelta("step one".into())));
    app.on_run_event(RunEvent::Delta(StreamEvent::TextDelta("done".into())));
    app.on_run_event(RunEvent::ReasoningSummary { summary: "step one".into(), chars: 8 });
    app.on_run_event(RunEvent::ModelMessage { text: "done".into() });
    let reasoning = app.transcript.cells.iter().filter(|c| matches!(c.kind, CellKind::Reasoning { .. })).count();
    assert_eq!(reasoning, 1);
    // A provider that streamed nothing still shows the reasoning's start.
    app.on_run_event(RunEvent::TurnStarted { turn: 2 });
    app.on_run_event(RunEvent::ReasoningSummary { summary: "later".into(), chars: 5 });
    let reasoning = app.transcript.cells.iter().filter(|c| matches!(c.kind, CellKind::Reasoning { .. })).count();
    assert_eq!(reasoning, 2);
}

#[test]
fn a_tool_call_cell_records_status_duration_and_result() {
    let mut app = app();
    app.run_started("list");
    app.on_run_event(RunEvent::ToolCallBegun {
        id: "c1".into(),
        name: "list_dir".into(),
        arguments: r#"{"path":"."}"#.into(),
    });
    assert!(matches!(&app.transcript.cells[1].kind, CellKind::Tool(t) if t.status == ToolStatus::Running));
    app.on_run_event(RunEvent::ToolCallEnded {
        id: "c1".into(),
        name: "list_dir".into(),
        duration: Duration::from_millis(12),
        error: None,
        child_usage: None,
        output: "notes.txt\n".into(),
    });
    let CellKind::Tool(tool) = &app.transcript.cells[1].kind else { panic!() };
    assert_eq!((tool.status.clone(), tool.output.as_str()), (ToolStatus::Done, "notes.txt\n"));
    assert_eq!(tool.summary(), ".");
    // Ctrl+O unfolds the latest tool cell, and folds it again.
    app.on_key(ctrl('o'));
    assert!(app.transcript.cells[1].expanded);
    app.on_key(ctrl('o'));
    assert!(!app.transcript.cells[1].expanded);
}

#[test]
fn enter_while_running_queues_a_follow_up_that_the_run_takes() {
    let mut app = app();
    assert_eq!(type_text(&mut app, "first"), vec![]);
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Action::Submit("first".into())]);
    app.run_started("first");
    type_text(&mut app, "also check the tests");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![]);
    assert_eq!(app.queued(), vec!["also check the tests".to_string()]);
    // The run takes it between turns and says so.
    app.on_run_event(RunEvent::Steered { text: "also check the tests".into() });
    assert!(app.queued().is_empty());
    assert!(matches!(&app.transcript.cells.last().unwrap().kind, CellKind::User { steered: true, .. }));
}

#[test]
fn esc_interrupts_a_run_and_ctrl_c_twice_quits() {
    let mut app = app();
    app.run_started("long");
    assert_eq!(app.on_key(key(KeyCode::Esc)), vec![Action::Interrupt]);
    app.run_finished(true);
    assert!(!app.running());
    assert_eq!(app.on_key(ctrl('c')), vec![]);
    assert!(app.quit_armed.is_some());
    assert_eq!(app.on_key(ctrl('c')), vec![Action::Quit]);
    // A key between the two disarms it.
    let mut app2 = self::app();
    app2.on_key(ctrl('c'));
    type_text(&mut app2, "x");
    assert_eq!(app2.on_key(ctrl('c')), vec![]);
}

#[test]
fn approvals_are_answered_in_order_and_a_stopped_run_declines_the_rest() {
    let mut app = app();
    let (tx1, mut rx1) = oneshot::channel();
    let (tx2, mut rx2) = oneshot::channel();
    let (tx3, mut rx3) = oneshot::channel();
    app.run_started("go");
    app.ask(Approval { question: "run `curl example.com` with network".into(), reply: tx1 });
    app.ask(Approval { question: "write outside the workspace".into(), reply: tx2 });
    app.ask(Approval { question: "third".into(), reply: tx3 });
    // Typing goes to the approval, not the composer.
    app.on_key(key(KeyCode::Char('a')));
    assert_eq!(rx1.try_recv(), Ok(Answer::Always));
    app.on_key(key(KeyCode::Char('n')));
    assert_eq!(rx2.try_recv(), Ok(Answer::No));
    assert!(app.composer.text().is_empty());
    // A declined step invites a reason; typed now, it is queued for the model.
    assert!(app.declined);
    app.on_key(key(KeyCode::Char('y')));
    assert_eq!(rx3.try_recv(), Ok(Answer::Once));
    let (tx4, mut rx4) = oneshot::channel();
    app.ask(Approval { question: "fourth".into(), reply: tx4 });
    app.run_finished(true);
    assert_eq!(rx4.try_recv(), Ok(Answer::No));
}

#[test]
fn yolo_asks_once_and_shift_tab_cycles_modes() {
    let mut app = app();
    let back_tab = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(app.on_key(back_tab), vec![]);
    assert_eq!(app.overlay, Some(Overlay::ConfirmYolo));
    assert_eq!(app.on_key(key(KeyCode::Char('y'))), vec![Action::Command(Slash::Mode(Some(Mode::Yolo)))]);
    app.mode = Mode::Yolo;
    assert_eq!(app.on_key(back_tab), vec![Action::Command(Slash::Mode(Some(Mode::Plan)))]);
    app.mode = Mode::Agent;
    // Confirmed once: no second question.
    assert_eq!(app.on_key(back_tab), vec![Action::Command(Slash::Mode(Some(Mode::Yolo)))]);
}

#[test]
fn slash_commands_route_and_unknown_ones_say_so() {
    let mut app = app();
    assert_eq!(app.submit_line("/relay tests first"), vec![Action::Command(Slash::Relay(Some("tests first".into())))]);
    assert_eq!(app.submit_line("/接力"), vec![Action::Command(Slash::Relay(None))]);
    assert_eq!(app.submit_line("/help"), vec![]);
    assert_eq!(app.overlay, Some(Overlay::Help));
    assert_eq!(app.submit_line("/bogus"), vec![]);
    assert!(matches!(&app.transcript.cells.last().unwrap().kind, CellKind::Error { text } if text.contains("/help")));
    // A path is a prompt, not a command.
    assert_eq!(app.submit_line("//etc/hosts is odd"), vec![Action::Submit("//etc/hosts is odd".into())]);
}

/// Esc then `/` typed quickly reach quiver as one Alt+`/`: with a panel open
/// that closes it and the `/` starts the next command (it was lost, and the
/// rest of the line went to the model as a prompt).
#[test]
fn esc_and_a_quick_character_close_an_overlay_and_type_it() {
    let mut app = app();
    app.submit_line("/help");
    assert_eq!(app.overlay, Some(Overlay::Help));
    assert!(app.on_key(KeyEvent::new(KeyCode::Char('/'), KeyModifiers::ALT)).is_empty());
    assert_eq!(app.overlay, None);
    type_text(&mut app, "relay");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Action::Command(Slash::Relay(None))]);
}

#[test]
fn usage_fills_the_footer_with_context_and_cached_share() {
    let mut app = app();
    let usage = Usage { input_tokens: 1000, output_tokens: 200, cache_hit_tokens: 800, ..Usage::default() };
    app.on_run_event(RunEvent::Usage { turn: 1, usage: Some(usage), total: usage, unreported: 0, shared_share: None });
    assert_eq!(app.footer.context_used, Some(1200));
    assert_eq!(app.footer.cached_share, Some(0.8));
    assert!(!app.footer.cached_estimated);
    // A request the server reported nothing for: quiver's own estimate, marked as one.
    app.on_run_event(RunEvent::Usage { turn: 2, usage: None, total: usage, unreported: 1, shared_share: Some(0.9) });
    assert_eq!(app.footer.cached_share, Some(0.9));
    assert!(app.footer.cached_estimated);
}

#[test]
fn the_palette_finds_commands_and_mcp_tools_by_server() {
    let mut app = app();
    app.palette_tools = vec![
        crate::palette::PaletteTool {
            name: "mcp__everything__echo".into(),
            server: Some("everything".into()),
            description: "Echo".into(),
        },
        crate::palette::PaletteTool { name: "read_file".into(), server: None, description: "Read a file".into() },
    ];
    app.on_key(ctrl('p'));
    type_text(&mut app, "echo");
    let Some(Overlay::Palette(palette)) = &app.overlay else { panic!("no palette") };
    let first = &palette.entries[palette.shown[0]];
    assert_eq!((first.label.as_str(), first.group.as_str()), ("mcp__everything__echo", "mcp: everything"));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "use mcp__everything__echo to ");
    // A name match beats a description that happens to match.
    app.composer.take();
    app.palette_tools.push(crate::palette::PaletteTool {
        name: "agent_eval".into(),
        server: None,
        description: "Report a sub-agent's status".into(),
    });
    app.on_key(ctrl('p'));
    type_text(&mut app, "stat");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Action::Command(Slash::Status)]);
}

#[test]
fn mentions_complete_from_the_workspace_files() {
    let mut app = app();
    app.files = Arc::new(vec!["README.md".into(), "src/main.rs".into(), "src/lib.rs".into()]);
    type_text(&mut app, "look at @smain");
    assert_eq!(app.mentions.first().map(String::as_str), Some("src/main.rs"));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.composer.text(), "look at @src/main.rs ");
}
