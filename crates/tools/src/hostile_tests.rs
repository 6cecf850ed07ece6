//! Hostile input, agent mode, nobody to approve: routes that parsing a shell
//! line cannot see through must leave no file outside the
//! workspace, reach no network, leak no secret and leave no process behind.
//! The OS sandbox is what holds them, so these skip (printing why) where the
//! kernel has none, and fail then under `QUIVER_REQUIRE_SANDBOX=1` (CI).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quiver_engine::Mode;
use serde_json::json;

use crate::git::repo::test_git;
use crate::test_support::Harness;

fn sandbox_available(test: &str) -> bool {
    if crate::process::sandbox_available() {
        return true;
    }
    let why = quiver_sandbox::probe().describe();
    assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "{test}: sandbox required but {why}");
    eprintln!("skipping {test}: {why}");
    false
}

/// A git workspace with a repository executable, and a directory outside it.
fn setup() -> (Harness, tempfile::TempDir, PathBuf) {
    let h = Harness::with_mode(Mode::Agent);
    let outside = tempfile::tempdir().unwrap();
    let x = outside.path().canonicalize().unwrap().join("X");
    test_git(h.ctx.workspace.root(), &["init", "-q"]);
    h.write("README", "hello\n");
    h.write("bin/cat", &format!("#!/bin/sh\ntouch '{}'\n", x.display()));
    h.write("bin/ls", &format!("#!/bin/sh\ntouch '{}'\n", x.display()));
    for script in ["bin/cat", "bin/ls"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(h.path(script), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    test_git(h.ctx.workspace.root(), &["add", "README"]);
    (h, outside, x)
}

/// The command routes, with `X` for the outside path.
fn routes() -> Vec<&'static str> {
    vec![
        "echo 'touch X' | BASH_ENV=/dev/stdin bash -c true",
        "export PS4='$(touch X)'; set -x; true",
        "test -v 'a[$(touch X)]'",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch X' git status",
        "GIT_EXTERNAL_DIFF='touch X;:' git diff",
        "sort --out=X </dev/null",
        "echo b | sort -S 16K --compress-program=sh -o X",
        "./bin/cat README",
        "PATH=./bin:$PATH ls",
        "cat README > X",
        "cp README X",
        "git -c core.fsmonitor='touch X' status",
    ]
}

fn gone(x: &Path) -> bool {
    std::fs::symlink_metadata(x).is_err()
}

#[tokio::test]
async fn shell_routes_leave_no_file_outside_the_workspace() {
    if !sandbox_available("shell_routes_leave_no_file_outside_the_workspace") {
        return;
    }
    let (h, _outside, x) = setup();
    let (mut tried, mut held, mut ran_sandboxed) = (0, 0, 0);
    for route in routes() {
        let line = route.replace('X', &x.display().to_string());
        let r = h.call("exec_shell", json!({"command": line})).await;
        tried += 1;
        if r.metadata.get("sandbox").and_then(|v| v.as_str()) == Some("workspace-write") {
            ran_sandboxed += 1;
        }
        assert!(gone(&x), "`{line}` wrote outside the workspace: {}", r.content_text());
        held += 1;
    }
    eprintln!(
        "hostile shell routes: {held}/{tried} held ({ran_sandboxed} ran unasked in the sandbox, the rest refused)"
    );
    assert!(ran_sandboxed > 0, "nothing ran: the test proves nothing");
}

#[tokio::test]
async fn a_git_config_written_by_the_model_runs_only_sandboxed() {
    if !sandbox_available("a_git_config_written_by_the_model_runs_only_sandboxed") {
        return;
    }
    let (h, _outside, x) = setup();
    let config = format!("[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch '{}'\n", x.display());
    // write_file may refuse .git/config; either way the file must not get to run.
    let _ = h.call("write_file", json!({"path": ".git/config", "content": config})).await;
    std::fs::write(h.path(".git/config"), &config).unwrap(); // as if it had been allowed
    let status = h.call("git_status", json!({})).await;
    assert!(gone(&x), "git_status ran the fsmonitor unconfined: {}", status.content_text());
    let diff = h.call("git_diff", json!({})).await;
    assert!(gone(&x), "git_diff: {}", diff.content_text());
    let shell = h.call("exec_shell", json!({"command": "git status"})).await;
    assert!(gone(&x), "exec_shell git status: {}", shell.content_text());
    // A sandboxed command cannot write the hook file itself.
    let hook =
        h.call("exec_shell", json!({"command": "echo '[core]' >> .git/config; echo x > .git/hooks/pre-commit"})).await;
    assert!(!h.read(".git/config").ends_with("[core]\n"), "{}", hook.content_text());
    assert!(!h.path(".git/hooks/pre-commit").exists());
}

#[tokio::test]
async fn a_sandboxed_command_cannot_open_an_inet_socket() {
    if !sandbox_available("a_sandboxed_command_cannot_open_an_inet_socket") {
        return;
    }
    let h = Harness::with_mode(Mode::Agent);
    let grant = crate::process::Grant {
        permit: quiver_engine::permissions::exec_policy::Permit::Trusted,
        sandbox: crate::process::SandboxKind::WorkspaceWrite,
    };
    let launch = crate::process::Launch::new(&h.ctx, grant).unwrap();
    // bash's /dev/tcp calls socket(AF_INET, ...): refused by the seccomp filter,
    // whether or not anything listens on the port.
    let mut cmd = tokio::process::Command::new("bash");
    cmd.args(["-c", "(exec 3<>/dev/tcp/127.0.0.1/9) && echo CONNECTED; echo done"]);
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let running = launch.prepare(&mut cmd).unwrap();
    let child = cmd.spawn().unwrap();
    running.started(child.id());
    let out = child.wait_with_output().await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("done") && !text.contains("CONNECTED"), "{text}");
    if crate::process::mechanism() != quiver_sandbox::SandboxMechanism::Namespaces {
        // Landlock + seccomp: the socket itself is refused. In the namespace
        // sandbox sockets are made freely and reach only its own loopback.
        assert!(!text.contains("Connection refused"), "the socket was opened (refused only by the peer): {text}");
    }
    // A failing unasked command tells the model what the sandbox refused.
    let r = h.call("exec_shell", json!({"command": "ls /no/such/dir"})).await;
    assert_eq!(r.metadata["sandbox"], "workspace-write", "{}", r.content_text());
    assert!(r.content_text().contains("ran in the workspace sandbox"), "{}", r.content_text());
}

#[tokio::test]
async fn what_runs_unasked_is_sandboxed_and_an_approval_runs_full() {
    if !sandbox_available("what_runs_unasked_is_sandboxed_and_an_approval_runs_full") {
        return;
    }
    let h = Harness::with_mode(Mode::Agent);
    let r = h.call("exec_shell", json!({"command": "echo hi"})).await;
    assert_eq!(
        (r.metadata["permission"].as_str(), r.metadata["sandbox"].as_str()),
        (Some("trusted"), Some("workspace-write"))
    );
    let yolo = Harness::with_mode(Mode::Yolo);
    let r = yolo.call("exec_shell", json!({"command": "touch made && echo hi"})).await;
    assert_eq!((r.metadata["permission"].as_str(), r.metadata["sandbox"].as_str()), (Some("yolo"), Some("full")));
    // Nobody to ask in agent mode: an untrusted line runs inside the sandbox,
    // and leaving the sandbox is refused with a reason, nothing run.
    let r = h.call("exec_shell", json!({"command": "touch made"})).await;
    assert_eq!(r.metadata["sandbox"], "workspace-write", "{}", r.content_text());
    assert!(h.path("made").exists());
    let refused = h.call("exec_shell", json!({"command": "touch escaped", "escalate": "full"})).await;
    assert!(refused.is_error && !h.path("escaped").exists(), "{}", refused.content_text());
}

#[tokio::test]
async fn a_setsid_child_is_gone_after_cancel() {
    // `setsid` is not a trusted command: yolo runs it (`full`), and
    // containment holds in every policy.
    let h = Harness::with_mode(Mode::Yolo);
    let r = h.call("exec_shell", json!({"command": "setsid sleep 300 & echo $!; sleep 301", "background": true})).await;
    assert!(!r.is_error, "{}", r.content_text());
    let id = r.metadata["job_id"].clone();
    let mut pid = None;
    let start = Instant::now();
    while pid.is_none() && start.elapsed() < Duration::from_secs(30) {
        let out = h.call("exec_shell_wait", json!({"job_id": id, "timeout_ms": 1000})).await;
        pid = out.content_text().lines().find_map(|l| l.trim().parse::<i32>().ok());
    }
    let pid = pid.expect("the daemon's pid");
    assert!(alive(pid));
    let c = h.call("exec_shell_cancel", json!({"job_id": id})).await;
    assert!(!c.is_error, "{}", c.content_text());
    // The kill is synchronous (cgroup.kill or a /proc walk until none is left).
    assert!(!alive(pid), "setsid child {pid} survived cancel");
}

fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
    state != 'Z' && state != 'X'
}

/// The parent half: runs [`env_child`] in a copy of this test binary whose own
/// environment holds secrets, and checks what `env` in a child printed.
#[test]
fn secrets_never_reach_a_child() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "hostile_tests::env_child", "--ignored", "--nocapture", "--test-threads=1"])
        .env("QUIVER_MCP_TOKEN", "tok-s3cret")
        .env("OPENAI_API_KEY", "key-s3cret")
        .env("GITHUB_TOKEN", "gh-s3cret")
        .env("QUIVER_HOSTILE_PLAIN", "plain-visible")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("QUIVER_HOSTILE_PLAIN=plain-visible"), "the child's env was not shown: {text}");
    assert!(!text.contains("s3cret"), "a secret reached a child: {text}");
}

/// Helper of [`secrets_never_reach_a_child`] (needs the secrets in its own
/// environment, which only that test sets): prints `env` as run by exec_shell,
/// run_tests and task_shell_start.
#[tokio::test]
#[ignore = "run by secrets_never_reach_a_child in a child process"]
async fn env_child() {
    assert_eq!(std::env::var("QUIVER_MCP_TOKEN").as_deref(), Ok("tok-s3cret"), "run through its parent test");
    let h = Harness::with_mode(Mode::Yolo);
    let r = h.call("exec_shell", json!({"command": "env"})).await;
    println!("{}", r.content_text());
    let r = h.call("run_tests", json!({"command": "env"})).await;
    println!("{}", r.content_text());
}
