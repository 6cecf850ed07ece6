//! The three pieces on one `tokio::process::Command`, as the command gate
//! uses them (the snippet in the crate's report).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use quiver_sandbox::{Containment, EnvPolicy, SandboxPolicy};

use crate::support::*;

#[tokio::test]
async fn sandbox_scrub_and_contain_one_tokio_command() {
    if !sandbox_available("sandbox_scrub_and_contain_one_tokio_command") {
        return;
    }
    let l = layout();
    let containment = Containment::new();
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let Some(sandbox) = sandbox("gate", policy, false, &[]) else { return };
    let env = EnvPolicy::excluding(["QUIVER_MCP_TOKEN"]);

    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c")
        .arg("echo in > src/inside; touch \"$OUT/outside\" 2>/dev/null || echo refused; setsid sleep 306 >/dev/null 2>&1 & echo $!")
        .current_dir(&l.ws)
        .stdout(Stdio::piped());
    env.apply_to(&mut cmd); // 1. clears the environment
    cmd.env("OUT", &l.out); //    (the caller's own variables after it)
    let job = containment.spawn_hook(&mut cmd).unwrap(); // 2. joins the job's cgroup
    sandbox.apply_to(&mut cmd).unwrap(); // 3. namespaces, TMPDIR, Landlock, seccomp (last: later hooks run inside)
    let child = cmd.spawn().unwrap();
    job.started(child.id().unwrap());
    let out = child.wait_with_output().await.unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("refused"));
    let daemon: i32 = lines.next().unwrap().parse().unwrap();
    assert!(l.ws.join("src/inside").exists());
    assert!(!l.out.join("outside").exists());
    if sandbox.mechanism() == quiver_sandbox::SandboxMechanism::Namespaces {
        // The daemon died with its namespace when the command exited.
        let _ = daemon;
        let start = std::time::Instant::now();
        while !host_pids_with("sleep 306").is_empty() && start.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(host_pids_with("sleep 306").is_empty());
        return;
    }
    assert!(job.pids().contains(&daemon));
    job.kill().unwrap();
    assert!(job.pids().is_empty());
}
