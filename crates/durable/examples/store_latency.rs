//! Write latency of the durable store: how long one acknowledged event takes
//! (one IMMEDIATE transaction, WAL, synchronous=FULL), p50/p99 over N writes.
//!
//! `cargo run --release -p quiver-durable --example store_latency -- [N] [DIR]`
//! DIR defaults to a temporary directory (put it on the disk you care about).

use std::time::Instant;

use quiver_durable::{NewTask, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(2000);
    let tmp = tempfile::tempdir()?;
    let dir = args.next().map(std::path::PathBuf::from).unwrap_or_else(|| tmp.path().to_path_buf());
    let store = Store::open(&dir)?;
    let task = store.create_task(&NewTask { prompt: "latency".into(), ..Default::default() })?;
    let mut samples = Vec::with_capacity(n);
    let data = serde_json::json!({"name": "read_file", "duration_ms": 3, "ok": true});
    for _ in 0..n {
        let t = Instant::now();
        store.append_task_event(&task.id, "tool_call", &data)?;
        samples.push(t.elapsed().as_micros() as u64);
    }
    samples.sort_unstable();
    let pct = |p: f64| samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)];
    let mut creates = Vec::with_capacity(200);
    for i in 0..200 {
        let t = Instant::now();
        store.create_task(&NewTask { prompt: format!("t{i}"), ..Default::default() })?;
        creates.push(t.elapsed().as_micros() as u64);
    }
    creates.sort_unstable();
    let out = format!(
        "events: n={n} p50={}us p99={}us max={}us | task_create: p50={}us p99={}us | dir={}",
        pct(0.5),
        pct(0.99),
        samples[samples.len() - 1],
        creates[100],
        creates[198],
        dir.display()
    );
    eprintln!("{out}");
    Ok(())
}
