//! quiver's gateway beside the other MCP gateways, in one run, in front of the
//! same reference `server-everything`, called by the same rmcp client, at
//! each protocol revision a path speaks:
//!
//! | path              | how the client reaches server-everything                        |
//! |-------------------|------------------------------------------------------------------|
//! | direct stdio      | `node index.js stdio`                                            |
//! | direct http       | `node index.js streamableHttp` (streamable HTTP)                 |
//! | quiver stdio      | `quiver mcp serve` (stdio) → server-everything over stdio        |
//! | quiver http       | `quiver mcp serve --transport http` → server-everything (stdio)  |
//! | mcp-proxy-rs      | the Rust `mcp-proxy` crate (tower-mcp), `--config proxy.toml`    |
//! | mcp-proxy-py      | PyPI `mcp-proxy --port P -- node index.js stdio`                 |
//! | mcp-hub           | `mcp-hub` (the older HTTP+SSE transport: GET /mcp, POST /messages) |
//!
//! server-everything itself speaks 2025-11-25 only, so the direct paths are
//! the baseline at both revisions. quiver and the Rust mcp-proxy are measured
//! twice: once as a 2025-11-25 client sees them (`initialize`, a session) and
//! once as a 2026-07-28 client does (`server/discover`, stateless requests
//! carrying their own `_meta`); the label says which (`@2026`). The Python
//! mcp-proxy and mcp-hub speak no 2026-07-28.
//!
//! For each: p50/p99 of sequential `echo` calls (interleaved across the paths,
//! so all see the same machine load) and what each adds to direct stdio;
//! calls/s with `--concurrency` callers on one session, `--rounds` times; CPU
//! per call of the gateway process and of the server-everything behind it
//! (from `/proc/<pid>/stat`); the gateway's RSS; and whether `tools/list` and
//! the results of `echo` and `get-tiny-image` equal the direct call's (tool
//! names mapped; compared as rmcp parses them, so a number's spelling, `1`
//! against `1.0`, is not seen, but added or dropped fields are).
//!
//! The peers are installed outside the repository, pinned:
//!
//! ```text
//! mkdir -p /tmp/peers && cd /tmp/peers
//! npm init -y && npm install mcp-hub@4.2.1
//! python3 -m venv venv && venv/bin/pip install mcp-proxy==0.13.0
//! cargo install mcp-proxy --version 0.6.0 --locked --features protocol-2026-07-28 --root /tmp/peers/cargo
//! cd - && npm ci --prefix crates/mcp/tests/node
//! cargo build --profile bench-fast -p quiver-cli
//! cargo run --profile bench-fast -p quiver-mcp --example gateway_peers -- \
//!     --quiver target/bench-fast/quiver --peers /tmp/peers [--calls 2000] [--concurrency 8] [--seconds 5] [--rounds 3]
//!     [--only 'quiver http,mcp-proxy-rs']   (those paths and direct stdio alone)
//! ```
//!
//! server-everything needs Node 22 or later as `node` on `PATH`.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

#[path = "support/legacy_sse.rs"]
mod legacy_sse;
#[path = "support/no_discover.rs"]
mod no_discover;
#[path = "support/proc_stats.rs"]
mod proc_stats;

use proc_stats::{children, cpu_seconds, rss_mib};

type Client = RunningService<RoleClient, ()>;

struct Options {
    quiver: PathBuf,
    everything: PathBuf,
    peers: PathBuf,
    calls: usize,
    concurrency: usize,
    seconds: u64,
    rounds: usize,
    /// Labels of the paths to run beside direct stdio (all when empty).
    only: Vec<String>,
}

fn options() -> anyhow::Result<Options> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut o = Options {
        quiver: root.join("target/bench-fast/quiver"),
        everything: root
            .join("crates/mcp/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        peers: PathBuf::from("/tmp/peers"),
        calls: 2000,
        concurrency: 8,
        seconds: 5,
        rounds: 3,
        only: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--quiver" => o.quiver = value.into(),
            "--everything" => o.everything = value.into(),
            "--peers" => o.peers = value.into(),
            "--calls" => o.calls = value.parse()?,
            "--concurrency" => o.concurrency = value.parse()?,
            "--seconds" => o.seconds = value.parse()?,
            "--rounds" => o.rounds = value.parse::<usize>()?.max(1),
            "--only" => o.only = value.split(',').map(|l| l.trim().to_string()).collect(),
            other => bail!("unknown flag {other}"),
        }
    }
    // A peer is needed only when a path of its is measured (`--only` names
    // paths by their label, e.g. `mcp-proxy-rs@2026`).
    let measured = |label: &str| o.only.is_empty() || o.only.iter().any(|l| l.starts_with(label));
    for (path, how, needed) in [
        (&o.quiver, "cargo build --profile bench-fast -p quiver-cli, or pass --quiver", true),
        (&o.everything, "npm ci --prefix crates/mcp/tests/node, or pass --everything", true),
        (&o.peers.join("node_modules/.bin/mcp-hub"), "see this example's header", measured("mcp-hub")),
        (&o.peers.join("venv/bin/mcp-proxy"), "see this example's header", measured("mcp-proxy-py")),
        (&o.peers.join("cargo/bin/mcp-proxy"), "see this example's header", measured("mcp-proxy-rs")),
    ] {
        if needed && !path.exists() {
            bail!("{} not found: {how}", path.display());
        }
    }
    Ok(o)
}

/// One way to reach server-everything.
struct Route {
    label: String,
    client: Arc<Client>,
    tail: Option<Value>,
    /// The gateway process (or server-everything itself when direct), then
    /// the server-everything behind it, if any.
    pids: Vec<u32>,
    /// `echo` and `get-tiny-image` under this path's names.
    echo: String,
    image: String,
    /// Kept so the processes live as long as the path (killed on drop).
    _children: Vec<Child>,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn wait_for_port(port: u16) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        if Instant::now() > deadline {
            bail!("nothing listens on port {port} after 30 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Starts `command` (its output discarded, killed with the bench) and waits
/// until it listens on `port`.
async fn spawn_listening(command: &mut Command, port: u16) -> anyhow::Result<Child> {
    let child =
        command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).kill_on_drop(true).spawn()?;
    wait_for_port(port).await?;
    Ok(child)
}

fn http_client() -> anyhow::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder().no_proxy().tcp_nodelay(true).build()?)
}

/// A protocol revision as the client opens it.
#[derive(Clone, Copy, PartialEq)]
enum Revision {
    /// `initialize`, then a session (2025-11-25).
    Sessions,
    /// `server/discover`, then stateless requests (2026-07-28).
    Stateless,
}

impl Revision {
    fn tag(self) -> &'static str {
        match self {
            Revision::Sessions => "",
            Revision::Stateless => "@2026",
        }
    }
}

/// Opens a client over `transport` at `revision`.
async fn connect<T, E, A>(transport: T, revision: Revision) -> anyhow::Result<Client>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    Ok(match revision {
        Revision::Sessions => ().serve(transport).await?,
        Revision::Stateless => {
            let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
            let client = ().serve_with_lifecycle(transport, mode).await?;
            let spoken = client.peer().peer_info().map(|i| i.protocol_version.clone());
            if spoken != Some(ProtocolVersion::V_2026_07_28) {
                bail!("asked for 2026-07-28, the server answered {spoken:?}");
            }
            client
        }
    })
}

async fn streamable(url: String, revision: Revision) -> anyhow::Result<Client> {
    let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
    connect(StreamableHttpClientTransport::with_client(http_client()?, config), revision).await
}

/// The server-everything process under `pid` (a child, or a grandchild when
/// a wrapper script sits between).
async fn everything_under(pid: u32) -> anyhow::Result<u32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut queue = children(pid);
        while let Some(p) = queue.pop() {
            let cmdline = std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
            if cmdline.contains("server-everything") {
                return Ok(p);
            }
            queue.extend(children(p));
        }
        if Instant::now() > deadline {
            bail!("no server-everything process under pid {pid}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn call_value(client: &Client, tool: &str, args: Value) -> anyhow::Result<Value> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = client.call_tool(params).await?;
    if result.is_error == Some(true) {
        bail!("{tool} returned an error: {:?}", result.content);
    }
    Ok(serde_json::to_value(result)?)
}

fn echo_args(i: usize) -> Value {
    json!({"message": format!("ping {i}")})
}

/// This path's name for server-everything's tool `base`: the same, or with
/// the gateway's prefix (`mcp__everything__echo`, `everything__echo`).
fn resolve(tools: &[Value], base: &str) -> Option<String> {
    tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .find(|n| *n == base || n.ends_with(&format!("__{base}")))
        .map(str::to_string)
}

/// `client`'s tool list. A stateless (2026-07-28) quiver client sends back the
/// loaded tail quiver gave it (`_meta["quiver/tail"]`), as a real client would
/// to see the tools it loaded: there is no session to remember them.
async fn tools_of(client: &Client, tail: Option<&Value>) -> anyhow::Result<Vec<Value>> {
    let Some(tail) = tail else {
        return Ok(client
            .list_all_tools()
            .await?
            .into_iter()
            .map(|t| serde_json::to_value(t).unwrap_or_default())
            .collect());
    };
    let params: rmcp::model::PaginatedRequestParams = serde_json::from_value(json!({"_meta": {"quiver/tail": tail}}))?;
    let listed = client.list_tools(Some(params)).await?;
    Ok(listed.tools.into_iter().map(|t| serde_json::to_value(t).unwrap_or_default()).collect())
}

/// Calls quiver's `mcp_discover`, which starts server-everything and loads
/// its tools; returns the loaded tail a stateless client must carry.
async fn discover_everything(client: &Client, what: &str) -> anyhow::Result<Option<Value>> {
    let result = call_value(client, "mcp_discover", json!({"server": "everything"})).await.context(what.to_string())?;
    Ok(result["_meta"].get("quiver/tail").cloned())
}

struct Setup {
    label: String,
    client: Client,
    /// The loaded tail a stateless quiver client sends back.
    tail: Option<Value>,
    pids: Vec<u32>,
    children: Vec<Child>,
}

fn quiver_command(o: &Options, dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(&o.quiver);
    cmd.args(["mcp", "serve", "--workspace"])
        .arg(dir)
        .env("QUIVER_CONFIG_DIR", dir.join("user-config"))
        .env("QUIVER_CACHE_DIR", dir.join("cache"))
        .env("QUIVER_LOG", "error")
        .kill_on_drop(true);
    cmd
}

/// The two direct paths: server-everything over stdio and over its own HTTP.
async fn direct(o: &Options) -> anyhow::Result<Vec<Setup>> {
    let everything = o.everything.display().to_string();
    let mut cmd = Command::new("node");
    cmd.arg(&everything).arg("stdio");
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn()?;
    let pid = transport.id().context("no pid")?;
    let stdio = Setup {
        label: "direct stdio".into(),
        client: ().serve(transport).await?,
        tail: None,
        pids: vec![pid],
        children: vec![],
    };

    let port = free_port()?;
    // It logs every request on stdout (discarded).
    let child = spawn_listening(
        Command::new("node").arg(&everything).arg("streamableHttp").env("PORT", port.to_string()),
        port,
    )
    .await?;
    let pid = child.id().context("no pid")?;
    let client = streamable(format!("http://127.0.0.1:{port}/mcp"), Revision::Sessions).await?;
    Ok(vec![stdio, Setup { label: "direct http".into(), client, tail: None, pids: vec![pid], children: vec![child] }])
}

/// quiver over stdio. The server is exposed through search, so a call to
/// `mcp_discover` first starts it (and, at 2025-11-25, loads its tools).
async fn quiver_stdio(o: &Options, dir: &std::path::Path, revision: Revision) -> anyhow::Result<Setup> {
    let (transport, _) =
        TokioChildProcess::builder(quiver_command(o, dir)).stderr(std::process::Stdio::null()).spawn()?;
    let pid = transport.id().context("no pid")?;
    let client = connect(transport, revision).await?;
    let tail = discover_everything(&client, "quiver stdio downstream").await?;
    let pids = vec![pid, everything_under(pid).await?];
    Ok(Setup { label: format!("quiver stdio{}", revision.tag()), client, tail, pids, children: vec![] })
}

/// quiver over streamable HTTP, one listener per revision (so each has its
/// own process and its own CPU and RSS figures).
async fn quiver_http(o: &Options, dir: &std::path::Path, revision: Revision) -> anyhow::Result<Setup> {
    let mut child = quiver_command(o, dir)
        .args(["--transport", "http", "--listen", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .stdin(std::process::Stdio::null())
        .spawn()?;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().context("no stderr")?).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("listening on ") {
                return Some(url.to_string());
            }
        }
        None
    })
    .await?
    .context("quiver printed no address")?;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let pid = child.id().context("no pid")?;
    let client = streamable(url, revision).await?;
    let tail = discover_everything(&client, "quiver http downstream").await?;
    let pids = vec![pid, everything_under(pid).await?];
    Ok(Setup { label: format!("quiver http{}", revision.tag()), client, tail, pids, children: vec![child] })
}

/// The Rust `mcp-proxy` crate with server-everything as its one stdio
/// backend, its tools named `everything__NAME` (the separator is `/` by
/// default; `__` lets the same name mapping serve every gateway). At
/// 2026-07-28 the client answers its own `server/discover` (see
/// `support/no_discover.rs`).
async fn mcp_proxy_rs(o: &Options, dir: &std::path::Path, revision: Revision) -> anyhow::Result<Setup> {
    let port = free_port()?;
    let config = dir.join(format!("proxy-{port}.toml"));
    std::fs::write(
        &config,
        format!(
            "[proxy]\nname = \"bench\"\nseparator = \"__\"\n\n[proxy.listen]\nhost = \"127.0.0.1\"\nport = {port}\n\n\
             [[backends]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
            serde_json::to_string(&o.everything.display().to_string())?
        ),
    )?;
    let child =
        spawn_listening(Command::new(o.peers.join("cargo/bin/mcp-proxy")).arg("--config").arg(&config), port).await?;
    let pid = child.id().context("no pid")?;
    let url = format!("http://127.0.0.1:{port}/");
    let client = match revision {
        Revision::Sessions => streamable(url, revision).await?,
        // It serves stateless requests but not `server/discover`.
        Revision::Stateless => {
            let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
            let worker = StreamableHttpClientTransport::with_client(http_client()?, config);
            let transport = IntoTransport::<RoleClient, _, _>::into_transport(worker);
            connect(no_discover::NoDiscover::new(transport), revision).await?
        }
    };
    let pids = vec![pid, everything_under(pid).await?];
    Ok(Setup { label: format!("mcp-proxy-rs{}", revision.tag()), client, tail: None, pids, children: vec![child] })
}

/// PyPI's `mcp-proxy` in its stdio-to-HTTP mode (2025-11-25 only).
async fn mcp_proxy_py(o: &Options) -> anyhow::Result<Setup> {
    let everything = o.everything.display().to_string();
    let port = free_port()?;
    let child = spawn_listening(
        Command::new(o.peers.join("venv/bin/mcp-proxy")).args([
            "--port",
            &port.to_string(),
            "--host",
            "127.0.0.1",
            "--",
            "node",
            &everything,
            "stdio",
        ]),
        port,
    )
    .await?;
    let pid = child.id().context("no pid")?;
    let client = streamable(format!("http://127.0.0.1:{port}/mcp"), Revision::Sessions).await?;
    let pids = vec![pid, everything_under(pid).await?];
    Ok(Setup { label: "mcp-proxy-py".into(), client, tail: None, pids, children: vec![child] })
}

/// mcp-hub over the older HTTP+SSE transport (2024-11-05 only).
async fn mcp_hub(o: &Options, dir: &std::path::Path) -> anyhow::Result<Setup> {
    let port = free_port()?;
    let config = dir.join("hub.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"everything": {"command": "node", "args": [o.everything, "stdio"]}}}).to_string(),
    )?;
    let child = spawn_listening(
        Command::new(o.peers.join("node_modules/.bin/mcp-hub"))
            .args(["--port", &port.to_string(), "--config"])
            .arg(&config),
        port,
    )
    .await?;
    let pid = child.id().context("no pid")?;
    let downstream = everything_under(pid).await?;
    // The hub connects its servers after it listens; its tool list fills then.
    let deadline = Instant::now() + Duration::from_secs(30);
    let client = loop {
        let client = legacy_sse::legacy_sse(http_client()?, &format!("http://127.0.0.1:{port}"), "/mcp").await?;
        if resolve(&tools_of(&client, None).await?, "echo").is_some() || Instant::now() > deadline {
            break client;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    Ok(Setup { label: "mcp-hub".into(), client, tail: None, pids: vec![pid, downstream], children: vec![child] })
}

/// Every path, direct stdio first (the reference the others are measured
/// against); each gateway that speaks both revisions once per revision.
async fn start_all(o: &Options, dir: &std::path::Path) -> anyhow::Result<Vec<Setup>> {
    let mut setups = direct(o).await?;
    if !o.only.is_empty() {
        // Direct stdio stays: the reference every path is measured against.
        setups.retain(|s| s.label == "direct stdio" || o.only.contains(&s.label));
    }
    let wanted = |label: &str| o.only.is_empty() || o.only.iter().any(|l| l == label);
    for revision in [Revision::Sessions, Revision::Stateless] {
        let tag = revision.tag();
        if wanted(&format!("quiver stdio{tag}")) {
            setups.push(quiver_stdio(o, dir, revision).await.with_context(|| format!("quiver stdio{tag}"))?);
        }
        if wanted(&format!("quiver http{tag}")) {
            setups.push(quiver_http(o, dir, revision).await.with_context(|| format!("quiver http{tag}"))?);
        }
        if wanted(&format!("mcp-proxy-rs{tag}")) {
            setups.push(mcp_proxy_rs(o, dir, revision).await.with_context(|| format!("mcp-proxy-rs{tag}"))?);
        }
    }
    if wanted("mcp-proxy-py") {
        setups.push(mcp_proxy_py(o).await.context("mcp-proxy-py")?);
    }
    if wanted("mcp-hub") {
        setups.push(mcp_hub(o, dir).await.context("mcp-hub")?);
    }
    Ok(setups)
}

/// The JSON paths at which `a` and `b` differ (object keys, array positions).
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                differences(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}.{k}"),
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{at}[{i}]"), out);
            }
        }
        _ if a != b => out.push(at.to_string()),
        _ => {}
    }
}

/// How this path's `tools/list` and results compare with direct stdio's.
async fn transparency(path: &Route, reference: &Route, reference_tools: &[Value]) -> anyhow::Result<String> {
    let tools = tools_of(&path.client, path.tail.as_ref()).await?;
    let mut diffs = Vec::new();
    let mut missing = 0;
    for tool in reference_tools {
        let base = tool["name"].as_str().unwrap_or_default();
        match resolve(&tools, base).and_then(|name| tools.iter().find(|t| t["name"] == name.as_str()).cloned()) {
            Some(mut mine) => {
                mine["name"] = json!(base);
                differences(tool, &mine, &format!("tools[{base}]"), &mut diffs);
            }
            None => missing += 1,
        }
    }
    for (mine, theirs, args) in
        [(&path.echo, &reference.echo, echo_args(7)), (&path.image, &reference.image, json!({}))]
    {
        let a = call_value(&reference.client, theirs, args.clone()).await?;
        let b = call_value(&path.client, mine, args).await?;
        differences(&a, &b, &format!("{theirs}()"), &mut diffs);
    }
    // Per field, not per tool: the same change on every tool is one finding.
    let mut kinds: Vec<String> =
        diffs.iter().map(|d| d.split_once("].").map_or(d.clone(), |(_, rest)| rest.to_string())).collect();
    kinds.sort();
    kinds.dedup();
    Ok(match (missing, kinds.is_empty()) {
        (0, true) => "identical".to_string(),
        _ => format!("{missing} tools missing; differs at: {}", kinds.join(", ")),
    })
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let rank = ((p / 100.0) * (sorted.len().max(1) - 1) as f64).round() as usize;
    sorted.get(rank).map_or(0.0, |d| d.as_secs_f64() * 1e6)
}

async fn throughput(path: &Route, concurrency: usize, seconds: u64) -> anyhow::Result<(f64, Vec<f64>)> {
    let before: Vec<f64> = path.pids.iter().map(|p| cpu_seconds(*p)).collect();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..concurrency {
        let (client, tool) = (path.client.clone(), path.echo.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0usize;
            while Instant::now() < deadline {
                call_value(&client, &tool, echo_args(worker * 1_000_000 + n)).await?;
                n += 1;
            }
            anyhow::Ok(n)
        }));
    }
    let mut calls = 0;
    for task in tasks {
        calls += task.await??;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = path.pids.iter().zip(before).map(|(p, b)| (cpu_seconds(*p) - b) * 1e6 / calls.max(1) as f64).collect();
    Ok((calls as f64 / secs, cpu))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let o = options()?;
    let dir = tempfile::tempdir()?;
    let config = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
        serde_json::to_string(&o.everything.display().to_string())?
    );
    std::fs::create_dir_all(dir.path().join("user-config"))?;
    std::fs::write(dir.path().join("user-config/config.toml"), config)?;

    let mut paths = Vec::new();
    for setup in start_all(&o, dir.path()).await? {
        let tools = tools_of(&setup.client, setup.tail.as_ref()).await?;
        let echo = resolve(&tools, "echo").with_context(|| format!("{}: no echo tool", setup.label))?;
        let image = resolve(&tools, "get-tiny-image").with_context(|| format!("{}: no get-tiny-image", setup.label))?;
        println!("{:17} pids {:?}, tools `{echo}`, `{image}`", setup.label, setup.pids);
        paths.push(Route {
            label: setup.label,
            client: Arc::new(setup.client),
            tail: setup.tail,
            pids: setup.pids,
            echo,
            image,
            _children: setup.children,
        });
    }

    let reference_tools = tools_of(&paths[0].client, None).await?;
    let mut same = Vec::new();
    for path in &paths {
        same.push(transparency(path, &paths[0], &reference_tools).await?);
    }

    // Latency, interleaved: each round of calls visits every path, starting
    // at a different one each time.
    for path in &paths {
        for i in 0..200 {
            call_value(&path.client, &path.echo, echo_args(i)).await?;
        }
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(o.calls); paths.len()];
    for i in 0..o.calls {
        for k in 0..paths.len() {
            let j = (i + k) % paths.len();
            let start = Instant::now();
            call_value(&paths[j].client, &paths[j].echo, echo_args(i)).await?;
            times[j].push(start.elapsed());
        }
    }
    times.iter_mut().for_each(|t| t.sort());

    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let mut cpus: Vec<Vec<Vec<f64>>> = vec![Vec::new(); paths.len()];
    for _ in 0..o.rounds {
        for (j, path) in paths.iter().enumerate() {
            let (rate, cpu) = throughput(path, o.concurrency, o.seconds).await?;
            rates[j].push(rate);
            cpus[j].push(cpu);
        }
    }

    let (base50, base99) = (percentile(&times[0], 50.0), percentile(&times[0], 99.0));
    println!(
        "\n{} sequential echo calls per path (interleaved, after 200 warm-up calls); {} callers x {} s per round, {} rounds",
        o.calls, o.concurrency, o.seconds, o.rounds
    );
    println!(
        "{:17} {:>8} {:>8} {:>8} {:>8}  {:>23}  {:>22}  {:>13}  content vs direct stdio",
        "path", "p50 us", "p99 us", "+p50", "+p99", "calls/s per round", "CPU us/call (gw+srv)", "RSS MiB gw/srv"
    );
    for (j, path) in paths.iter().enumerate() {
        let (p50, p99) = (percentile(&times[j], 50.0), percentile(&times[j], 99.0));
        let rate: Vec<String> = rates[j].iter().map(|r| format!("{r:.0}")).collect();
        let cpu: Vec<String> =
            cpus[j].iter().map(|c| c.iter().map(|v| format!("{v:.0}")).collect::<Vec<_>>().join("+")).collect();
        let rss: Vec<String> = path.pids.iter().map(|p| format!("{:.0}", rss_mib(*p))).collect();
        println!(
            "{:17} {p50:8.0} {p99:8.0} {:8.0} {:8.0}  {:>23}  {:>22}  {:>13}  {}",
            path.label,
            p50 - base50,
            p99 - base99,
            rate.join(" "),
            cpu.join(" "),
            rss.join("/"),
            same[j]
        );
    }
    Ok(())
}
