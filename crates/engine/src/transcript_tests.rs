use super::*;
use serde_json::json;

fn start() -> Event {
    Event::SessionStart {
        version: TRANSCRIPT_VERSION,
        session: "s".into(),
        quiver_version: "0.1.0".into(),
        workspace: "/w".into(),
        provider: "default".into(),
        model: None,
        mode: "agent".into(),
    }
}

#[test]
fn round_trip_and_lazy_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t/s.jsonl");
    let w = TranscriptWriter::open(&path).unwrap();
    w.append(&start()).unwrap();
    w.append(&Event::ToolCall { call_id: "call_1".into(), name: "note".into(), arguments: json!({"text": "x"}) })
        .unwrap();
    w.append(&Event::ToolResult { call_id: "call_1".into(), name: "note".into(), result: ToolResult::error("boom") })
        .unwrap();
    w.append(&Event::Load { turn: 1, names: vec!["a".into(), "b".into()] }).unwrap();
    w.append(&Event::Unload { names: vec!["a".into()] }).unwrap();
    w.append(&Event::Load { turn: 2, names: vec!["c".into()] }).unwrap();
    let t = Transcript::read(&path).unwrap();
    assert_eq!(t.events.len(), 6);
    assert!(t.torn_tail.is_none());
    let state = t.lazy_state();
    assert_eq!(state.loaded_lazy_tools, vec!["b", "c"]);
    assert_eq!(state.loaded_at_turn["c"], 2);
    let calls = t.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].2.unwrap().content, json!("boom"));
}

#[test]
fn torn_last_line_is_reported_and_nothing_before_it_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let w = TranscriptWriter::open(&path).unwrap();
    w.append(&start()).unwrap();
    w.append(&Event::Load { turn: 0, names: vec!["note".into()] }).unwrap();
    drop(w);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"type":"tool_call","call_id":"call_9","name":"no"#).unwrap();
    drop(f);
    let t = Transcript::read(&path).unwrap();
    assert_eq!(t.events.len(), 2);
    let (line, text) = t.torn_tail.clone().unwrap();
    assert_eq!(line, 3);
    assert!(text.starts_with(r#"{"type":"tool_call""#));
    assert_eq!(t.lazy_state().loaded_lazy_tools, vec!["note"]);
    // Appending after a crash still works; the torn line stays where it was.
    let w = TranscriptWriter::open(&path).unwrap();
    w.append(&Event::Compaction { before_tokens: Some(9000), after_tokens: Some(1200) }).unwrap();
    let t = Transcript::read(&path).unwrap();
    assert_eq!(t.events.len(), 3);
    assert_eq!(t.events[2], Event::Compaction { before_tokens: Some(9000), after_tokens: Some(1200) });
    assert_eq!(t.damaged.len(), 1);
    assert_eq!(t.damaged[0].0, 3);
    assert!(t.torn_tail.is_none());
}

#[test]
fn complete_event_missing_only_its_newline_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, format!("{}\n{}", serde_json::to_string(&start()).unwrap(), r#"{"type":"compaction"}"#))
        .unwrap();
    let t = Transcript::read(&path).unwrap();
    assert_eq!(t.events.len(), 2);
    assert!(t.torn_tail.is_none());
}

#[test]
fn missing_file_is_a_clear_error() {
    let err = Transcript::read("/nonexistent/t.jsonl").unwrap_err();
    assert!(format!("{err:#}").contains("opening transcript /nonexistent/t.jsonl"), "{err:#}");
}

#[test]
fn a_reopened_transcript_continues_call_numbering() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let w = TranscriptWriter::open(&path).unwrap();
    assert_eq!(w.next_call_id(), "call_1");
    w.append(&Event::ToolCall { call_id: "call_1".into(), name: "note".into(), arguments: json!({}) }).unwrap();
    drop(w);
    let w = TranscriptWriter::open(&path).unwrap();
    assert_eq!(w.next_call_id(), "call_2");
}
