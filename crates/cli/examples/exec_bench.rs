//! Measures the agent loop on the scripted model server, in one run:
//! - the loop's own time per turn (wall time minus model time minus tool time), p50/p99;
//! - first-request bytes against an eager catalog of the same tools;
//! - a 20-turn session that loads tools on several turns: head changes, the
//!   bytes each request shares with the previous one, and the share of each
//!   request's prompt tokens a prefix cache could serve (as the server counts it).
//!
//! - the same 20 turns over the Responses wire (a model with tool search, so
//!   loads travel as `tool_search_output` items), side by side with the
//!   Chat Completions run (loads appended to `tools`).
//!
//! Run: `cargo run --release -p quiver-cli --example exec_bench [-- CATALOG.json ...]`
//!
//! Against a real server instead (the loop's overhead per turn only; the
//! model decides what the turns do): `... --example exec_bench -- --real
//! BASE_URL [MODEL] [RUNS]`, e.g. llama-cpp-python's server at
//! `http://127.0.0.1:8000/v1` (sent `tool_choice: "auto"`, 32 output tokens
//! a turn, at most 3 turns a run, 10 runs by default).
//!
//! Each CATALOG.json (a `tools/list`-shaped file, like the bench catalogs in
//! `bench/search/data/catalogs`) adds its tools as MCP tools of the engine,
//! registered the way the MCP client registers a server's cached tools, so
//! the eager comparison and the searches see a gateway-sized catalog.

#![allow(clippy::print_stdout)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quiver_agent::exec::audit;
use quiver_agent::openai::{OpenAiDialect, OpenAiProvider};
use quiver_agent::run::{AgentLoop, EnginePort, RunEvent, RunLimits};
use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::{ApiKey, BoxFuture, HttpOptions, ModelRequest, ModelResponse, Provider, ProviderError, Sink, Wire};
use quiver_engine::transcript::{Transcript, TranscriptWriter};
use quiver_engine::{
    Audience, CatalogFormat, DynTool, EngineHost, Manifest, Mode, Registry, ToolContext, ToolError, ToolFuture,
    ToolSpec, Workspace,
};
use quiver_mcp::client::RemoteTool;
use serde_json::Value;

/// Wraps a provider to time each model call (the part that is not the loop's).
struct Timed<'a> {
    inner: &'a dyn Provider,
    model_time: Mutex<Vec<Duration>>,
}

impl Provider for Timed<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn wire(&self) -> Wire {
        self.inner.wire()
    }
    fn complete<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: Sink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>> {
        Box::pin(async move {
            let started = Instant::now();
            let result = self.inner.complete(req, sink).await;
            self.model_time.lock().unwrap_or_else(|p| p.into_inner()).push(started.elapsed());
            result
        })
    }
    fn fim<'a>(&'a self, prefix: &'a str, suffix: &'a str, max: u32) -> BoxFuture<'a, Result<String, ProviderError>> {
        self.inner.fim(prefix, suffix, max)
    }
}

/// A downstream tool known only from a catalog file: it has a spec (what the
/// catalog and search see) and no server behind it; the scripted session never
/// calls one.
struct CatalogOnlyTool(ToolSpec);

impl DynTool for CatalogOnlyTool {
    fn spec(&self) -> ToolSpec {
        self.0.clone()
    }

    fn call<'a>(&'a self, _: Value, _: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { Err(ToolError::model(format!("`{}` has no server in this benchmark", self.0.name))) })
    }
}

/// Registers every tool of the catalog files as an MCP tool; returns how many.
fn register_catalogs(registry: &mut Registry, files: &[String]) -> anyhow::Result<usize> {
    let mut added = 0;
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
        let catalog = doc["name"].as_str().unwrap_or("catalog").to_string();
        let mut by_server: std::collections::BTreeMap<String, Vec<RemoteTool>> = Default::default();
        for tool in doc["tools"].as_array().into_iter().flatten() {
            let server = tool["server"].as_str().unwrap_or(&catalog).to_string();
            by_server.entry(server).or_default().push(serde_json::from_value(tool.clone())?);
        }
        for (server, tools) in by_server {
            let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
            let qualified = quiver_engine::names::qualify(&server, &names);
            for remote in &tools {
                let Some(name) = qualified.get(&remote.name) else { continue };
                if registry.get(name).is_some() {
                    continue;
                }
                let spec = quiver_mcp::client::tool::spec_for(&server, name.clone(), remote);
                registry.register_with_spec(spec.clone(), Arc::new(CatalogOnlyTool(spec)))?;
                added += 1;
            }
        }
    }
    Ok(added)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// 20 turns: searches (which load tools) on turns 2, 7, 12 and 16, calls to
/// the loaded tools after them, reads in between, and an answer at the end.
fn script() -> Vec<ScriptedTurn> {
    let mut turns = Vec::new();
    for turn in 1..=19 {
        let id = format!("c{turn}");
        turns.push(match turn {
            2 => ScriptedTurn::tool_call(&id, "tool_search", r#"{"query":"git status of the repository"}"#),
            7 => ScriptedTurn::tool_call(&id, "tool_search", r#"{"query":"project map overview"}"#),
            12 => ScriptedTurn::tool_call(&id, "tool_search", r#"{"query":"remember a note in memory"}"#),
            16 => ScriptedTurn::tool_call(&id, "tool_search", r#"{"query":"diagnostics compiler errors"}"#),
            8 | 9 => ScriptedTurn::tool_call(&id, "project_map", "{}"),
            n if n % 3 == 0 => ScriptedTurn::tool_call(&id, "list_dir", r#"{"path":"."}"#),
            _ => ScriptedTurn::tool_call(&id, "read_file", r#"{"path":"src/lib.rs"}"#),
        });
    }
    turns.push(ScriptedTurn::text("Done: read, mapped and noted."));
    turns
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, url, rest @ ..] if flag == "--real" => {
            let model = rest.first().cloned().unwrap_or_else(|| "smollm2".into());
            let runs = rest.get(1).and_then(|n| n.parse().ok()).unwrap_or(10);
            runtime.block_on(real(url, &model, runs))
        }
        _ => runtime.block_on(bench()),
    }
}

/// Runs `agent` on `prompt`; returns the outcome and the loop's own time per
/// turn in µs (turn wall time minus the model call and the tools).
async fn timed_run(
    agent: &AgentLoop<'_>,
    prompt: &str,
    model_time: &Mutex<Vec<Duration>>,
) -> anyhow::Result<(quiver_agent::run::RunOutcome, Vec<f64>)> {
    model_time.lock().unwrap_or_else(|p| p.into_inner()).clear();
    // (turn start, tool time) per turn, and the run's end.
    let marks: Arc<Mutex<Vec<(Instant, Duration)>>> = Arc::default();
    let sink_marks = Arc::clone(&marks);
    let mut sink = move |event: RunEvent| {
        let mut marks = sink_marks.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            RunEvent::TurnStarted { .. } | RunEvent::SessionEnded { .. } => {
                marks.push((Instant::now(), Duration::ZERO))
            }
            RunEvent::ToolCallEnded { duration, .. } => {
                if let Some(last) = marks.last_mut() {
                    last.1 += duration;
                }
            }
            _ => {}
        }
    };
    let outcome = agent.run(Vec::new(), prompt, &mut sink).await?;
    let marks = marks.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let model = model_time.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let overhead = marks
        .windows(2)
        .zip(&model)
        .map(|(w, m)| (w[1].0 - w[0].0).saturating_sub(*m).saturating_sub(w[0].1).as_secs_f64() * 1e6)
        .collect();
    Ok((outcome, overhead))
}

/// The loop's overhead per turn against a real server: `runs` short sessions.
async fn real(url: &str, model: &str, runs: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src"))?;
    std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n".repeat(20))?;
    let host = EngineHost::new(quiver_tools::native_registry()?, Manifest::builtin()?, Vec::new())?;
    let audience = Audience { provider: "local".into(), model: Some(model.into()), mode: Mode::Agent };
    let dialect = OpenAiDialect { tool_choice: Some("auto".into()), ..OpenAiDialect::default() };
    let inner = OpenAiProvider::new("local", url, ApiKey::new("sk-local"), dialect, HttpOptions::default())?;
    let provider = Timed { inner: &inner, model_time: Mutex::new(Vec::new()) };
    let (mut overhead, mut model_ms, mut turns) = (Vec::new(), Vec::new(), 0);
    for run in 0..runs {
        let mut ctx = host.context(Workspace::new(&ws)?, audience.clone());
        ctx.transcript = Some(Arc::new(TranscriptWriter::open(dir.path().join(format!("s{run}.jsonl")))?));
        let port = EnginePort::hosted(Arc::clone(&host), ctx);
        let agent = AgentLoop {
            provider: &provider,
            tools: &port,
            model: model.into(),
            system: quiver_agent::exec::SYSTEM_PROMPT.into(),
            max_output_tokens: Some(32),
            effort: None,
            stream: true,
            limits: RunLimits { max_turns: 3, token_budget: None },
            compaction: None,
        };
        let (outcome, per_turn) =
            timed_run(&agent, "Read src/lib.rs and say what answer() returns.", &provider.model_time).await?;
        turns += outcome.turns;
        model_ms.extend(
            provider.model_time.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|d| d.as_secs_f64() * 1e3),
        );
        overhead.extend(per_turn);
    }
    overhead.sort_by(f64::total_cmp);
    model_ms.sort_by(f64::total_cmp);
    println!("real server {url} model {model}: {runs} runs, {turns} turns");
    println!(
        "loop_overhead_per_turn p50_us={:.0} p99_us={:.0} (n={}; wall time minus model and tool time)",
        percentile(&overhead, 0.5),
        percentile(&overhead, 0.99),
        overhead.len()
    );
    println!(
        "model_time_per_request p50_ms={:.0} p99_ms={:.0}",
        percentile(&model_ms, 0.5),
        percentile(&model_ms, 0.99)
    );
    Ok(())
}

async fn bench() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src"))?;
    std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n".repeat(20))?;
    let catalogs: Vec<String> = std::env::args().skip(1).collect();
    let mut registry = quiver_tools::native_registry()?;
    let native = registry.len();
    let mcp = register_catalogs(&mut registry, &catalogs)?;
    let host = EngineHost::new(registry, Manifest::builtin()?, Vec::new())?;
    let audience = Audience { provider: "deepseek".into(), model: Some("deepseek-chat".into()), mode: Mode::Agent };
    let mut ctx = host.context(Workspace::new(&ws)?, audience.clone());
    let transcript_path = dir.path().join("session.jsonl");
    ctx.transcript = Some(Arc::new(TranscriptWriter::open(&transcript_path)?));
    let port = EnginePort::hosted(Arc::clone(&host), ctx);

    let server = ScriptedServer::start().await?;
    server.script(script());
    let dialect = OpenAiDialect {
        max_completion_tokens: false,
        fim_path: None,
        fim_model: None,
        vision: None,
        tool_choice: None,
    };
    let inner =
        OpenAiProvider::new("deepseek", &server.base_url(), ApiKey::new("sk-bench"), dialect, HttpOptions::default())?;
    let provider = Timed { inner: &inner, model_time: Mutex::new(Vec::new()) };
    let agent = AgentLoop {
        provider: &provider,
        tools: &port,
        model: "deepseek-chat".into(),
        system: quiver_agent::exec::SYSTEM_PROMPT.into(),
        max_output_tokens: None,
        effort: None,
        stream: true,
        limits: RunLimits { max_turns: 20, token_budget: None },
        compaction: None,
    };
    let prompt = "Look around the project, map it and note what you find.";
    let (outcome, mut overhead) = timed_run(&agent, prompt, &provider.model_time).await?;
    overhead.sort_by(f64::total_cmp);

    // First request against an eager catalog of the same tools.
    let requests = server.requests();
    let first = requests[0].json();
    let lazy_tools = quiver_engine::canonical::to_string(&first["tools"]);
    let engine = host.engine();
    let every: Vec<String> = engine.registry().iter().map(|t| t.spec.name.clone()).collect();
    let eager = engine.catalog(&audience, &every);
    let eager_tools = quiver_engine::canonical::to_string(&eager.render(CatalogFormat::OpenAi));
    let first_bytes = requests[0].body.len();
    let eager_bytes = first_bytes - lazy_tools.len() + eager_tools.len();

    println!("catalog: {native} native tools + {mcp} MCP tools from {} catalog file(s)", catalogs.len());
    println!("turns={} status={:?}", outcome.turns, outcome.status);
    println!(
        "loop_overhead_per_turn p50_us={:.0} p99_us={:.0} (n={}; wall time minus model and tool time)",
        percentile(&overhead, 0.5),
        percentile(&overhead, 0.99),
        overhead.len()
    );
    println!(
        "first_request_bytes lazy={first_bytes} eager={eager_bytes} (tools {} of {} -> {:.1}% smaller tools, {:.1}% smaller request)",
        eager.head.len(),
        eager.head.len() + eager.tail.len(),
        100.0 * (1.0 - lazy_tools.len() as f64 / eager_tools.len() as f64),
        100.0 * (1.0 - first_bytes as f64 / eager_bytes as f64)
    );
    let report = audit::audit(&Transcript::read(&transcript_path)?);
    for (i, r) in report.requests.iter().enumerate() {
        let shared = r.shared_prefix_bytes.unwrap_or(0);
        // The scripted server reports usage; a request without it counts as 0 here.
        let (input, hits) = (r.input_tokens.unwrap_or(0), r.cache_hit_tokens.unwrap_or(0));
        let cacheable = if input == 0 { 0.0 } else { 100.0 * hits as f64 / input as f64 };
        println!(
            "request {:>2}: bytes={} shared_prefix_bytes={} ({:.1}% of previous {}) cache_servable={:.1}% tail={}",
            i + 1,
            r.bytes,
            shared,
            if r.previous_bytes == 0 { 0.0 } else { 100.0 * shared as f64 / r.previous_bytes as f64 },
            r.previous_bytes,
            cacheable,
            r.tail.join(",")
        );
    }
    println!("{}", report.lines().last().cloned().unwrap_or_default());
    let chat_eager_tools = eager_tools.len();
    println!("{}", wire_summary("chat_completions", &requests, chat_eager_tools, &["tools", "messages"]));
    responses_run(&host, &audience, &ws, &eager).await?;
    if mcp > 0 {
        // The same comparison against the native tools alone.
        let natives: Vec<String> =
            engine.registry().iter().filter(|t| t.spec.is_native()).map(|t| t.spec.name.clone()).collect();
        let eager_native = engine.catalog(&audience, &natives);
        let eager_native_tools = quiver_engine::canonical::to_string(&eager_native.render(CatalogFormat::OpenAi));
        println!(
            "first_request_bytes vs eager native-only catalog: lazy={first_bytes} eager={} ({} tools)",
            first_bytes - lazy_tools.len() + eager_native_tools.len(),
            natives.len()
        );
    }
    Ok(())
}

/// The requests (1-based) that follow a `tool_search` turn: they carry a load.
fn loading_requests() -> Vec<usize> {
    let turns = script();
    turns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.tool_calls.iter().any(|c| c.name == "tool_search"))
        .map(|(i, _)| i + 2)
        .collect()
}

/// One wire's cache figures over the recorded requests: each request's
/// prompt is `keys` of its body in the provider's cache order (canonical
/// JSON), and a prefix cache could serve the bytes it shares with the
/// previous request's prompt.
fn wire_summary(
    wire: &str,
    requests: &[quiver_agent::scripted::RecordedRequest],
    eager_tools_bytes: usize,
    keys: &[&str],
) -> String {
    let bodies: Vec<Value> = requests.iter().map(|r| r.json()).collect();
    // One line per tool / item (canonical JSON), so a request that only
    // appends has the previous prompt as a byte prefix.
    let prompt = |b: &Value| {
        let mut out = String::new();
        for key in keys {
            let parts = match &b[*key] {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            for part in &parts {
                out.push_str(&quiver_engine::canonical::to_string(part));
                out.push('\n');
            }
        }
        out
    };
    let head = |b: &Value| quiver_engine::canonical::to_string(&b["tools"]);
    let prompts: Vec<String> = bodies.iter().map(prompt).collect();
    let loading = loading_requests();
    let (mut head_changes, mut breaks) = (0, 0);
    let (mut all, mut all_shared, mut load, mut load_shared) = (0usize, 0usize, 0usize, 0usize);
    for (i, p) in prompts.iter().enumerate().skip(1) {
        let before = &prompts[i - 1];
        let shared = before.bytes().zip(p.bytes()).take_while(|(a, b)| a == b).count();
        if !p.starts_with(before.as_str()) {
            breaks += 1;
        }
        // A wire whose tools only grow (Chat Completions) changes the head
        // when the first bytes of `tools` change; a load appended after them is a break.
        let (a, b) = (head(&bodies[i - 1]), head(&bodies[i]));
        if !b.starts_with(a.trim_end_matches(']')) {
            head_changes += 1;
        }
        all += p.len();
        all_shared += shared;
        if loading.contains(&(i + 1)) {
            load += p.len();
            load_shared += shared;
        }
    }
    let first = requests.first().map(|r| r.body.len()).unwrap_or(0);
    let lazy_tools = bodies.first().map(head).map(|t| t.len()).unwrap_or(0);
    format!(
        "wire={wire} requests={} head_changes={head_changes} prefix_breaks={breaks} cacheable_on_loading_turns={:.1}% \
         cacheable_over_run={:.1}% (requests 2..n, bytes in cache order) first_request_bytes={first} eager={}",
        requests.len(),
        100.0 * load_shared as f64 / load.max(1) as f64,
        100.0 * all_shared as f64 / all.max(1) as f64,
        first - lazy_tools + eager_tools_bytes,
    )
}

/// The same script over the Responses wire, with a model that has tool search.
async fn responses_run(
    host: &Arc<EngineHost>,
    audience: &Audience,
    ws: &std::path::Path,
    eager: &quiver_engine::Catalog,
) -> anyhow::Result<()> {
    use quiver_agent::responses::{ResponsesDialect, ResponsesProvider, flat_function};
    let ctx = host.context(
        Workspace::new(ws)?,
        Audience { provider: "openai".into(), model: Some("gpt-5.4".into()), ..audience.clone() },
    );
    let port = EnginePort::hosted(Arc::clone(host), ctx);
    let server = ScriptedServer::start().await?;
    server.script(script());
    let provider = ResponsesProvider::new(
        "openai",
        &server.base_url(),
        ApiKey::new("sk-bench"),
        ResponsesDialect::default(),
        HttpOptions::default(),
    )?;
    let agent = AgentLoop {
        provider: &provider,
        tools: &port,
        model: "gpt-5.4".into(),
        system: quiver_agent::exec::SYSTEM_PROMPT.into(),
        max_output_tokens: None,
        effort: None,
        stream: true,
        limits: RunLimits { max_turns: 20, token_budget: None },
        compaction: None,
    };
    let mut sink = |_: RunEvent| {};
    let outcome = agent.run(Vec::new(), "Look around the project, map it and note what you find.", &mut sink).await?;
    let eager_tools: Vec<Value> =
        eager.render(CatalogFormat::OpenAi).as_array().into_iter().flatten().map(flat_function).collect();
    let eager_bytes = quiver_engine::canonical::to_string(&Value::Array(eager_tools)).len();
    let requests = server.requests();
    println!("responses run: turns={} status={:?}", outcome.turns, outcome.status);
    println!("{}", wire_summary("responses", &requests, eager_bytes, &["tools", "instructions", "input"]));
    Ok(())
}
