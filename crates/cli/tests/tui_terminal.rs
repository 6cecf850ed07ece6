//! The interactive agent in a real terminal: tmux runs `quiver` against the
//! scripted model server, the test types with `send-keys` and reads the
//! screen with `capture-pane`, as a person would. One session walks the
//! whole path: a streamed answer, an approval, a background job in `/jobs`
//! and its cancel, `/mcp add` then disable (the user's config file edited,
//! its comments kept), `/relay`, Esc mid-stream, a follow-up, quitting; and
//! `quiver audit` on the transcript finds no head change and no prefix break.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use quiver_agent::scripted::{Fault, ScriptedServer, ScriptedTurn};

use crate::exec::Env;

/// Only turns a hang into a failure; every wait below is for the screen.
const PATIENCE: Duration = Duration::from_secs(60);

/// A tmux server of the test's own (its own socket), so nothing of the
/// person's tmux is touched, and it is killed when the test ends.
pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(crate) fn start(command: &str, width: u16, height: u16) -> Option<Tmux> {
        quiver_testkit::program_or_skip("tmux", "apt-get install tmux")?;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let tmux = Tmux { socket: format!("quiver-test-{}-{nanos}", std::process::id()) };
        let status = Command::new("tmux")
            .args(["-L", &tmux.socket, "-f", "/dev/null", "new-session", "-d", "-s", "t"])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success(), "tmux did not start");
        Some(tmux)
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(["-L", &self.socket]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// Types `text` literally (no key names), then nothing else.
    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "t", "-l", text]);
    }

    pub(crate) fn key(&self, key: &str) {
        self.run(&["send-keys", "-t", "t", key]);
    }

    /// Types a line and sends it.
    pub(crate) fn line(&self, text: &str) {
        self.type_text(text);
        self.key("Enter");
    }

    async fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        self.wait_within(PATIENCE, what, done).await.unwrap_or_else(|why| panic!("{why}"))
    }

    /// The screen once `done` holds for it, or why not within `patience`.
    pub(crate) async fn wait_within(
        &self,
        patience: Duration,
        what: &str,
        done: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return Ok(screen);
            }
            if start.elapsed() > patience {
                return Err(format!("timed out waiting for {what}; the screen:\n{screen}"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn wait_text(&self, text: &str) -> String {
        self.wait_for(&format!("`{text}`"), |s| s.contains(text)).await
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ =
            Command::new("tmux").args(["-L", &self.socket, "kill-server"]).stderr(std::process::Stdio::null()).status();
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command line tmux runs: quiver with the test's isolated directories
/// and `vars`, its exit status written to `exit_file` when it ends.
pub(crate) fn quiver_command(env: &Env, args: &[&str], vars: &[(&str, &str)], exit_file: &Path) -> String {
    let dirs = [
        ("QUIVER_CONFIG_DIR", env.config.path().display().to_string()),
        ("QUIVER_STATE_DIR", env.state.path().display().to_string()),
        ("QUIVER_CACHE_DIR", env.state.path().join("cache").display().to_string()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let assignments: Vec<String> = dirs
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .chain(vars.iter().copied())
        .map(|(k, v)| format!("{k}={}", shell_quote(v)))
        .collect();
    let args: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    format!(
        "cd {} && env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u DEEPSEEK_API_KEY {} {} {} ; echo $? > {}",
        shell_quote(&env.ws.path().display().to_string()),
        assignments.join(" "),
        shell_quote(env!("CARGO_BIN_EXE_quiver")),
        args.join(" "),
        shell_quote(&exit_file.display().to_string()),
    )
}

/// Quits with Ctrl-C twice and returns quiver's exit status, or why not.
pub(crate) async fn quit(tmux: &Tmux, exit_file: &Path) -> Result<String, String> {
    tmux.key("C-c");
    tmux.key("C-c");
    let start = Instant::now();
    // `echo $? > FILE` creates the file before it writes the line: the
    // status is there once the line ends.
    loop {
        let written = std::fs::read_to_string(exit_file).unwrap_or_default();
        if written.ends_with('\n') {
            return Ok(written.trim().to_string());
        }
        if start.elapsed() > PATIENCE {
            return Err(format!("quiver did not quit:\n{}", tmux.screen()));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `quiver audit` on a transcript: its summary line, or why it failed.
pub(crate) fn audit(session: &Path) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_quiver")).arg("audit").arg(session).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !report.contains(" head_changes=0 ") || !report.contains(" prefix_breaks=0 ") {
        return Err(format!("audit: {report}{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(report)
}

fn only_session(env: &Env) -> PathBuf {
    let dir = env.state.path().join("sessions");
    let files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_works_with_the_interactive_agent_in_a_real_terminal() {
    let env = Env::new();
    let config_file = env.config.path().join("config.toml");
    std::fs::write(&config_file, "# my quiver settings\n[model]\nprovider = \"deepseek\" # keep this\n").unwrap();
    let server = ScriptedServer::start().await.unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let job = format!("sleep 3599.{nanos:09}");
    server.script([
        ScriptedTurn::text("Hello from the **scripted** model."),
        ScriptedTurn::tool_call("c1", "exec_shell", r#"{"command":"touch approved.txt","escalate":"full"}"#),
        ScriptedTurn::text("Touched it."),
        ScriptedTurn::tool_call(
            "c2",
            "exec_shell",
            &serde_json::json!({"command": job, "background": true}).to_string(),
        ),
        ScriptedTurn::text("The job runs."),
        // /relay: one request without tools.
        ScriptedTurn::text("# Session relay\n## Goal\nTry the terminal.\n## Next action\nQuit."),
        // Cut off by Esc after its first words.
        ScriptedTurn::text("This answer is long and will be interrupted before it ends")
            .with_fault(Fault::StallAfterFirstChunk(Duration::from_secs(120))),
        ScriptedTurn::text("Still here after the interruption."),
        // /compact: the summary request.
        ScriptedTurn::text("We tried the terminal: an answer, an approval, a job, a relay."),
    ]);
    let exit_file = env.state.path().join("exit-status");
    let command = quiver_command(
        &env,
        &["--base-url", &server.base_url()],
        &[("DEEPSEEK_API_KEY", "sk-test-secret")],
        &exit_file,
    );
    let Some(tmux) = Tmux::start(&command, 110, 32) else { return };

    tmux.wait_text("Ctrl+P palette").await;
    tmux.line("say hello");
    let screen = tmux.wait_text("Hello from the scripted model.").await;
    assert!(screen.contains("› say hello"), "{screen}");

    // An escalation is asked inline, and the answer goes to the engine.
    tmux.line("touch a file please");
    let screen = tmux.wait_text("quiver needs approval").await;
    assert!(screen.contains("touch approved.txt"), "the prompt shows the command:\n{screen}");
    tmux.type_text("y");
    tmux.wait_text("Touched it.").await;
    assert!(env.ws.path().join("approved.txt").exists());

    // A background job shows in /jobs, and /jobs cancel stops it.
    tmux.line("start the watcher");
    tmux.wait_text("The job runs.").await;
    tmux.line("/jobs");
    let in_panel = |l: &&str| l.contains(&job) && l.contains("job-") && l.contains("running");
    let screen = tmux.wait_for("the job in /jobs", |s| s.lines().any(|l| in_panel(&l))).await;
    let row = screen.lines().find(in_panel).unwrap();
    let id = row
        .split(|c: char| c.is_whitespace() || c == '│')
        .find(|w| w.starts_with("job-"))
        .expect("a job id")
        .to_string();
    assert!(row.contains("running"), "{screen}");
    tmux.key("Escape");
    tmux.line(&format!("/jobs cancel {id}"));
    tmux.wait_for("the job stopped", |s| {
        s.contains(&format!("{id} was stopped")) || s.contains(&format!("{id} was killed"))
    })
    .await;
    tmux.key("Escape");

    // /mcp init leaves an existing file alone; /mcp add, then disable: the
    // user's file is edited at once, comments kept (adding starts nothing).
    tmux.line("/mcp init");
    tmux.wait_text("exists (left as it is)").await;
    tmux.key("Escape");
    tmux.line("/mcp add everything -- npx -y @modelcontextprotocol/server-everything");
    let screen = tmux.wait_text("server-everything · Esc closes").await;
    assert!(!screen.contains("exited with"), "{screen}");
    tmux.key("Escape");
    tmux.line("/mcp disable everything");
    tmux.wait_text("mcp disable everything · Esc closes").await;
    tmux.key("Escape");
    let config = std::fs::read_to_string(&config_file).unwrap();
    assert!(config.contains("# my quiver settings") && config.contains("# keep this"), "{config}");
    assert!(config.contains("[mcp_servers.everything]"), "{config}");
    assert!(config.contains("enabled = false"), "{config}");

    // /relay writes the hand-off file.
    tmux.line("/relay");
    tmux.wait_text("Try the terminal.").await;
    tmux.wait_text("handoff.md · Esc closes").await;
    tmux.key("Escape");
    let relay = std::fs::read_to_string(env.ws.path().join(".quiver/handoff.md")).unwrap();
    assert!(relay.contains("# Session relay") && relay.contains("Try the terminal."), "{relay}");

    // Esc mid-stream stops the turn; the session goes on.
    tmux.line("write a long answer");
    tmux.wait_text("This answer").await;
    tmux.key("Escape");
    tmux.wait_text("interrupted").await;
    tmux.line("are you there?");
    tmux.wait_text("Still here after the interruption.").await;

    // /compact summarizes now; the transcript records the one allowed break.
    tmux.line("/compact");
    tmux.wait_text("compacted the conversation (~").await;

    // Ctrl-C twice quits and gives the terminal back.
    assert_eq!(quit(&tmux, &exit_file).await.unwrap(), "0");
    let session = only_session(&env);
    let report = audit(&session).unwrap();
    assert!(report.contains(" compactions=1 "), "{report}");
    drop(tmux);

    // Resumed: the conversation is on screen again, and the job that died
    // with the first quiver is listed as stale, never as running.
    let id = session.file_stem().unwrap().to_str().unwrap().to_string();
    let exit_file = env.state.path().join("exit-status-2");
    let command = quiver_command(
        &env,
        &["resume", &id, "--base-url", &server.base_url()],
        &[("DEEPSEEK_API_KEY", "sk-test-secret")],
        &exit_file,
    );
    let tmux = Tmux::start(&command, 110, 32).unwrap();
    tmux.wait_text(&format!("resumed session {id}")).await;
    // After the compaction, the conversation is the relay and what followed.
    tmux.wait_text("We tried the terminal").await;
    tmux.line("/jobs");
    let screen = tmux.wait_text("stale").await;
    let row = screen.lines().find(|l| l.contains(&job) && l.contains("stale")).unwrap_or_default();
    assert!(!row.is_empty() && !row.contains("running"), "{screen}");
    tmux.key("Escape");
    assert_eq!(quit(&tmux, &exit_file).await.unwrap(), "0");
    assert_eq!(only_session(&env), session, "resuming appends to the same transcript");
}

#[test]
fn without_a_terminal_quiver_prints_usage_and_exits_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_quiver")).stdin(std::process::Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Usage") && err.contains("quiver exec"), "{err}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", String::from_utf8_lossy(&out.stdout));
    let resume =
        Command::new(env!("CARGO_BIN_EXE_quiver")).arg("resume").stdin(std::process::Stdio::null()).output().unwrap();
    assert_eq!(resume.status.code(), Some(2));
}
