//! `quiver exec` where the terminal and the process matter: `fim_edit` through
//! the provider's FIM endpoint, Ctrl-C (SIGINT) while a tool runs, and the
//! approver answering on a real pseudo-terminal.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_engine::transcript::{Event, Transcript};

use crate::exec::{Env, events, of_type, stderr, stdout, tool_messages};

/// Only turns a hang into a failure; every wait below is for an event.
const PATIENCE: Duration = Duration::from_secs(60);

const SRC: &str = "def add(a, b):\n    # FILL\n\nprint(add(1, 2))\n";

#[tokio::test(flavor = "multi_thread")]
async fn fim_edit_is_found_loaded_and_fills_the_marker_through_the_fim_endpoint() {
    let env = Env::new();
    std::fs::write(env.ws.path().join("add.py"), SRC).unwrap();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"fill in the middle of a file"}"#),
        ScriptedTurn::tool_call("c2", "fim_edit", r#"{"path":"add.py","marker":"    # FILL"}"#),
        // Served on /beta/completions: the middle.
        ScriptedTurn::text("    return a + b"),
        ScriptedTurn::text("Filled."),
    ]);
    // The thinking model chats; FIM (which has no thinking mode) goes to deepseek-chat.
    let out = env.exec(&server, &["--json", "--model", "deepseek-reasoner", "Implement add."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.ws.path().join("add.py")).unwrap(),
        "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"
    );
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/chat/completions", "/chat/completions", "/beta/completions", "/chat/completions"]);
    let fim = requests[2].json();
    assert_eq!(fim["prompt"], "def add(a, b):\n");
    assert_eq!(fim["suffix"], "\n\nprint(add(1, 2))\n");
    assert_eq!(fim["model"], "deepseek-chat");
    assert_eq!(requests[0].json()["model"], "deepseek-reasoner");
    assert_eq!(requests[2].header("authorization"), Some("Bearer sk-test-secret"));
    // tool_search loaded it into the tail of the next request.
    let tools = requests[1].json()["tools"].to_string();
    assert!(tools.contains("\"fim_edit\""), "{tools}");
    assert!(!requests[0].json()["tools"].to_string().contains("\"fim_edit\""), "fim_edit must be deferred");
    assert!(tool_messages(&server)[1].contains("Filled `add.py` at line 2"), "{:?}", tool_messages(&server));
    let ended = of_type(&events(&out), "tool_call_ended").iter().map(|e| e["error"].is_null()).collect::<Vec<_>>();
    assert_eq!(ended, [true, true]);
}

#[tokio::test(flavor = "multi_thread")]
async fn fim_edit_without_a_fim_endpoint_is_an_error_the_model_reads_and_the_file_stays() {
    let env = Env::new();
    std::fs::write(env.ws.path().join("add.py"), SRC).unwrap();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "fim_edit", r#"{"path":"add.py","marker":"    # FILL"}"#),
        ScriptedTurn::text("No FIM here."),
    ]);
    // The built-in `openai` provider has no FIM endpoint.
    let mut cmd = env.command(None);
    cmd.env("OPENAI_API_KEY", "sk-openai-test")
        .args(["exec", "--provider", "openai", "--model", "gpt-4o", "--base-url", &server.base_url()])
        .arg("--workspace")
        .arg(env.ws.path())
        .arg("Implement add.");
    let out = cmd.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.ws.path().join("add.py")).unwrap(), SRC);
    // The built-in `openai` provider speaks the Responses wire: the result is a function_call_output.
    let last = server.requests().last().unwrap().json();
    let outputs: Vec<&str> = last["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].as_str().unwrap_or_default())
        .collect();
    let result = outputs[0];
    assert!(
        result.contains("openai") && result.contains("fill-in-the-middle") && result.contains("unchanged"),
        "{result}"
    );
    // Nothing went to a FIM route.
    assert!(server.requests().iter().all(|r| r.path == "/responses"));
}

/// Processes whose command line contains `marker` and that have not exited
/// (a zombie waiting for a reaper counts as gone).
fn live_processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if !String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()).unwrap_or("Z");
        if state != "Z" && pid != std::process::id() {
            found.push(pid);
        }
    }
    found
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_running_tool_exits_130_and_keeps_a_replayable_transcript() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    // A sleep no other process on the machine runs.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let marker = format!("sleep 3599.{nanos:09}");
    server.script([
        ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#),
        ScriptedTurn::tool_call("c2", "exec_shell", &serde_json::json!({"command": marker}).to_string()),
        ScriptedTurn::text("never reached"),
    ]);
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.arg("exec")
        .args(["--json", "--mode", "yolo", "--base-url", &server.base_url(), "--workspace"])
        .arg(env.ws.path())
        .arg("Read, then wait.")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    wait_until("the tool's process to start", || !live_processes_with(&marker).is_empty()).await;

    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output()).await.expect("exec exits on SIGINT").unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(events(&out).last().unwrap()["status"], "interrupted");
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    wait_until("the tool's process to be gone", || live_processes_with(&marker).is_empty()).await;

    // Flushed and whole: both calls are there, the first with its result.
    let path = env.only_session();
    let transcript = Transcript::read(&path).unwrap();
    assert!(transcript.torn_tail.is_none());
    let calls: Vec<(&str, bool)> = transcript.calls().iter().map(|(n, _, r, _)| (*n, r.is_some())).collect();
    assert_eq!(calls, [("read_file", true), ("exec_shell", false)]);
    assert!(transcript.events.iter().any(|e| matches!(e, Event::ModelRequest { .. })));
    // And it replays (plan mode, so the cut-off command is refused, not rerun).
    let replay = tokio::time::timeout(
        PATIENCE,
        tokio::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
            .arg("replay")
            .arg(&path)
            .args(["--max-mode", "plan", "--workspace"])
            .arg(env.ws.path())
            .output(),
    )
    .await
    .expect("replay finishes")
    .unwrap();
    let report = stdout(&replay);
    assert!(report.contains("read_file") && report.contains("identical"), "{report}{}", stderr(&replay));
    assert!(report.contains("exec_shell") && report.contains("no recorded result"), "{report}");
}

/// Everything the child wrote to the terminal so far.
struct Screen(Arc<Mutex<String>>);

impl Screen {
    /// Reads the pty's master side on a thread until the child closes it.
    fn follow(master: std::fs::File) -> Screen {
        let text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&text);
        std::thread::spawn(move || {
            let mut master = master;
            let mut buf = [0u8; 4096];
            // EIO once the last slave fd closes: the child exited.
            while let Ok(n @ 1..) = master.read(&mut buf) {
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Screen(text)
    }

    fn prompts(&self) -> usize {
        self.0.lock().unwrap().matches("allow? [y]es / [n]o / [a]lways this session").count()
    }

    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_approver_takes_no_yes_and_always_on_a_real_pty() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let touch = |id: &str, file: &str| {
        ScriptedTurn::tool_call(
            id,
            "exec_shell",
            &serde_json::json!({"command": format!("touch {file}"), "escalate": "full"}).to_string(),
        )
    };
    server.script([
        touch("c1", "one.txt"),
        touch("c2", "two.txt"),
        touch("c3", "three.txt"),
        // The same command again: "always" covers it, nobody is asked.
        touch("c4", "three.txt"),
        ScriptedTurn::text("Done."),
    ]);
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.arg("exec")
        .args(["--json", "--base-url", &server.base_url(), "--workspace"])
        .arg(env.ws.path())
        .arg("Touch some files.")
        .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::from(pty.slave))
        .stdout(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // The parent's copies of the slave are gone with `cmd`, so the reader
    // sees EIO when the child exits.
    drop(cmd);
    let mut master = std::fs::File::from(pty.master);
    let screen = Screen::follow(master.try_clone().unwrap());
    for (asked, answer) in [(1, "n\n"), (2, "y\n"), (3, "a\n")] {
        wait_until(&format!("approval prompt {asked}"), || screen.prompts() >= asked).await;
        master.write_all(answer.as_bytes()).unwrap();
    }
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output()).await.expect("exec finishes").unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", screen.text());
    assert_eq!(screen.prompts(), 3, "{}", screen.text());
    assert!(screen.text().contains("touch one.txt"), "the prompt shows the exact command: {}", screen.text());
    let ws = env.ws.path();
    assert!(!ws.join("one.txt").exists());
    assert!(ws.join("two.txt").exists() && ws.join("three.txt").exists());
    let results = tool_messages(&server);
    assert_eq!(results.len(), 4);
    assert!(results[0].contains("declined"), "{}", results[0]);
    let errors: Vec<bool> = of_type(&events(&out), "tool_call_ended").iter().map(|e| !e["error"].is_null()).collect();
    assert_eq!(errors, [true, false, false, false]);
}
