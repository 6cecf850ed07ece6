use super::*;
use crate::message::ToolCall;

fn assistant(calls: &[(&str, &str, &str)]) -> Message {
    Message::Assistant {
        text: String::new(),
        reasoning: None,
        reasoning_signature: None,
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: args.to_string(),
            })
            .collect(),
    }
}

fn result(id: &str, content: &str, is_error: bool) -> Message {
    Message::tool_result(id, content, is_error)
}

fn session() -> Vec<Message> {
    vec![
        Message::user("Fix the parser's handling of empty input.\n\nDetails follow."),
        assistant(&[
            ("1", "edit_file", r#"{"path":"src/parse.rs","old":"a","new":"b"}"#),
            ("2", "write_file", r#"{"path":"broken.rs","content":"x"}"#),
        ]),
        result("1", "edited src/parse.rs", false),
        result("2", "refused", true),
        assistant(&[(
            "3",
            "apply_patch",
            r#"{"patch":"--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n--- a/old.rs\n+++ /dev/null\n"}"#,
        )]),
        result("3", "applied", false),
        assistant(&[(
            "4",
            "checklist_write",
            r#"{"items":[{"content":"reproduce","status":"completed"},{"content":"fix empty input","status":"in_progress"},{"content":"add test","status":"pending"}]}"#,
        )]),
        result("4", "ok", false),
        assistant(&[("5", "run_tests", r#"{}"#)]),
        result("5", "\ntest result: FAILED. 3 passed; 1 failed\nmore", false),
        assistant(&[("6", "run_tests", r#"{}"#)]),
        result("6", "test result: ok. 4 passed", false),
        assistant(&[("7", "task_shell_wait", r#"{"job_id":"task-1"}"#)]),
        result("7", "still running", false),
    ]
}

#[test]
fn facts_come_from_what_the_tools_did() {
    let facts = Facts::from_messages(&session());
    assert_eq!(facts.goal.as_deref(), Some("Fix the parser's handling of empty input."));
    // A refused write changed nothing; a deletion's /dev/null is not a file.
    assert_eq!(facts.changed_files, vec!["src/parse.rs", "src/lib.rs"]);
    assert_eq!(facts.checklist_item.as_deref(), Some("fix empty input"));
    // The last result per verification tool; a plain poll is not verification.
    assert_eq!(facts.verification, vec!["run_tests: test result: ok. 4 passed"]);
}

#[test]
fn the_document_has_every_section_in_order() {
    let facts = Facts::from_messages(&session());
    let model = "Here is the relay.\n# Session relay\n\n## Next action\nRun the new test.\n\n## goal:\nFix empty input.\n\n## Risks\nThe lexer too.\n";
    let doc = document(model, &facts);
    let titles: Vec<&str> = doc.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(
        titles,
        ["Goal", "Current checklist item", "Changed files", "Decisions", "Verification state", "Next action", "Risks"]
    );
    assert!(doc.starts_with("# Session relay\n"), "{doc}");
    // The model's words win; the transcript fills what it left out.
    assert!(doc.contains("## Goal\nFix empty input.\n"), "{doc}");
    assert!(doc.contains("## Changed files\n- src/parse.rs\n- src/lib.rs\n"), "{doc}");
    assert!(doc.contains("## Current checklist item\nfix empty input\n"), "{doc}");
    assert!(doc.contains("## Decisions\n(none recorded)\n"), "{doc}");
    assert!(doc.contains("## Next action\nRun the new test.\n"), "{doc}");
    assert!(!doc.contains("Here is the relay"), "{doc}");
    // Normalizing twice changes nothing (a relay read back and rewritten is stable).
    assert_eq!(document(&doc, &facts), doc);
}

#[test]
fn a_relay_without_sections_keeps_the_text() {
    let doc = document("Goal: plan. Next action: answer.", &Facts::default());
    assert!(doc.contains("Goal: plan. Next action: answer."), "{doc}");
    assert_eq!(doc.lines().filter(|l| l.starts_with("## ")).count(), SECTIONS.len());
}

#[test]
fn write_and_read_round_trip() {
    let ws = tempfile::tempdir().unwrap();
    let doc = document("## Goal\nShip it.\n## Next action\nTag the release.", &Facts::default());
    let path = write(ws.path(), &doc).unwrap();
    assert_eq!(path, ws.path().join(RELAY_FILE));
    assert_eq!(read(&path).unwrap(), doc);
    // Rewriting replaces it whole.
    let doc2 = document("## Goal\nShip it twice.", &Facts::default());
    write(ws.path(), &doc2).unwrap();
    assert_eq!(read(&path).unwrap(), doc2);
    let prompt = start_prompt(&doc2, None);
    assert!(prompt.contains("Ship it twice.") && prompt.contains("next action"), "{prompt}");
    assert!(start_prompt(&doc2, Some("Only review.")).ends_with("Only review."));
}

#[test]
fn bad_relays_are_refused_with_reasons() {
    let ws = tempfile::tempdir().unwrap();
    let missing = read(&ws.path().join(RELAY_FILE)).unwrap_err().to_string();
    assert!(missing.contains("no relay") && missing.contains("quiver relay"), "{missing}");
    let other = ws.path().join("notes.md");
    std::fs::write(&other, "# Notes\nhello").unwrap();
    assert!(read(&other).unwrap_err().to_string().contains("must start with `# Session relay`"));
    let big = ws.path().join("big.md");
    std::fs::write(&big, format!("# Session relay\n{}", "x".repeat(MAX_RELAY_BYTES))).unwrap();
    assert!(read(&big).unwrap_err().to_string().contains("at most"));
}

#[test]
fn a_planted_symlink_is_not_followed() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join(".quiver")).unwrap();
    let err = write(ws.path(), "# Session relay\n").unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

    let ws2 = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws2.path().join(".quiver")).unwrap();
    let target = outside.path().join("victim");
    std::fs::write(&target, "keep").unwrap();
    std::os::unix::fs::symlink(&target, ws2.path().join(RELAY_FILE)).unwrap();
    assert!(write(ws2.path(), "# Session relay\n").unwrap_err().to_string().contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn the_instruction_names_every_section_and_the_focus() {
    let plain = instruction(None);
    for s in SECTIONS {
        assert!(plain.contains(s), "{s}");
    }
    assert!(instruction(Some(" the flaky test ")).ends_with("Focus the relay on: the flaky test"));
    assert_eq!(instruction(Some("  ")), plain);
}
