//! What the OS sandbox adds to an `exec_shell` call: the p50 wall time of a
//! foreground `true` run unasked in agent mode (trusted, so `workspace-write`:
//! Landlock rules built for the call, seccomp, env scrub, a containment job)
//! side by side with the same call in yolo mode (`full`: env scrub and
//! containment only), both through the whole tool path (gate, dispatch, job).
//!
//! `cargo run --release -p quiver-tools --example shell_startup [-- RUNS] [WORKSPACE]`
//! (default 100 runs, a fresh temp workspace; pass a big git checkout to see the
//! cost of splitting a git workspace's rules).

#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_engine::{Audience, Engine, Manifest, Mode, Workspace};
use serde_json::json;

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

async fn time(mode: Mode, root: &std::path::Path, runs: usize) -> anyhow::Result<(Duration, String)> {
    let engine = Arc::new(Engine::new(quiver_tools::native_registry()?, Manifest::builtin()?));
    let ctx = engine.context(Workspace::new(root)?, Audience { mode, ..Audience::default() });
    let mut samples = Vec::with_capacity(runs);
    let mut sandbox = String::new();
    for i in 0..=runs {
        let started = Instant::now();
        let r = ctx.call("exec_shell", json!({"command": "true"})).await?;
        let took = started.elapsed();
        anyhow::ensure!(!r.is_error, "exec_shell failed: {}", r.content_text());
        sandbox = r.metadata["sandbox"].as_str().unwrap_or("?").to_string();
        if i > 0 {
            samples.push(took); // the first call warms caches and the probe
        }
    }
    Ok((p50(samples), sandbox))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let tmp = tempfile::tempdir()?;
    let root = args.next().map(std::path::PathBuf::from).unwrap_or_else(|| tmp.path().to_path_buf());
    println!("kernel: {}; {runs} runs of exec_shell `true` in {}", quiver_sandbox::probe().describe(), root.display());
    let (full, full_kind) = time(Mode::Yolo, &root, runs).await?;
    let (sandboxed, kind) = time(Mode::Agent, &root, runs).await?;
    println!("p50 {full_kind:>16}: {:>8.2} ms", full.as_secs_f64() * 1e3);
    println!("p50 {kind:>16}: {:>8.2} ms", sandboxed.as_secs_f64() * 1e3);
    println!("added by the sandbox: {:.2} ms", (sandboxed.as_secs_f64() - full.as_secs_f64()) * 1e3);
    Ok(())
}
