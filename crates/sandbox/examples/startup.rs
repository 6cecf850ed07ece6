//! Measures the sandbox's added start-up time per command: 200 runs of
//! `/bin/true` unconfined, with a sandbox built once, and with a sandbox built
//! for every command (what the command gate does), printing p50 and p99 of
//! each, for each mechanism this kernel offers (namespaces, Landlock alone).
//!
//! `cargo run --release -p quiver-sandbox --example startup [-- RUNS [no-limits]]`
//! (`no-limits`: without the command limits, to see what the pids cgroup costs).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use quiver_sandbox::{Containment, EnvPolicy, Limits, Sandbox, SandboxMechanism, SandboxOptions, SandboxPolicy, probe};

/// (p50, p99) of `runs` timed calls, after one warm-up call.
fn time(runs: usize, mut once: impl FnMut()) -> (Duration, Duration) {
    once(); // warm the page cache and the probe
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            once();
            t.elapsed()
        })
        .collect();
    samples.sort();
    (samples[samples.len() / 2], samples[(samples.len() * 99 / 100).min(samples.len() - 1)])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let with_limits = std::env::args().nth(2).as_deref() != Some("no-limits");
    let ws = std::env::current_dir().unwrap();
    println!(
        "kernel: {}; {} runs of /bin/true; workspace {}; command limits {}",
        probe().describe(),
        runs,
        ws.display(),
        if with_limits { "on" } else { "off" }
    );
    let policy = || SandboxPolicy::WorkspaceWrite { writable_roots: vec![ws.clone()] };

    let plain = time(runs, || {
        Command::new("/bin/true").status().unwrap();
    });
    println!("unconfined:                       p50 {:>7.3} ms  p99 {:>7.3} ms", ms(plain.0), ms(plain.1));
    let mut mechanisms = vec![SandboxMechanism::Landlock];
    if probe().namespaces.is_ok() {
        mechanisms.insert(0, SandboxMechanism::Namespaces);
    }
    let containment = Containment::new();
    let env = EnvPolicy::default();
    for mechanism in mechanisms {
        let build = || {
            // The limits every agent command gets (quiver-tools' COMMAND_LIMITS):
            // as root they add a pids cgroup per sandbox where one is writable.
            let limits = if with_limits {
                Limits { processes: Some(4096), memory_bytes: Some(16 << 30) }
            } else {
                Limits::default()
            };
            let options = SandboxOptions { mechanism: Some(mechanism), limits, ..Default::default() };
            Sandbox::with_options(policy(), false, options).expect("sandbox")
        };
        let reused = build();
        let prebuilt = time(runs, || {
            let mut cmd = Command::new("/bin/true");
            reused.apply_to(&mut cmd).unwrap();
            assert!(cmd.status().unwrap().success());
        });
        let per_command = time(runs, || {
            let sb = build();
            let mut cmd = Command::new("/bin/true");
            sb.apply_to(&mut cmd).unwrap();
            assert!(cmd.status().unwrap().success());
        });
        let gate = time(runs, || {
            let sb = build();
            let mut cmd = Command::new("/bin/true");
            env.apply_to(&mut cmd);
            let job = containment.spawn_hook(&mut cmd).unwrap();
            sb.apply_to(&mut cmd).unwrap();
            let mut child = cmd.spawn().unwrap();
            job.started(child.id());
            assert!(child.wait().unwrap().success());
            job.kill().unwrap();
        });
        let name = mechanism.as_str();
        println!("{name:>10}: built once, applied  p50 {:>7.3} ms  p99 {:>7.3} ms", ms(prebuilt.0), ms(prebuilt.1));
        println!(
            "{name:>10}: built per command    p50 {:>7.3} ms  p99 {:>7.3} ms",
            ms(per_command.0),
            ms(per_command.1)
        );
        println!(
            "{name:>10}: env + job ({:?}) + sandbox  p50 {:>7.3} ms  p99 {:>7.3} ms",
            containment.mechanism(),
            ms(gate.0),
            ms(gate.1)
        );
    }
    // Every sandboxed command's connect supervisor (and its channel's
    // receiver) ends with the command: none may pile up over the runs.
    std::thread::sleep(Duration::from_millis(200));
    let threads = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Threads:").map(|n| n.trim().to_string())))
        .unwrap_or_default();
    println!("threads left after every run: {threads}");
}
