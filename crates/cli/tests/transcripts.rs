//! The shipped example transcripts replay identically, old names included.
//! They are recorded by `record_examples` below (run it with
//! `cargo test -p quiver-cli --test it transcripts::record_examples -- --ignored` after a deliberate
//! behaviour change, and review the diff).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use quiver_engine::transcript::{Event, TRANSCRIPT_VERSION, TranscriptWriter};
use quiver_engine::{Audience, Engine, Manifest, Mode, ToolContext, Workspace};
use serde_json::{Value, json};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/transcripts")
}

fn replay(path: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_quiver")).arg("replay").arg(path).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The shipped `legacy_names` transcript calls `tts` (speech), recorded where
/// espeak-ng was installed: without it that call replays as an error, so the
/// tests that expect an identical replay need espeak-ng.
fn replays_speech() -> bool {
    quiver_testkit::espeak_or_skip()
}

#[test]
fn shipped_transcripts_replay_identically() {
    if !replays_speech() {
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no example transcripts shipped");
    let mut seen = String::new();
    for file in &files {
        let (code, out, err) = replay(file);
        assert_eq!(code, 0, "{} did not replay identically:\n{out}\n{err}", file.display());
        assert!(out.contains(" 0 differ, 0 failed"), "{out}");
        seen.push_str(&out);
    }
    // Between them, the examples exercise every kind of old name.
    assert!(seen.contains("exec_wait") && seen.contains("(hidden alias of exec_shell_wait)"), "{seen}");
    assert!(seen.contains("todo_write") && seen.contains("(deprecated: use checklist_write)"), "{seen}");
    assert!(seen.contains("tts") && seen.contains("(hidden alias of speech)"), "{seen}");
    assert!(seen.contains("deprecation notices: todo_write -> checklist_write"), "{seen}");
}

#[test]
fn a_tampered_result_is_reported_as_a_difference() {
    let original = std::fs::read_to_string(examples_dir().join("legacy_names.jsonl")).unwrap();
    let tampered = original.replace("write the release notes", "write the release NOTES");
    assert_ne!(original, tampered);
    // Change only a recorded *result*, not the call: the replay must notice.
    let lines: Vec<String> = original
        .lines()
        .zip(tampered.lines())
        .map(|(o, t)| if o.contains("\"type\":\"tool_result\"") { t.to_string() } else { o.to_string() })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tampered.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (code, out, _) = replay(&path);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DIFFERS"), "{out}");
}

#[test]
fn a_torn_transcript_replays_what_came_before() {
    if !replays_speech() {
        return;
    }
    let original = std::fs::read_to_string(examples_dir().join("legacy_names.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torn.jsonl");
    // Cut the file in the middle of the last recorded result, as a crash would.
    let last_result = original.rfind("{\"type\":\"tool_result\"").unwrap();
    let cut = last_result + 40;
    std::fs::write(&path, &original[..cut]).unwrap();
    let (code, out, err) = replay(&path);
    assert!(err.contains("is torn"), "{err}");
    // The last call lost its result line: reported, not silently passed.
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("#9   checklist_add            DIFFERS: no recorded result"), "{out}");
    assert!(out.contains("8 identical"), "{out}");
}

/// The scripted sessions behind the shipped transcripts.
fn scripts() -> Vec<(&'static str, Vec<(&'static str, Value)>)> {
    vec![(
        "legacy_names",
        vec![
            ("exec_shell", json!({"command": "printf 'hello from the background\\n'", "background": true})),
            ("exec_wait", json!({"task_id": "$task", "timeout_ms": 10000})),
            (
                "todo_write",
                json!({"items": [
                    {"content": "write the release notes", "status": "in_progress"},
                    {"content": "tag the release", "status": "pending"}
                ]}),
            ),
            ("todo_update", json!({"id": 1, "status": "completed"})),
            ("todo_list", json!({})),
            ("tts", json!({"text": "The release is tagged.", "path": "speech/release.wav"})),
            ("tool_search", json!({"query": "select:note,update_plan"})),
            ("note", json!({"text": "release tagged"})),
            ("checklist_add", json!({"content": "announce it"})),
        ],
    )]
}

/// An agent-mode session in `workspace` that records to a new transcript at `path`.
fn recording_session(
    path: &Path,
    session: &str,
    workspace: &Path,
    options: &quiver_tools::NativeOptions,
) -> ToolContext {
    let writer = Arc::new(TranscriptWriter::open(path).unwrap());
    let engine =
        Arc::new(Engine::new(quiver_tools::native_registry_with(options).unwrap(), Manifest::builtin().unwrap()));
    let audience = Audience { provider: "default".into(), model: None, mode: Mode::Agent };
    let mut ctx = engine.context(Workspace::new(workspace).unwrap(), audience);
    ctx.transcript = Some(writer.clone());
    writer
        .append(&Event::SessionStart {
            version: TRANSCRIPT_VERSION,
            session: session.into(),
            quiver_version: quiver_engine::VERSION.into(),
            workspace: ctx.workspace.root().to_string_lossy().into_owned(),
            provider: "default".into(),
            model: None,
            mode: "agent".into(),
        })
        .unwrap();
    ctx
}

#[tokio::test]
#[ignore = "writes examples/transcripts; run deliberately"]
async fn record_examples() {
    for (name, calls) in scripts() {
        let dir = tempfile::tempdir().unwrap();
        let path = examples_dir().join(format!("{name}.jsonl"));
        let _ = std::fs::remove_file(&path);
        let ctx = recording_session(&path, name, dir.path(), &quiver_tools::NativeOptions::default());
        let mut task = String::new();
        for (tool, mut args) in calls {
            if args.get("task_id") == Some(&json!("$task")) {
                args["task_id"] = json!(task);
            }
            ctx.session.advance_turn();
            let result = ctx.call(tool, args).await.unwrap();
            assert!(!result.is_error, "{tool}: {}", result.content_text());
            if let Some(id) = result.metadata.get("job_id").and_then(Value::as_str) {
                task = id.to_string();
            }
        }
    }
}

#[tokio::test]
async fn replaying_remember_never_touches_the_users_memory_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory_session.jsonl");
    let recorded_memory = dir.path().join("recorded-memory.md");
    {
        let options = quiver_tools::NativeOptions { memory_file: Some(recorded_memory.clone()), ..Default::default() };
        let work = tempfile::tempdir().unwrap();
        let ctx = recording_session(&path, "memory", work.path(), &options);
        let result = ctx.call("remember", json!({"text": "the build needs --locked"})).await.unwrap();
        assert!(!result.is_error, "{}", result.content_text());
    }
    assert!(recorded_memory.exists());

    // The user's memory file, wherever the environment points: the replay
    // must not append to it.
    let users_memory = dir.path().join("users-memory.md");
    let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .arg("replay")
        .arg(&path)
        .env("QUIVER_MEMORY_FILE", &users_memory)
        .env("QUIVER_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("#1   remember"), "{stdout}");
    assert!(!stdout.contains("FAILED"), "{stdout}");
    assert!(!users_memory.exists(), "replay wrote to the user's memory file");
    assert!(!dir.path().join("home").exists());
}

/// A crafted transcript is input like any other: its shell lines pass the same
/// command gate and OS sandbox as a live call, and it cannot grant itself yolo
/// (the default `--max-mode` is agent). Nothing outside the scratch workspace
/// may change, whether the sandbox confines the run or (without one) the gate
/// refuses it for lack of anybody to ask.
#[test]
fn a_crafted_transcript_cannot_write_outside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    let lines = [
        format!("sort --out={}/sorted </dev/null", out.display()),
        format!("echo 'touch {}/bashenv' | BASH_ENV=/dev/stdin bash -c true", out.display()),
        format!("export PS4='$(touch {}/ps4)'; set -x; true", out.display()),
        format!("touch {}/plain", out.display()),
        format!("echo hi > {}/redirect", out.display()),
    ];
    let mut events = vec![
        json!({"type": "session_start", "version": TRANSCRIPT_VERSION, "session": "crafted",
        "quiver_version": "0.1.0", "workspace": "/tmp/nowhere", "provider": "default", "mode": "yolo"})
        .to_string(),
    ];
    for (i, line) in lines.iter().enumerate() {
        events.push(
            json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "exec_shell", "arguments": {"command": line}})
                .to_string(),
        );
    }
    let path = dir.path().join("crafted.jsonl");
    std::fs::write(&path, events.join("\n") + "\n").unwrap();
    let (_code, stdout, stderr) = replay(&path);
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "the replay wrote outside the workspace: {left:?}\n{stdout}\n{stderr}");
}
