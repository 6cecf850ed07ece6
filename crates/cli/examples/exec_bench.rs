//! Measures the agent loop on the scripted model server: the same 20-turn
//! session that loads tools on several turns, with the native and agent tools
//! registered (what `quiver exec` has), once per way of sending loaded tools
//! (Chat Completions appending; Chat Completions through the `call_tool`
//! dispatcher; Anthropic appending; Anthropic with `defer_loading` and
//! `tool_reference`; Responses with the client-executed tool search and
//! `tool_search_output`), side by side:
//! - head changes, and requests whose cached prefix breaks (the server's
//!   cache could not serve all of the previous request's prompt);
//! - the share of prompt bytes a prefix cache could serve on the requests
//!   after a load and over the run, as the scripted server keys its cache
//!   (the wire's documented order, deferred tools left out);
//! - first-request bytes (body, and what is in the prompt) against an eager
//!   catalog of the same tools;
//! - tool calls that came back as errors (a call that did not reach its tool
//!   well-formed: unknown name, arguments its schema refuses);
//! - the loop's own time per turn (wall time minus model and tool time), p50/p99.
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

use quiver_agent::anthropic::AnthropicProvider;
use quiver_agent::deferred::DeferredTools;
use quiver_agent::exec::audit;
use quiver_agent::openai::{OpenAiDialect, OpenAiProvider};
use quiver_agent::responses::UnloadedMatches;
use quiver_agent::run::{AgentLoop, EnginePort, RunEvent, RunLimits};
use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::subagent::AgentHub;
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
    fn defers_tools(&self) -> bool {
        self.inner.defers_tools()
    }
    fn dispatches_tools(&self) -> bool {
        self.inner.dispatches_tools()
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
) -> anyhow::Result<(quiver_agent::run::RunOutcome, Vec<f64>, usize)> {
    model_time.lock().unwrap_or_else(|p| p.into_inner()).clear();
    // (turn start, tool time) per turn, and the run's end.
    let marks: Arc<Mutex<Vec<(Instant, Duration)>>> = Arc::default();
    let sink_marks = Arc::clone(&marks);
    let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sink_errors = Arc::clone(&errors);
    let mut sink = move |event: RunEvent| {
        let mut marks = sink_marks.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            RunEvent::TurnStarted { .. } | RunEvent::SessionEnded { .. } => {
                marks.push((Instant::now(), Duration::ZERO))
            }
            RunEvent::ToolCallEnded { duration, error, .. } => {
                if error.is_some() {
                    sink_errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
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
    Ok((outcome, overhead, errors.load(std::sync::atomic::Ordering::Relaxed)))
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
        let (outcome, per_turn, _) =
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

/// One way of sending loaded tools, measured on the same 20-turn script.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Variant {
    /// Chat Completions (DeepSeek): loaded tools appended to `tools`.
    ChatAppend,
    /// Chat Completions with `deferred_tools = "dispatch"`: `tools` is the head
    /// and `call_tool`; a search's result carries the loaded definitions.
    ChatDispatch,
    /// Anthropic Messages with `deferred_tools = "append"` (today's behaviour).
    AnthropicAppend,
    /// Anthropic Messages with `defer_loading` and `tool_reference` (the default).
    AnthropicDefer,
    /// OpenAI Responses with a tool-search model: loads travel as
    /// `tool_search_output` items, `tools` never changes; the note on what
    /// a search matched but did not load as `unloaded_matches` says.
    Responses(UnloadedMatches),
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::ChatAppend => "chat completions, append",
            Variant::ChatDispatch => "chat completions, call_tool dispatch",
            Variant::AnthropicAppend => "anthropic, append",
            Variant::AnthropicDefer => "anthropic, defer_loading",
            Variant::Responses(UnloadedMatches::Name) => "responses, tool_search_output (unloaded: name)",
            Variant::Responses(UnloadedMatches::Describe) => "responses, tool_search_output (unloaded: describe)",
            Variant::Responses(UnloadedMatches::Omit) => "responses, tool_search_output (unloaded: omit)",
        }
    }

    fn wire(self) -> Wire {
        match self {
            Variant::ChatAppend | Variant::ChatDispatch => Wire::OpenAi,
            Variant::AnthropicAppend | Variant::AnthropicDefer => Wire::Anthropic,
            Variant::Responses(_) => Wire::Responses,
        }
    }
}

/// What one variant's run measured.
struct Row {
    variant: Variant,
    turns: u32,
    /// Tool calls that ended in an error.
    tool_errors: usize,
    head_tools: usize,
    head_changes: usize,
    /// Requests whose prompt the server's prefix cache could not serve whole
    /// up to the previous request's end (as the scripted server counts it).
    cache_breaks: usize,
    loading_requests: usize,
    /// (cached, prompt) bytes as the scripted server keys its cache.
    loading: (usize, usize),
    run: (usize, usize),
    /// Bytes each prompt shares with the previous one, over the run: what a
    /// cache holding every earlier prompt whole would serve (all but each
    /// request's new bytes and the cold first request).
    ideal: usize,
    /// The first request of a second session on the same server, after the
    /// first session (cached, prompt): what the head's cache gives a new session.
    warm_first: (usize, usize),
    first_body: usize,
    first_prompt: usize,
    eager_body: usize,
    eager_prompt: usize,
    overhead: Vec<f64>,
    audit_summary: String,
    /// Per request: (prompt bytes, bytes a cache could serve, bytes shared
    /// with the previous prompt, whether it follows a load).
    per_request: Vec<(usize, usize, usize, bool)>,
}

fn share((cached, total): (usize, usize)) -> f64 {
    if total == 0 { 0.0 } else { 100.0 * cached as f64 / total as f64 }
}

/// Builds a registry with the native tools, the agent tools and the catalogs'
/// MCP tools (what `quiver exec` registers, plus the catalogs).
fn registry(catalogs: &[String]) -> anyhow::Result<(Registry, Arc<AgentHub>, usize, usize)> {
    let mut registry = quiver_tools::native_registry()?;
    let hub = AgentHub::new();
    quiver_agent::subagent::register_tools(&hub, &mut registry)?;
    let native = registry.len();
    let mcp = register_catalogs(&mut registry, catalogs)?;
    Ok((registry, hub, native, mcp))
}

async fn measure(variant: Variant, catalogs: &[String], bodies: Option<&str>) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src"))?;
    std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n".repeat(20))?;
    let (registry, hub, _, _) = registry(catalogs)?;
    let host = EngineHost::new(registry, Manifest::builtin()?, Vec::new())?;
    hub.attach_host(&host);
    let (provider_name, model) = match variant.wire() {
        Wire::OpenAi => ("deepseek", "deepseek-chat"),
        Wire::Anthropic => ("anthropic", "claude-sonnet-4-5"),
        Wire::Responses => ("openai", "gpt-5.4"),
    };
    let audience = Audience { provider: provider_name.into(), model: Some(model.into()), mode: Mode::Agent };
    let mut ctx = host.context(Workspace::new(&ws)?, audience.clone());
    let transcript_path = dir.path().join("session.jsonl");
    ctx.transcript = Some(Arc::new(TranscriptWriter::open(&transcript_path)?));
    let port = EnginePort::hosted(Arc::clone(&host), ctx);

    let server = ScriptedServer::start().await?;
    server.script(script());
    let key = ApiKey::new("sk-bench");
    let inner: Box<dyn Provider> = match variant {
        Variant::ChatAppend | Variant::ChatDispatch => {
            let dialect = OpenAiDialect::default();
            let mode = (variant == Variant::ChatDispatch).then_some(DeferredTools::Dispatch);
            Box::new(
                OpenAiProvider::new(provider_name, &server.base_url(), key, dialect, HttpOptions::default())?
                    .with_deferred_tools(mode),
            )
        }
        Variant::AnthropicAppend | Variant::AnthropicDefer => {
            let mode = if variant == Variant::AnthropicDefer { DeferredTools::Defer } else { DeferredTools::Append };
            Box::new(
                AnthropicProvider::new(provider_name, &server.base_url(), key, HttpOptions::default())?
                    .with_deferred_tools(Some(mode)),
            )
        }
        Variant::Responses(unloaded_matches) => {
            use quiver_agent::responses::{ResponsesDialect, ResponsesProvider};
            let dialect = ResponsesDialect { unloaded_matches, ..ResponsesDialect::default() };
            Box::new(ResponsesProvider::new(provider_name, &server.base_url(), key, dialect, HttpOptions::default())?)
        }
    };
    let provider = Timed { inner: inner.as_ref(), model_time: Mutex::new(Vec::new()) };
    let agent = AgentLoop {
        provider: &provider,
        tools: &port,
        model: model.into(),
        system: quiver_agent::exec::SYSTEM_PROMPT.into(),
        max_output_tokens: None,
        effort: None,
        stream: true,
        limits: RunLimits { max_turns: 20, token_budget: None },
        compaction: None,
    };
    let prompt = "Look around the project, map it and note what you find.";
    let (outcome, mut overhead, tool_errors) = timed_run(&agent, prompt, &provider.model_time).await?;
    overhead.sort_by(f64::total_cmp);

    let requests = server.requests();
    if let Some(dir) = bodies {
        let dir = std::path::Path::new(dir).join(format!("{variant:?}"));
        std::fs::create_dir_all(&dir)?;
        for (i, r) in requests.iter().enumerate() {
            std::fs::write(dir.join(format!("{i:02}.json")), &r.body)?;
        }
    }
    let report = audit::audit(&Transcript::read(&transcript_path)?);
    let mut row = Row {
        variant,
        turns: outcome.turns,
        tool_errors,
        head_tools: 0,
        head_changes: report.head_changes,
        cache_breaks: 0,
        loading_requests: 0,
        loading: (0, 0),
        run: (0, 0),
        ideal: 0,
        warm_first: (0, 0),
        first_body: requests.first().map_or(0, |r| r.body.len()),
        first_prompt: requests.first().map_or(0, |r| r.prompt_bytes),
        eager_body: 0,
        eager_prompt: 0,
        overhead,
        audit_summary: report.lines().last().cloned().unwrap_or_default(),
        per_request: Vec::new(),
    };
    for (i, r) in requests.iter().enumerate() {
        row.run.0 += r.cached_bytes;
        row.ideal += r.shared_bytes;
        row.run.1 += r.prompt_bytes;
        if r.extends_previous == Some(false) {
            row.cache_breaks += 1;
        }
        // The audit's requests line up with the server's (one each).
        let loading = report.requests.get(i).is_some_and(|a| a.loading);
        row.per_request.push((r.prompt_bytes, r.cached_bytes, r.shared_bytes, loading));
        if loading {
            row.loading_requests += 1;
            row.loading.0 += r.cached_bytes;
            row.loading.1 += r.prompt_bytes;
        }
    }
    // The first request with every tool in the prompt (an eager catalog).
    let first = requests.first().map(|r| r.json()).unwrap_or_default();
    let sent_tools = quiver_engine::canonical::to_string(&first["tools"]);
    let engine = host.engine();
    let every: Vec<String> = engine.registry().iter().map(|t| t.spec.name.clone()).collect();
    let eager = engine.catalog(&audience, &every);
    let eager_tools = match variant.wire() {
        Wire::OpenAi => quiver_engine::canonical::to_string(&eager.render(CatalogFormat::OpenAi)).len(),
        Wire::Anthropic => quiver_engine::canonical::to_string(&eager.render(CatalogFormat::Anthropic)).len(),
        // The Responses API's flat function shape.
        Wire::Responses => {
            let rendered = eager.render(CatalogFormat::OpenAi);
            let flat: Vec<Value> =
                rendered.as_array().into_iter().flatten().map(quiver_agent::responses::flat_function).collect();
            quiver_engine::canonical::to_string(&Value::Array(flat)).len()
        }
    };
    let in_prompt: Vec<&Value> = first["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t.get("defer_loading") != Some(&Value::Bool(true)))
        .collect();
    let prompt_tools = quiver_engine::canonical::to_string(&serde_json::json!(in_prompt)).len();
    // A new session (its own state, another task) on the same server.
    let mut ctx = host.context(Workspace::new(&ws)?, audience.clone());
    ctx.transcript = Some(Arc::new(TranscriptWriter::open(dir.path().join("second.jsonl"))?));
    let second_port = EnginePort::hosted(Arc::clone(&host), ctx);
    server.push(ScriptedTurn::text("Nothing to do."));
    let second = AgentLoop { tools: &second_port, ..agent };
    second.run(Vec::new(), "Which license does this crate use?", &mut |_| {}).await?;
    if let Some(first) = server.requests().get(requests.len()) {
        row.warm_first = (first.cached_bytes, first.prompt_bytes);
    }
    row.head_tools = eager.head.len();
    row.eager_body = row.first_body - sent_tools.len() + eager_tools;
    row.eager_prompt = row.first_prompt - prompt_tools + eager_tools;
    Ok(row)
}

async fn bench() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_request = args.iter().any(|a| a == "--requests");
    // `--bodies DIR`: every request's body, one file each, per variant.
    let bodies = args.iter().position(|a| a == "--bodies").and_then(|i| args.get(i + 1)).cloned();
    let catalogs: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            *a != "--requests" && *a != "--bodies" && args.get(i.wrapping_sub(1)).is_none_or(|p| p != "--bodies")
        })
        .map(|(_, a)| a.clone())
        .collect();
    let (_, _, native, mcp) = registry(&catalogs)?;
    println!("catalog: {native} native and agent tools + {mcp} MCP tools from {} catalog file(s)", catalogs.len());
    let mut rows = Vec::new();
    let variants = [
        Variant::ChatAppend,
        Variant::ChatDispatch,
        Variant::AnthropicAppend,
        Variant::AnthropicDefer,
        Variant::Responses(UnloadedMatches::Name),
        Variant::Responses(UnloadedMatches::Describe),
        Variant::Responses(UnloadedMatches::Omit),
    ];
    for variant in variants {
        rows.push(measure(variant, &catalogs, bodies.as_deref()).await?);
    }
    println!(
        "| wire | turns | tool errors | head tools | head changes | cache breaks | loading requests | cacheable on loading requests | cacheable over the run | ideal cache over the run | a new session's first request | first request body / prompt bytes | eager first request body / prompt bytes |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {} / {} | {} / {} |",
            r.variant.label(),
            r.turns,
            r.tool_errors,
            r.head_tools,
            r.head_changes,
            r.cache_breaks,
            r.loading_requests,
            share(r.loading),
            share(r.run),
            share((r.ideal, r.run.1)),
            share(r.warm_first),
            r.first_body,
            r.first_prompt,
            r.eager_body,
            r.eager_prompt,
        );
    }
    if per_request {
        for r in &rows {
            println!(
                "{}: request prompt_bytes cached_bytes shared_with_previous new_bytes missed_bytes loading",
                r.variant.label()
            );
            for (i, (prompt, cached, shared, loading)) in r.per_request.iter().enumerate() {
                let (new, missed) = (prompt - shared, shared.saturating_sub(*cached));
                println!(
                    "  {i:>2} {prompt:>6} {cached:>6} {shared:>6} {new:>6} {missed:>6} {}",
                    if *loading { "loading" } else { "" }
                );
            }
        }
    }
    for r in &rows {
        println!(
            "{}: loop_overhead_per_turn p50_us={:.0} p99_us={:.0}; audit: {}",
            r.variant.label(),
            percentile(&r.overhead, 0.5),
            percentile(&r.overhead, 0.99),
            r.audit_summary
        );
    }
    Ok(())
}
