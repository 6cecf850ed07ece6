//! What quiver adds to a `tools/call` when it sits between a client and a
//! downstream MCP server.
//!
//! Two rmcp clients run side by side: one talks to the reference
//! `server-everything` directly (stdio), the other to `quiver mcp serve`
//! (stdio), which has the same server configured downstream. Calls alternate
//! between the two, so both see the same machine load; the report is p50/p99
//! of each path and their difference (the gateway's cost) for a text call
//! (`echo`) and an image call (`get-tiny-image`: a base64 PNG block the gateway
//! passes on verbatim), then calls per second with concurrent callers, direct
//! and through the gateway, measured one after the other in the same run.
//!
//! ```text
//! cargo build --release -p quiver-cli
//! npm ci --prefix crates/mcp/tests/node
//! cargo run --release -p quiver-mcp --example gateway_latency -- [--quiver target/release/quiver] [--calls 2000]
//!     [--concurrency 8] [--seconds 5] [--rounds 3]
//! ```
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value, json};

#[path = "support/proc_stats.rs"]
mod proc_stats;

use proc_stats::{children, cpu_seconds};

type Client = RunningService<RoleClient, ()>;

struct Options {
    quiver: PathBuf,
    everything: PathBuf,
    calls: usize,
    concurrency: usize,
    seconds: u64,
    rounds: usize,
}

fn options() -> anyhow::Result<Options> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let release = root.join("target/release/quiver");
    let mut o = Options {
        quiver: if release.exists() { release } else { root.join("target/debug/quiver") },
        everything: root
            .join("crates/mcp/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        calls: 2000,
        concurrency: 8,
        seconds: 5,
        rounds: 3,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--quiver" => o.quiver = value.into(),
            "--everything" => o.everything = value.into(),
            "--calls" => o.calls = value.parse()?,
            "--concurrency" => o.concurrency = value.parse()?,
            "--seconds" => o.seconds = value.parse()?,
            "--rounds" => o.rounds = value.parse::<usize>()?.max(1),
            other => bail!("unknown flag {other}"),
        }
    }
    if !o.quiver.exists() {
        bail!("{} not found: build it (cargo build --release -p quiver-cli) or pass --quiver", o.quiver.display());
    }
    if !o.everything.exists() {
        bail!("{} not found: run `npm ci --prefix crates/mcp/tests/node`", o.everything.display());
    }
    Ok(o)
}

async fn spawn(cmd: tokio::process::Command) -> anyhow::Result<(Client, u32)> {
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn()?;
    let pid = transport.id().context("the child has no pid")?;
    Ok((().serve(transport).await?, pid))
}

async fn call(client: &Client, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = client.call_tool(params).await?;
    if result.is_error == Some(true) {
        bail!("{tool} returned an error: {:?}", result.content);
    }
    Ok(result)
}

fn echo_args(i: usize) -> Value {
    let mut map = Map::new();
    map.insert("message".into(), json!(format!("ping {i}")));
    Value::Object(map)
}

fn no_args(_: usize) -> Value {
    Value::Object(Map::new())
}

/// One tool measured on both paths.
struct Probe {
    label: &'static str,
    direct: &'static str,
    proxied: &'static str,
    args: fn(usize) -> Value,
    /// Checks a result is what the tool gives (an image call must carry its image).
    check: fn(&CallToolResult) -> bool,
}

const PROBES: &[Probe] = &[
    Probe { label: "echo", direct: "echo", proxied: "mcp__everything__echo", args: echo_args, check: |_| true },
    Probe {
        label: "image",
        direct: "get-tiny-image",
        proxied: "mcp__everything__get-tiny-image",
        args: no_args,
        check: |r| r.content.iter().any(|c| c.as_image().is_some_and(|i| !i.data.is_empty())),
    },
];

/// Latency of each path for `probe`, interleaved: (direct, gateway) sorted.
async fn latencies(
    direct: &Client,
    gateway: &Client,
    probe: &Probe,
    calls: usize,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    // Warm both paths (JIT in node, connection setup, allocator).
    for i in 0..200 {
        call(direct, probe.direct, (probe.args)(i)).await?;
        call(gateway, probe.proxied, (probe.args)(i)).await?;
    }
    let mut direct_times = Vec::with_capacity(calls);
    let mut gateway_times = Vec::with_capacity(calls);
    for i in 0..calls {
        // Alternate which goes first so neither path always gets a warm cache line.
        for via_gateway in [i % 2 == 0, i % 2 != 0] {
            let start = Instant::now();
            let result = if via_gateway {
                let r = call(gateway, probe.proxied, (probe.args)(i)).await?;
                gateway_times.push(start.elapsed());
                r
            } else {
                let r = call(direct, probe.direct, (probe.args)(i)).await?;
                direct_times.push(start.elapsed());
                r
            };
            if !(probe.check)(&result) {
                bail!("{} gave an unexpected result: {:?}", probe.label, result.content);
            }
        }
    }
    direct_times.sort();
    gateway_times.sort();
    Ok((direct_times, gateway_times))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Calls made with `concurrency` callers sharing one connection for `seconds`,
/// and the seconds it took.
async fn throughput(
    client: Arc<Client>,
    tool: &'static str,
    concurrency: usize,
    seconds: u64,
) -> anyhow::Result<(usize, f64)> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..concurrency {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = 0usize;
            while Instant::now() < deadline {
                call(&client, tool, echo_args(worker * 1_000_000 + n)).await?;
                n += 1;
            }
            anyhow::Ok(n)
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await??;
    }
    Ok((total, start.elapsed().as_secs_f64()))
}

/// Calls per second and CPU microseconds per call of each process in `pids`.
async fn measured(
    client: &Arc<Client>,
    tool: &'static str,
    o: &Options,
    pids: &[u32],
) -> anyhow::Result<(f64, Vec<f64>)> {
    let before: Vec<f64> = pids.iter().map(|p| cpu_seconds(*p)).collect();
    let (calls, secs) = throughput(client.clone(), tool, o.concurrency, o.seconds).await?;
    let per_call = pids.iter().zip(before).map(|(p, b)| (cpu_seconds(*p) - b) * 1e6 / calls.max(1) as f64).collect();
    Ok((calls as f64 / secs, per_call))
}

fn workspace(everything: &Path) -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let config = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
        serde_json::to_string(&everything.display().to_string())?
    );
    // The user's own config: a server in the workspace's quiver.toml would
    // need the user's approval before it starts (a cloned repo runs nothing).
    std::fs::create_dir_all(dir.path().join("user-config"))?;
    std::fs::write(dir.path().join("user-config/config.toml"), config)?;
    Ok(dir)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let o = options()?;
    let dir = workspace(&o.everything)?;

    let mut direct_cmd = tokio::process::Command::new("node");
    direct_cmd.arg(&o.everything).arg("stdio");
    let (direct, direct_pid) = spawn(direct_cmd).await.context("starting server-everything")?;
    let direct = Arc::new(direct);

    let mut gateway_cmd = tokio::process::Command::new(&o.quiver);
    gateway_cmd
        .args(["mcp", "serve", "--workspace"])
        .arg(dir.path())
        .env("QUIVER_CONFIG_DIR", dir.path().join("user-config"))
        .env("QUIVER_CACHE_DIR", dir.path().join("cache"))
        .env("QUIVER_LOG", "error");
    let (gateway, gateway_pid) = spawn(gateway_cmd).await.context("starting quiver mcp serve")?;
    let gateway = Arc::new(gateway);
    call(&gateway, "mcp_discover", json!({"server": "everything"})).await.context("connecting downstream")?;
    let downstream_pid = *children(gateway_pid).first().context("quiver started no downstream server")?;

    println!("calls per path: {} (interleaved, after 200 warm-up calls each)", o.calls);
    for probe in PROBES {
        let (direct_times, gateway_times) = latencies(&direct, &gateway, probe, o.calls).await?;
        let (d50, d99) = (percentile(&direct_times, 50.0), percentile(&direct_times, 99.0));
        let (g50, g99) = (percentile(&gateway_times, 50.0), percentile(&gateway_times, 99.0));
        let label = probe.label;
        println!("direct  {label:5}:  p50 {:8.1} us   p99 {:8.1} us", us(d50), us(d99));
        println!("gateway {label:5}:  p50 {:8.1} us   p99 {:8.1} us", us(g50), us(g99));
        println!("gateway adds:   p50 {:8.1} us   p99 {:8.1} us", us(g50) - us(d50), us(g99) - us(d99));
        if probe.label == "echo" {
            let gateway_sum: Duration = gateway_times.iter().sum();
            println!("gateway calls/s sequential: {:.0}", o.calls as f64 / gateway_sum.as_secs_f64());
        }
    }

    // Same load on both: `concurrency` callers on one connection for `seconds`,
    // direct then gateway, `rounds` times (the machine's other load moves).
    // CPU per call says where a gateway call's cost goes (this machine's
    // cores are shared by the caller, node and quiver).
    let (mut direct_sum, mut gateway_sum) = (0.0, 0.0);
    for round in 1..=o.rounds {
        let (direct_cps, direct_cpu) = measured(&direct, "echo", &o, &[direct_pid]).await?;
        let (gateway_cps, gateway_cpu) =
            measured(&gateway, "mcp__everything__echo", &o, &[gateway_pid, downstream_pid]).await?;
        println!(
            "round {round}: echo with {} concurrent callers: direct {direct_cps:.0} calls/s, gateway {gateway_cps:.0} \
             calls/s ({:.0}% of direct); CPU per call: direct node {:.0} us; gateway quiver {:.0} us + node {:.0} us",
            o.concurrency,
            100.0 * gateway_cps / direct_cps,
            direct_cpu[0],
            gateway_cpu[0],
            gateway_cpu[1],
        );
        direct_sum += direct_cps;
        gateway_sum += gateway_cps;
    }
    println!(
        "mean of {} rounds: direct {:.0} calls/s, gateway {:.0} calls/s ({:.0}% of direct)",
        o.rounds,
        direct_sum / o.rounds as f64,
        gateway_sum / o.rounds as f64,
        100.0 * gateway_sum / direct_sum
    );
    Ok(())
}
