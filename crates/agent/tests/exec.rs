//! The exec module's pieces without a binary: audit arithmetic, rebuilding a
//! history for resume (dangling tool calls dropped, compaction restarts it),
//! terminal answers, config layers that share a file with other subsystems.

use quiver_agent::Message;
use quiver_agent::exec::{approver, audit, paths, resume};
use quiver_agent::{CliOverrides, Trust};
use quiver_engine::transcript::{Event, Transcript};
use serde_json::json;

fn request(turn: u64, bytes: u64, shared: Option<u64>, head: &str) -> Event {
    Event::ModelRequest {
        turn,
        request_hash: format!("sha256:{turn}"),
        bytes,
        shared_prefix_bytes: shared,
        extends_previous: shared.map(|_| turn != 3),
        head_hash: head.into(),
        tools: 12,
        tail: vec![],
        usage: Some(json!({"input_tokens": bytes / 4, "cache_hit_tokens": shared.unwrap_or(0) / 4})),
        cache_order: None,
    }
}

fn message(m: &Message) -> Event {
    Event::Message { role: "x".into(), content: serde_json::to_value(m).unwrap() }
}

#[test]
fn audit_counts_head_changes_breaks_and_exempts_compaction() {
    let t = Transcript {
        events: vec![
            request(1, 1000, None, "h"),
            request(2, 1500, Some(1000), "h"),
            request(3, 1400, Some(900), "h"),
            Event::Compaction { before_tokens: None, after_tokens: None },
            request(4, 800, Some(700), "h"),
            request(5, 900, Some(800), "other"),
        ],
        ..Default::default()
    };
    let a = audit::audit(&t);
    assert_eq!((a.head_changes, a.prefix_breaks, a.compactions), (1, 1, 1));
    assert!(a.requests[3].after_compaction);
    let summary = a.lines().last().unwrap().clone();
    assert!(summary.starts_with("requests=5 head_changes=1 prefix_breaks=1 compactions=1"), "{summary}");
}

#[test]
fn resume_history_restarts_at_compaction_and_drops_dangling_calls() {
    let call = quiver_agent::ToolCall { id: "c1".into(), name: "read_file".into(), arguments: "{}".into() };
    let with_call =
        Message::Assistant { text: String::new(), reasoning: None, reasoning_signature: None, tool_calls: vec![call] };
    let t = Transcript {
        events: vec![
            message(&Message::user("old")),
            Event::Compaction { before_tokens: None, after_tokens: None },
            message(&Message::user("goal + relay")),
            message(&Message::assistant_text("ok")),
            message(&Message::user("next")),
            message(&with_call),
        ],
        ..Default::default()
    };
    let history = resume::history(&t);
    assert_eq!(history, vec![Message::user("goal + relay"), Message::assistant_text("ok"), Message::user("next")]);
}

#[test]
fn terminal_answers() {
    assert_eq!(approver::parse_answer("y\n"), (true, false));
    assert_eq!(approver::parse_answer("A"), (true, true));
    assert_eq!(approver::parse_answer("always"), (true, true));
    assert_eq!(approver::parse_answer(""), (false, false));
    assert_eq!(approver::parse_answer("nope"), (false, false));
}

#[test]
fn config_files_shared_with_mcp_and_the_context_window_override() {
    let user =
        "[model]\nprovider = \"openai\"\ncontext_window = 4096\n\n[mcp.servers.x]\ncommand = \"y\"\n".to_string();
    let layers = vec![(Trust::User, "user.toml".to_string(), user.clone())];
    let config = paths::load_config(
        &[(Trust::User, "user.toml".into(), {
            // read_layers strips foreign tables; emulate via the public path.
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("quiver.toml"), &user).unwrap();
            paths::read_layers(dir.path()).unwrap().pop().unwrap().2
        })],
        &CliOverrides::default(),
    )
    .unwrap();
    assert_eq!(config.provider, "openai");
    assert_eq!(paths::context_window_override(&layers), Some(4096));
    assert!(paths::session_path("../evil").is_err());
}

#[test]
fn audit_says_usage_is_missing_rather_than_zero() {
    let mut unreported = request(2, 1500, Some(1000), "h");
    if let Event::ModelRequest { usage, .. } = &mut unreported {
        *usage = None;
    }
    let t = Transcript { events: vec![request(1, 1000, None, "h"), unreported], ..Default::default() };
    let a = audit::audit(&t);
    assert_eq!((a.requests[0].input_tokens, a.requests[1].input_tokens), (Some(250), None));
    let lines = a.lines();
    assert!(lines[0].contains("cache hits 0/250 tokens"), "{}", lines[0]);
    assert!(lines[1].contains("cache hits unknown (no usage reported)"), "{}", lines[1]);
    assert!(lines[2].starts_with("note: 1 of 2 requests have no usage figures"), "{}", lines[2]);
    let summary = lines.last().unwrap();
    assert!(summary.ends_with("cache_hit_tokens=0/250 usage_missing=1"), "{summary}");

    let none = Transcript { events: vec![t.events[1].clone()], ..Default::default() };
    let summary = audit::audit(&none).lines().last().unwrap().clone();
    assert!(summary.ends_with("cache_hit_tokens=unknown usage_missing=1"), "{summary}");
}
