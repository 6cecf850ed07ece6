//! Encoder timing without a CLI build: model load, warm query-encode latency
//! (p50 / p99 over a fixed list of short requests), and the cold encode of
//! 1,000 tool texts (wall and CPU time).
//!
//! `cargo run --release -p quiver-search --features semantic,bench --example
//! encode_timing -- [MODEL_DIR] [--rounds N] [--tools N] [--batch N]
//! [--save FILE] [--compare FILE] [--no-cold]`
//!
//! MODEL_DIR defaults to `QUIVER_SEARCH_MODEL`. The tool texts are what the
//! engine embeds ([`embedded_texts`]) for the three catalogs in
//! `$BENCH_DIR/catalogs` (default `bench/search/data` in the repository), the
//! mixed catalog grown to `--tools` with renamed copies as `quiver bench search
//! --replicate` does. Unlike the engine (which encodes each distinct text
//! once), every one of the N texts is encoded, so the number is an upper bound.
//! `--save` writes the cold vectors (raw little-endian f32), `--compare` reads
//! such a file and prints the worst cosine against it: a check that a faster
//! encoder still gives the same vectors on real tool texts.
//!
//! CPU time is the process's user + system time from `/proc/self/stat` (all
//! threads, clock ticks of 10 ms), so per-query CPU is the total over all
//! rounds divided by the number of queries.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quiver_search::SearchDoc;
use quiver_search::bench as b;
use quiver_search::semantic::{Encoder, embedded_texts};

/// Short requests of the kind an agent sends to `tool_search`.
const QUERIES: &[&str] = &[
    "show me the open bugs in the octocat/hello-world repo",
    "file a new bug report about the login page crashing",
    "open a PR from my feature branch into main",
    "list my storage accounts",
    "what's the weather like tomorrow",
    "send an email to my manager",
    "delete the old branch",
    "search the code for TODO comments",
    "restart the web app",
    "get the logs of the failing pipeline",
    "translate this paragraph into French",
    "create a new key vault secret",
    "who reviewed pull request 42",
    "query the database for last week's orders",
    "book a meeting room for Friday",
    "convert the document to pdf",
    "find flights from Paris to Berlin",
    "read the file",
    "commit",
    "scale the kubernetes cluster to five nodes",
    "summarize the latest release notes",
    "check the status of my deployment",
    "upload the image to blob storage",
    "what changed in the last commit",
];

struct Args {
    model: PathBuf,
    rounds: usize,
    tools: usize,
    batch: usize,
    save: Option<PathBuf>,
    compare: Option<PathBuf>,
    cold: bool,
    gemm: bool,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut model = std::env::var_os("QUIVER_SEARCH_MODEL").map(PathBuf::from);
    let (mut rounds, mut tools, mut batch, mut save, mut compare) = (20, 1000, 32, None, None);
    let (mut cold, mut gemm) = (true, false);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().with_context(|| format!("{name} needs a value"));
        match a.as_str() {
            "--rounds" => rounds = value("--rounds")?.parse()?,
            "--tools" => tools = value("--tools")?.parse()?,
            "--batch" => batch = value("--batch")?.parse()?,
            "--save" => save = Some(PathBuf::from(value("--save")?)),
            "--compare" => compare = Some(PathBuf::from(value("--compare")?)),
            "--no-cold" => cold = false,
            "--gemm" => gemm = true,
            s if s.starts_with("--") => bail!("unknown option {s}"),
            dir => model = Some(PathBuf::from(dir)),
        }
    }
    let model = model.context("give the model directory as an argument or set QUIVER_SEARCH_MODEL")?;
    Ok(Args { model, rounds: rounds.max(1), tools, batch, save, compare, cold, gemm })
}

/// User + system CPU time of the whole process (every thread).
fn cpu_time() -> Duration {
    let ticks = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // fields after the command name (which may hold spaces) close with ')'
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            // utime and stime are fields 14 and 15 of the whole line
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    // USER_HZ is 100 on every Linux ABI quiver runs on
    Duration::from_millis(ticks * 10)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

/// The mixed catalog grown to `total` tools with copies under new server
/// names (`quiver bench search --replicate`).
fn tool_docs(total: usize) -> anyhow::Result<Vec<SearchDoc>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = std::env::var_os("BENCH_DIR").map_or_else(|| root.join("bench/search/data"), PathBuf::from);
    let mut base = Vec::new();
    for name in ["azure-mcp.json", "github-mcp.json", "livemcp.json"] {
        base.extend(b::load_catalog(&data.join("catalogs").join(name))?);
    }
    if base.is_empty() {
        bail!("no tools in {}", data.join("catalogs").display());
    }
    let mut out: Vec<SearchDoc> = base.iter().take(total).cloned().collect();
    let mut copy = 0;
    while out.len() < total {
        copy += 1;
        for d in base.iter().take(total - out.len()) {
            let server = format!("{}copy{copy}", d.server.clone().unwrap_or_else(|| "srv".into()));
            let mut c = d.clone();
            c.name = format!("mcp__{server}__{}", d.short_name());
            c.server = Some(server);
            out.push(c);
        }
    }
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let load = loadavg();
    println!("model {}  load average {load}", args.model.display());
    if args.gemm {
        gemm_throughput()?;
    }

    let (w, c) = (Instant::now(), cpu_time());
    let enc = Encoder::load(&args.model)?;
    println!("load: {:.0} ms wall, {:.0} ms cpu", ms(w.elapsed()), ms(cpu_time() - c));

    for q in QUERIES {
        enc.encode_query(q)?;
    }
    let mut times = Vec::with_capacity(args.rounds * QUERIES.len());
    let c = cpu_time();
    for _ in 0..args.rounds {
        for q in QUERIES {
            let t = Instant::now();
            enc.encode_query(q)?;
            times.push(t.elapsed());
        }
    }
    let cpu_per = (cpu_time() - c) / times.len() as u32;
    times.sort();
    println!(
        "query encode ({} queries x {} rounds, warm): p50 {:.2} ms  p99 {:.2} ms  mean cpu {:.2} ms",
        QUERIES.len(),
        args.rounds,
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(cpu_per),
    );

    if !args.cold {
        return Ok(());
    }
    let docs = tool_docs(args.tools)?;
    let (texts, _) = embedded_texts(&docs);
    let distinct = texts.iter().collect::<std::collections::HashSet<_>>().len();
    let (w, c) = (Instant::now(), cpu_time());
    let vectors = enc.encode_passages(&texts, args.batch)?;
    let (wall, cpu) = (w.elapsed(), cpu_time() - c);
    println!(
        "cold encode of {} tool texts ({distinct} distinct, batch {}): {:.1} s wall, {:.1} s cpu",
        texts.len(),
        args.batch,
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
    println!("load average after {}", loadavg());

    if let Some(path) = &args.save {
        let bytes: Vec<u8> = vectors.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.compare {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let old: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let dim = enc.dim();
        if old.len() != vectors.len() * dim {
            bail!("{} holds {} values, expected {}", path.display(), old.len(), vectors.len() * dim);
        }
        let (mut worst, mut at) = (f64::MAX, 0);
        for (i, (new, old)) in vectors.iter().zip(old.chunks_exact(dim)).enumerate() {
            let cos = cosine(new, old);
            if cos < worst {
                (worst, at) = (cos, i);
            }
        }
        println!("worst cosine against {}: {worst:.9} (text {at}: {:?})", path.display(), &texts[at]);
    }
    Ok(())
}

/// What this machine's f32 matmul (candle, gemm) does on the encoder's
/// shapes, to read the encode times against: a query is ~12 token rows, a
/// cold batch ~2,000.
fn gemm_throughput() -> anyhow::Result<()> {
    use candle_core::{Device, Tensor};
    let dev = Device::Cpu;
    for (m, k, n) in [(12, 384, 1536), (12, 1536, 384), (2048, 384, 1536)] {
        let a = Tensor::rand(0f32, 1.0, (m, k), &dev)?;
        let w = Tensor::rand(0f32, 1.0, (k, n), &dev)?;
        let reps = (2_000_000_000 / (m * k * n)).max(3);
        let (t, c) = (Instant::now(), cpu_time());
        for _ in 0..reps {
            a.matmul(&w)?;
        }
        let macs = (m * k * n * reps) as f64;
        println!(
            "matmul ({m}x{k})·({k}x{n}): {:.1} GMAC/s wall, {:.1} GMAC/s cpu",
            macs / t.elapsed().as_secs_f64() / 1e9,
            macs / (cpu_time() - c).as_secs_f64().max(1e-3) / 1e9
        );
    }
    Ok(())
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb).max(1e-30)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
