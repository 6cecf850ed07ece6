//! Measures the sandbox's added start-up time per command: 200 runs of
//! `/bin/true` unconfined, with a sandbox built once, and with a sandbox built
//! for every command (what the command gate does), printing the median of each.
//!
//! `cargo run --release -p quiver-sandbox --example startup [-- RUNS]`
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use quiver_sandbox::{Containment, EnvPolicy, Sandbox, SandboxPolicy, probe};

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(runs: usize, mut once: impl FnMut()) -> Duration {
    once(); // warm the page cache and the probe
    p50((0..runs)
        .map(|_| {
            let t = Instant::now();
            once();
            t.elapsed()
        })
        .collect())
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let ws = std::env::current_dir().unwrap();
    println!("kernel: {}; {} runs of /bin/true; workspace {}", probe().describe(), runs, ws.display());
    let policy = || SandboxPolicy::WorkspaceWrite { writable_roots: vec![ws.clone()] };

    let plain = time(runs, || {
        Command::new("/bin/true").status().unwrap();
    });
    let reused = Sandbox::new(policy(), false).expect("sandbox");
    let prebuilt = time(runs, || {
        let mut cmd = Command::new("/bin/true");
        reused.apply_to(&mut cmd).unwrap();
        assert!(cmd.status().unwrap().success());
    });
    let per_command = time(runs, || {
        let sb = Sandbox::new(policy(), false).unwrap();
        let mut cmd = Command::new("/bin/true");
        sb.apply_to(&mut cmd).unwrap();
        assert!(cmd.status().unwrap().success());
    });
    let containment = Containment::new();
    let env = EnvPolicy::default();
    let gate = time(runs, || {
        let sb = Sandbox::new(policy(), false).unwrap();
        let mut cmd = Command::new("/bin/true");
        env.apply_to(&mut cmd);
        sb.apply_to(&mut cmd).unwrap();
        let job = containment.spawn_hook(&mut cmd).unwrap();
        let mut child = cmd.spawn().unwrap();
        job.started(child.id());
        assert!(child.wait().unwrap().success());
        job.kill().unwrap();
    });
    println!("p50 unconfined:                        {:>8.3} ms", plain.as_secs_f64() * 1e3);
    println!("p50 sandbox built once, applied:       {:>8.3} ms", prebuilt.as_secs_f64() * 1e3);
    println!("p50 sandbox built per command:         {:>8.3} ms", per_command.as_secs_f64() * 1e3);
    println!("p50 env + sandbox + job ({:?}): {:>8.3} ms", containment.mechanism(), gate.as_secs_f64() * 1e3);
}
