//! Containment: a job's `setsid` and double-forked children are gone after
//! `kill`/`kill_all`, with either mechanism.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use quiver_sandbox::{Containment, Mechanism, Prefer, SandboxPolicy};

use crate::support::*;

/// Scripts whose leader prints the pid of a process meant to outlive it.
const ESCAPES: &[(&str, &str)] = &[
    ("setsid", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!"),
    ("double fork", "bash -c 'setsid sleep 301 </dev/null >/dev/null 2>&1 & echo $!'"),
    ("nohup + disown", "nohup sleep 302 </dev/null >/dev/null 2>&1 & disown; echo $!"),
    ("leader still running", "setsid sleep 303 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 304 >/dev/null"),
];

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

fn gone_within(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !running(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Starts `script` as a job and returns (leader, escaped pid).
fn start(c: &Containment, script: &str) -> (std::process::Child, quiver_sandbox::Job, i32) {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    let job = c.spawn_hook(&mut cmd).unwrap();
    let mut child = cmd.spawn().unwrap();
    job.started(child.id());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let pid: i32 = line.trim().parse().unwrap_or_else(|_| panic!("no pid from {script:?}: {line:?}"));
    assert!(running(pid), "{script}: the escaping process is not running");
    (child, job, pid)
}

fn escapes_are_killed(prefer: Prefer) {
    let c = Containment::with(prefer);
    eprintln!("containment mechanism: {:?}", c.mechanism());
    let mut held = 0;
    for (name, script) in ESCAPES {
        let (mut leader, job, pid) = start(&c, script);
        // Membership is read from /proc (the job marker in the environment in
        // the subreaper fallback), which a process in the middle of an exec
        // (`nohup` replacing itself) briefly hides: wait for it, bounded.
        let listed = (0..200).any(|_| {
            let found = job.pids().contains(&pid);
            if !found {
                std::thread::sleep(Duration::from_millis(10));
            }
            found
        });
        assert!(listed, "{name}: job does not list {pid}: {:?}", job.pids());
        job.kill().unwrap();
        assert!(gone_within(pid, Duration::from_secs(5)), "{name}: {pid} survived kill");
        let _ = leader.wait();
        held += 1;
    }
    // kill_all reaches every job at once (session end).
    let started: Vec<_> = ESCAPES.iter().map(|(_, s)| start(&c, s)).collect();
    c.kill_all().unwrap();
    for (mut leader, _, pid) in started {
        assert!(gone_within(pid, Duration::from_secs(5)), "{pid} survived kill_all");
        let _ = leader.wait();
        held += 1;
    }
    eprintln!("{:?}: escapes tried {}, held {held}", c.mechanism(), ESCAPES.len() * 2);
}

#[test]
fn escapes_are_killed_with_the_automatic_mechanism() {
    escapes_are_killed(Prefer::Auto);
}

#[test]
fn escapes_are_killed_with_the_subreaper_fallback() {
    escapes_are_killed(Prefer::Subreaper);
}

#[test]
fn cgroup_is_used_where_writable() {
    let c = Containment::new();
    if std::env::var("QUIVER_REQUIRE_CGROUP").as_deref() == Ok("1") {
        assert!(matches!(c.mechanism(), Mechanism::Cgroup { .. }), "{:?}", c.mechanism());
    }
    if let Mechanism::Cgroup { parent } = c.mechanism() {
        assert!(parent.exists());
        let parent = parent.clone();
        drop(c);
        assert!(!parent.exists(), "the containment's cgroup outlived it");
    }
}

#[test]
fn dropping_the_containment_kills_its_jobs() {
    let c = Containment::new();
    let (mut leader, _job, pid) = start(&c, ESCAPES[0].1);
    drop(c);
    assert!(gone_within(pid, Duration::from_secs(5)));
    let _ = leader.wait();
}

#[test]
fn a_sandboxed_contained_job() {
    if !sandbox_available("a_sandboxed_contained_job") {
        return;
    }
    let l = layout();
    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let Some(sb) = sandbox("contained", policy, false, &[]) else { return };
    let c = Containment::new();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg("setsid sleep 305 </dev/null >/dev/null 2>&1 & echo $!; touch $OUT/x 2>/dev/null; echo $?")
        .env("OUT", &l.out)
        .stdout(Stdio::piped());
    let job = c.spawn_hook(&mut cmd).unwrap();
    sb.apply_to(&mut cmd).unwrap();
    let child = cmd.spawn().unwrap();
    job.started(child.id());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let pid: i32 = lines.next().unwrap().parse().unwrap();
    assert_ne!(lines.next(), Some("0"), "the write outside succeeded");
    if sb.mechanism() == quiver_sandbox::SandboxMechanism::Namespaces {
        // The pid is the namespace's; the leftover died with the command
        // (its namespace's init exited).
        let start = Instant::now();
        while !host_pids_with("sleep 305").is_empty() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(host_pids_with("sleep 305").is_empty(), "a setsid leftover outlived its sandboxed command");
        return;
    }
    assert!(running(pid));
    c.kill_all().unwrap();
    assert!(gone_within(pid, Duration::from_secs(5)));
}

/// `SigIgn` of `/proc/self/status` as a bit mask.
fn ignored_signals(status: &str) -> u64 {
    let line = status.lines().find(|l| l.starts_with("SigIgn:")).unwrap();
    u64::from_str_radix(line["SigIgn:".len()..].trim(), 16).unwrap()
}

/// A quiver started with SIGINT ignored (a shell's background job, some
/// service managers) must not pass that on: an ignored signal stays ignored
/// across exec, and an interrupt (Python's KeyboardInterrupt, a build's
/// cleanup) would never reach the command. This holds without any sandbox:
/// the hook every contained command gets resets it.
#[test]
#[allow(unsafe_code)]
fn a_command_starts_with_the_interrupting_signals_at_their_default() {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new("cat");
    cmd.arg("/proc/self/status").stdout(Stdio::piped());
    // Registered first, so it runs first: the child inherits "ignored" as
    // it would from a quiver started that way.
    // SAFETY: `signal` with integer arguments only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1] {
                libc::signal(sig, libc::SIG_IGN);
            }
            Ok(())
        });
    }
    let unchanged = {
        let mut plain = Command::new("cat");
        plain.arg("/proc/self/status").stdout(Stdio::piped());
        // SAFETY: as above.
        unsafe {
            plain.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                Ok(())
            });
        }
        ignored_signals(&String::from_utf8(plain.output().unwrap().stdout).unwrap())
    };
    let bit = |sig: i32| 1u64 << (sig - 1);
    assert_ne!(unchanged & bit(libc::SIGINT), 0, "the check reads SigIgn wrong");
    quiver_sandbox::die_with_parent(&mut cmd);
    let ignored = ignored_signals(&String::from_utf8(cmd.output().unwrap().stdout).unwrap());
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        assert_eq!(ignored & bit(sig), 0, "signal {sig} still ignored (SigIgn {ignored:x})");
    }
    // Only those: what else the caller chose to ignore is the caller's.
    assert_ne!(ignored & bit(libc::SIGUSR1), 0, "SigIgn {ignored:x}");
}
