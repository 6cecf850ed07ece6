//! What quiver's client side adds to a downstream `tools/call`, measured side
//! by side against a bare rmcp client talking to its own copy of the same
//! server:
//!
//! - `direct`: a plain rmcp client, `call_tool` on the child process;
//! - `handle`: quiver's `ServerHandle::call` (timeout, crash detection);
//! - `engine`: `engine.dispatch("mcp__<server>__echo")`, the path every model
//!   call takes (name resolution, schema validation, permissions, result mapping).
//!
//! Run: `cargo run --release -p quiver-mcp --example client_overhead [N]`
//! (needs the `quiver-test-mcp` binary built in the same profile; uses
//! server-everything too when `crates/mcp/tests/node` is installed).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quiver_engine::{Audience, EngineHost, Manifest, Mode, Registry, Workspace};
use quiver_mcp::client::ToolCache;
use quiver_mcp::config::{McpConfig, ServerConfig, Transport};
use quiver_mcp::{McpManager, McpProvider};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value, json};

fn server(name: &str, command: &str, args: &[String]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio { command: command.into(), args: args.to_vec(), env: BTreeMap::new(), cwd: None },
        enabled: true,
        enabled_tools: None,
        disabled_tools: vec![],
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Duration::from_secs(30),
        source: PathBuf::from("bench"),
        trust: quiver_engine::permissions::trust::Source::User,
        workspace: None,
        expose: Default::default(),
        protocol: Default::default(),
    }
}

struct Stats {
    p50: f64,
    p99: f64,
    per_sec: f64,
}

fn stats(mut samples: Vec<Duration>, total: Duration) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e6;
    Stats { p50: at(0.50), p99: at(0.99), per_sec: samples.len() as f64 / total.as_secs_f64() }
}

/// Runs the three paths interleaved (rotating which goes first), so JIT and
/// GC phases of the server, and machine noise, hit all three alike.
async fn bench(label: &str, name: &str, command: &str, args: Vec<String>, echo_arg: &str, n: usize) {
    // Bare rmcp client on its own process of the same server.
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&args);
    let direct = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let mut arguments = Map::new();
    arguments.insert(echo_arg.into(), json!("hello"));

    // quiver: manager + host + engine, with its own process.
    let cache = tempfile_dir();
    let config = McpConfig { servers: [(name.to_string(), server(name, command, &args))].into_iter().collect() };
    let manager = McpManager::with_cache(config, ToolCache::at(&cache));
    let mut native = Registry::new();
    native.register(quiver_engine::tool_search::ToolSearch).unwrap();
    let host = EngineHost::new(native, Manifest::builtin().unwrap(), vec![McpProvider::shared(&manager)]).unwrap();
    let ctx = host.context(Workspace::new(&cache).unwrap(), Audience { mode: Mode::Yolo, ..Audience::default() });
    manager.discover(name, &ctx).await.unwrap();
    let handle = manager.server(name).unwrap().clone();
    let engine = host.engine();
    let tool = format!("mcp__{name}__echo");
    let args_value = Value::Object(arguments.clone());

    let mut samples: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut totals = [Duration::ZERO; 3];
    let warmup = n / 5;
    for i in 0..warmup + n {
        for k in 0..3 {
            let which = (i + k) % 3;
            let t = Instant::now();
            match which {
                0 => {
                    let mut params = CallToolRequestParams::new("echo");
                    params.arguments = Some(arguments.clone());
                    direct.peer().call_tool(params).await.unwrap();
                }
                1 => {
                    handle.call("echo", Some(arguments.clone())).await.unwrap();
                }
                _ => {
                    let r = engine.dispatch(&tool, args_value.clone(), &ctx).await.unwrap();
                    assert!(!r.is_error, "{}", r.content_text());
                }
            }
            let took = t.elapsed();
            if i >= warmup {
                samples[which].push(took);
                totals[which] += took;
            }
        }
    }
    direct.cancel().await.ok();
    manager.shutdown().await;
    let _ = std::fs::remove_dir_all(&cache);

    let [d, h, e] = samples;
    let (direct_stats, handle_stats, engine_stats) = (stats(d, totals[0]), stats(h, totals[1]), stats(e, totals[2]));
    println!("{label} (n={n} each, interleaved, µs)");
    for (what, s) in
        [("direct rmcp", &direct_stats), ("quiver handle", &handle_stats), ("quiver engine", &engine_stats)]
    {
        println!("  {what:<14} p50={:>8.1} p99={:>8.1} calls/s={:>8.0}", s.p50, s.p99, s.per_sec);
    }
    println!(
        "  added by quiver (engine - direct): p50={:+.1} µs p99={:+.1} µs",
        engine_stats.p50 - direct_stats.p50,
        engine_stats.p99 - direct_stats.p99
    );
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-client-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let exe = std::env::current_exe().unwrap();
    // examples/ sits next to the binaries of the same profile.
    let test_server = exe.parent().and_then(Path::parent).unwrap().join("quiver-test-mcp");
    assert!(test_server.is_file(), "build it first: cargo build -p quiver-mcp --bin quiver-test-mcp (same profile)");
    bench("quiver-test-mcp (Rust, stdio)", "t", &test_server.to_string_lossy(), vec![], "text", n).await;

    let everything = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if everything.is_file() {
        let args = vec![everything.to_string_lossy().to_string(), "stdio".to_string()];
        bench("server-everything (node, stdio)", "everything", "node", args, "message", n).await;
    } else {
        println!("server-everything not installed; skipped (npm ci --prefix crates/mcp/tests/node)");
    }
}
