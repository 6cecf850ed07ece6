//! No process outlives its session: background jobs (and what they started) die
//! when the session is dropped, and a job's shell dies when quiver itself is killed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::BufRead;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_engine::{Audience, Engine, Manifest, Mode, ToolContext, Workspace};
use serde_json::{Value, json};

/// The ceiling of every wait here: it only turns a hang into a failure, and is
/// far above any delay of a loaded machine; the waits themselves end on events.
const PATIENCE: Duration = Duration::from_secs(60);

fn context(dir: &std::path::Path) -> ToolContext {
    let engine = Arc::new(Engine::new(quiver_tools::native_registry().unwrap(), Manifest::builtin().unwrap()));
    let audience = Audience { mode: Mode::Yolo, ..Audience::default() };
    engine.context(Workspace::new(dir).unwrap(), audience)
}

/// Whether `pid` is a live (non-zombie) process.
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
    state != 'Z' && state != 'X'
}

/// Waits until every pid is gone (or [`PATIENCE`] passed); returns those left.
fn wait_gone(pids: &[i32]) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || start.elapsed() > PATIENCE {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`wait_gone`] for async tests: it sleeps on the runtime, which the cleanup
/// of a dropped call may need to run (a blocked thread would stall it).
async fn wait_gone_async(pids: &[i32]) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || start.elapsed() > PATIENCE {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts `command` in the background and returns the pids it prints (one per line).
async fn start_and_read_pids(ctx: &ToolContext, command: &str, expect: usize) -> Vec<i32> {
    let r = ctx.call("exec_shell", json!({"command": command, "background": true})).await.unwrap();
    assert!(!r.is_error, "{}", r.content_text());
    let id = r.metadata["job_id"].clone();
    let mut pids = Vec::new();
    let start = Instant::now();
    while pids.len() < expect && start.elapsed() < PATIENCE {
        let out = ctx.call("exec_shell_wait", json!({"job_id": id, "timeout_ms": 1000})).await.unwrap();
        pids.extend(out.content_text().lines().filter_map(|l| l.trim().parse::<i32>().ok()));
    }
    assert_eq!(pids.len(), expect, "pids printed by `{command}`");
    pids
}

#[tokio::test]
async fn dropping_the_session_kills_every_job() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let mut pids = start_and_read_pids(&ctx, "echo $$; sleep 300 & echo $!; sleep 301", 2).await;
    pids.extend(start_and_read_pids(&ctx, "echo $$; (sleep 302; true) & echo $!; wait", 2).await);
    // A tty job: an interactive shell puts its jobs in process groups of their own.
    let r =
        ctx.call("exec_shell", json!({"command": "bash --norc -i", "background": true, "tty": true})).await.unwrap();
    let tty_id = r.metadata["job_id"].clone();
    pids.push(r.metadata["pid"].as_i64().unwrap() as i32);
    let r = ctx
        .call(
            "exec_shell_interact",
            json!({"job_id": tty_id, "input": "sleep 303 & echo job=$((0 + $!))\n", "timeout_ms": 2000}),
        )
        .await
        .unwrap();
    let mut seen = r.content_text();
    let parse = |text: &str| text.split("job=").filter_map(|s| s.lines().next()?.trim().parse::<i32>().ok()).next();
    let start = Instant::now();
    while start.elapsed() < PATIENCE {
        if parse(&seen).is_some() {
            break;
        }
        seen.push_str(
            &ctx.call("exec_shell_wait", json!({"job_id": tty_id, "timeout_ms": 500})).await.unwrap().content_text(),
        );
    }
    pids.push(parse(&seen).unwrap_or_else(|| panic!("no job pid in {seen}")));
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");

    drop(ctx);
    let left = wait_gone_async(&pids).await;
    assert!(left.is_empty(), "processes outlived their session: {left:?}");
}

#[tokio::test]
async fn a_foreground_call_that_is_dropped_stops_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let marker = dir.path().join("pid");
    let command = format!("echo $$ > {}; sleep 300", marker.display());
    let call = ctx.call("exec_shell", json!({"command": command}));
    // The host gives up on the call (a cancelled request) while the command
    // runs: the call is driven until the shell wrote its pid, then dropped.
    let written = async {
        let start = Instant::now();
        loop {
            if let Some(pid) = std::fs::read_to_string(&marker).ok().and_then(|t| t.strip_suffix('\n')?.parse().ok()) {
                return pid;
            }
            assert!(start.elapsed() < PATIENCE, "the command never wrote its pid");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let pid: i32 = tokio::select! {
        r = call => panic!("the command ended by itself: {r:?}"),
        pid = written => pid,
    };
    let left = wait_gone_async(&[pid]).await;
    assert!(left.is_empty(), "the dropped call's command still runs: {left:?}");
}

/// Runs a copy of this test binary as the "quiver" to kill (its `orphan_host`
/// test, told what to start by `QUIVER_ORPHAN_HOST`), waits for the pid of the
/// process it started, SIGKILLs the host and returns that pid.
fn kill_a_host_running(what: &str) -> i32 {
    let exe = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut host = std::process::Command::new(exe)
        .args(["orphan_host", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env("QUIVER_ORPHAN_HOST", what)
        .env("QUIVER_ORPHAN_DIR", dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = host.stdout.take().unwrap();
    let mut pid = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest prints `test orphan_host ... ` on the same line first.
        if let Some((_, p)) = line.split_once("JOB_PID=") {
            pid = Some(p.trim().parse::<i32>().unwrap());
            break;
        }
    }
    let pid = pid.expect("the host reports its job's pid");
    assert!(alive(pid));
    host.kill().unwrap();
    host.wait().unwrap();
    pid
}

/// When quiver dies without any cleanup (SIGKILL), the parent-death signal kills
/// each job's shell.
#[test]
fn killing_quiver_kills_its_jobs() {
    let pid = kill_a_host_running("exec_shell");
    let left = wait_gone(&[pid]);
    assert!(left.is_empty(), "the job's shell outlived quiver: {left:?}");
}

/// The same for a test run: `run_tests` spawns its runner itself.
#[test]
fn killing_quiver_kills_its_test_run() {
    let pid = kill_a_host_running("run_tests");
    let left = wait_gone(&[pid]);
    assert!(left.is_empty(), "the test runner outlived quiver: {left:?}");
}

/// The host side of the tests above, which run it by name (`--ignored
/// --exact`). Ignored so it never counts as a test of its own: without the
/// variables they set it has nothing to do.
#[test]
#[ignore = "the host process of killing_quiver_kills_*, which run it themselves"]
fn orphan_host() {
    let what = std::env::var_os("QUIVER_ORPHAN_HOST")
        .expect("orphan_host is run by killing_quiver_kills_* (QUIVER_ORPHAN_HOST unset), not on its own");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let dir = std::path::PathBuf::from(std::env::var_os("QUIVER_ORPHAN_DIR").unwrap());
        let ctx = context(&dir);
        if what == "run_tests" {
            // The runner writes its pid, then runs "forever"; the call never returns.
            let call = ctx.call("run_tests", json!({"command": "sh -c 'echo $$ > runner.pid; exec sleep 300'"}));
            let watch = async {
                let file = dir.join("runner.pid");
                loop {
                    if let Ok(text) = std::fs::read_to_string(&file)
                        && text.ends_with('\n')
                    {
                        println!("JOB_PID={}", text.trim());
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                // Alive until the test kills it.
                tokio::time::sleep(5 * PATIENCE).await;
            };
            tokio::select! { _ = call => {}, _ = watch => {} }
            return;
        }
        let r =
            ctx.call("exec_shell", json!({"command": "echo $$; exec sleep 300", "background": true})).await.unwrap();
        let id: Value = r.metadata["job_id"].clone();
        // The first line of output is the shell's pid, whenever it comes.
        let mut out = String::new();
        let start = Instant::now();
        while !out.contains('\n') {
            assert!(start.elapsed() < PATIENCE, "the job printed no pid: {out}");
            let wait = ctx.call("exec_shell_wait", json!({"job_id": id, "timeout_ms": 1000})).await.unwrap();
            out.push_str(&wait.content_text());
        }
        println!("JOB_PID={}", out.lines().next().unwrap().trim());
        // Alive until the test kills it.
        tokio::time::sleep(5 * PATIENCE).await;
    });
}
