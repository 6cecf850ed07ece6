//! What quiver adds to a `tools/call` when it sits between a client and a
//! downstream MCP server.
//!
//! Two rmcp clients run side by side: one talks to the reference
//! `server-everything` directly (stdio), the other to `quiver mcp serve`
//! (stdio), which has the same server configured downstream. Calls to `echo`
//! alternate between the two, so both see the same machine load; the report is
//! p50/p99 of each path, their difference (the gateway's cost), and calls per
//! second through the gateway, sequential and with concurrent callers.
//!
//! ```text
//! cargo build --release -p quiver-cli
//! npm ci --prefix crates/mcp/tests/node
//! cargo run --release -p quiver-mcp --example gateway_latency -- [--quiver target/release/quiver] [--calls 2000]
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

type Client = RunningService<RoleClient, ()>;

struct Options {
    quiver: PathBuf,
    everything: PathBuf,
    calls: usize,
    concurrency: usize,
    seconds: u64,
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

async fn spawn(cmd: tokio::process::Command) -> anyhow::Result<Client> {
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn()?;
    Ok(().serve(transport).await?)
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

/// Calls per second with `concurrency` callers sharing one connection.
async fn throughput(client: Arc<Client>, tool: &'static str, concurrency: usize, seconds: u64) -> anyhow::Result<f64> {
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
    Ok(total as f64 / start.elapsed().as_secs_f64())
}

fn workspace(everything: &Path) -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let config = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
        serde_json::to_string(&everything.display().to_string())?
    );
    std::fs::write(dir.path().join("quiver.toml"), config)?;
    Ok(dir)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let o = options()?;
    let dir = workspace(&o.everything)?;

    let mut direct_cmd = tokio::process::Command::new("node");
    direct_cmd.arg(&o.everything).arg("stdio");
    let direct = Arc::new(spawn(direct_cmd).await.context("starting server-everything")?);

    let mut gateway_cmd = tokio::process::Command::new(&o.quiver);
    gateway_cmd
        .args(["mcp", "serve", "--workspace"])
        .arg(dir.path())
        .env("QUIVER_CONFIG_DIR", dir.path().join("user-config"))
        .env("QUIVER_CACHE_DIR", dir.path().join("cache"))
        .env("QUIVER_LOG", "error");
    let gateway = Arc::new(spawn(gateway_cmd).await.context("starting quiver mcp serve")?);
    call(&gateway, "mcp_discover", json!({"server": "everything"})).await.context("connecting downstream")?;

    const PROXIED: &str = "mcp__everything__echo";
    // Warm both paths (JIT in node, connection setup, allocator).
    for i in 0..200 {
        call(&direct, "echo", echo_args(i)).await?;
        call(&gateway, PROXIED, echo_args(i)).await?;
    }

    let mut direct_times = Vec::with_capacity(o.calls);
    let mut gateway_times = Vec::with_capacity(o.calls);
    for i in 0..o.calls {
        // Alternate which goes first so neither path always gets a warm cache line.
        let order = [i % 2 == 0, i % 2 != 0];
        for via_gateway in order {
            let start = Instant::now();
            if via_gateway {
                call(&gateway, PROXIED, echo_args(i)).await?;
                gateway_times.push(start.elapsed());
            } else {
                call(&direct, "echo", echo_args(i)).await?;
                direct_times.push(start.elapsed());
            }
        }
    }
    direct_times.sort();
    gateway_times.sort();
    let (d50, d99) = (percentile(&direct_times, 50.0), percentile(&direct_times, 99.0));
    let (g50, g99) = (percentile(&gateway_times, 50.0), percentile(&gateway_times, 99.0));
    let gateway_sum: Duration = gateway_times.iter().sum();

    let seq_cps = o.calls as f64 / gateway_sum.as_secs_f64();
    let direct_cps = throughput(direct.clone(), "echo", o.concurrency, o.seconds).await?;
    let gateway_cps = throughput(gateway.clone(), PROXIED, o.concurrency, o.seconds).await?;

    println!("calls per path: {} (interleaved, after 200 warm-up calls each)", o.calls);
    println!("direct  echo:   p50 {:8.1} us   p99 {:8.1} us", us(d50), us(d99));
    println!("gateway echo:   p50 {:8.1} us   p99 {:8.1} us", us(g50), us(g99));
    println!("gateway adds:   p50 {:8.1} us   p99 {:8.1} us", us(g50) - us(d50), us(g99) - us(d99));
    println!("gateway calls/s: {seq_cps:.0} sequential; {gateway_cps:.0} with {} concurrent callers", o.concurrency);
    println!("direct  calls/s: {direct_cps:.0} with {} concurrent callers", o.concurrency);
    Ok(())
}
