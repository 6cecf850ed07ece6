//! Measures sub-agents on the scripted model server, in-process:
//! - spawn overhead: from calling `agent_open` to the child's first request
//!   reaching the model server (p50/p99 over many opens);
//! - memory per idle child: resident memory before and after opening N
//!   children that answered once and now wait for follow-up input.
//!
//! Run: `cargo run --release -p quiver-cli --example subagent_bench`

#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_agent::exec::SYSTEM_PROMPT;
use quiver_agent::openai::{OpenAiDialect, OpenAiProvider};
use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::subagent::{AgentHub, AgentRuntime, SubagentLimits, limits::HARD_MAX_CONCURRENT};
use quiver_agent::{ApiKey, HttpOptions};
use quiver_engine::{Audience, EngineHost, Manifest, Mode, Workspace};
use serde_json::json;

const ANSWER: &str = "SUMMARY: ok\nCHANGES: None.\nEVIDENCE:\n- a:1-1\nRISKS: none\nBLOCKERS: None.";

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn main() -> anyhow::Result<()> {
    // Children write transcripts to the state directory: give them a temporary one
    // (by re-running this example with it set, as the environment is read-only here).
    if std::env::var_os("QUIVER_STATE_DIR").is_none() {
        let state = tempfile::tempdir()?;
        let status =
            std::process::Command::new(std::env::current_exe()?).env("QUIVER_STATE_DIR", state.path()).status()?;
        anyhow::ensure!(status.success(), "the bench failed");
        return Ok(());
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(bench())
}

async fn bench() -> anyhow::Result<()> {
    let ws = tempfile::tempdir()?;
    let mut registry = quiver_tools::native_registry()?;
    let hub = AgentHub::new();
    quiver_agent::subagent::register_tools(&hub, &mut registry)?;
    let host = EngineHost::new(registry, Manifest::builtin()?, Vec::new())?;
    hub.attach_host(&host);
    let server = ScriptedServer::start().await?;
    let dialect = OpenAiDialect {
        max_completion_tokens: false,
        fim_path: None,
        fim_model: None,
        vision: None,
        tool_choice: None,
    };
    let provider =
        OpenAiProvider::new("deepseek", &server.base_url(), ApiKey::new("sk-bench"), dialect, HttpOptions::default())?;
    hub.configure(AgentRuntime {
        provider: Arc::new(provider),
        provider_name: "deepseek".into(),
        model: "deepseek-chat".into(),
        effort: None,
        max_output_tokens: None,
        limits: SubagentLimits { max_concurrent: HARD_MAX_CONCURRENT, ..SubagentLimits::default() },
        root_system: SYSTEM_PROMPT.into(),
        events: None,
    });
    let audience = Audience { provider: "deepseek".into(), model: Some("deepseek-chat".into()), mode: Mode::Agent };

    // Spawn overhead: one child at a time, each answering at once, then closed.
    let rounds = 200;
    let ctx = host.context(Workspace::new(ws.path())?, audience.clone());
    let mut spawn_us = Vec::new();
    for i in 0..rounds {
        server.push_routed(&format!("BENCH-{i}:"), ScriptedTurn::text(ANSWER));
        let before = server.requests().len();
        let started = Instant::now();
        let opened =
            ctx.call("agent_open", json!({"prompt": format!("BENCH-{i}: go"), "agent_type": "explore"})).await?;
        anyhow::ensure!(!opened.is_error, "{}", opened.content_text());
        while server.requests().len() == before {
            tokio::task::yield_now().await;
        }
        spawn_us.push(started.elapsed().as_secs_f64() * 1e6);
        let id = opened.content["agent_id"].as_str().unwrap_or_default().to_string();
        ctx.call("agent_eval", json!({"agent_id": id, "block": true, "timeout_ms": 10000})).await?;
        ctx.call("agent_close", json!({"agent_id": id})).await?;
    }
    spawn_us.sort_by(f64::total_cmp);
    let p = |q: f64| spawn_us[((spawn_us.len() - 1) as f64 * q).round() as usize];
    println!("spawn (agent_open -> child's first request): p50={:.0}us p99={:.0}us n={rounds}", p(0.5), p(0.99));

    // Memory: N idle children (answered, waiting for input), each in its own parent session.
    let idle = 200;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_kib();
    let mut keep = Vec::new();
    for i in 0..idle {
        let marker = format!("IDLE-{i}:");
        server.push_routed(&marker, ScriptedTurn::text(ANSWER));
        // A fresh parent session per child: the cap counts running children, not idle ones.
        let parent = host.context(Workspace::new(ws.path())?, audience.clone());
        let opened = parent.call("agent_open", json!({"prompt": format!("{marker} go")})).await?;
        let id = opened.content["agent_id"].as_str().unwrap_or_default().to_string();
        parent.call("agent_eval", json!({"agent_id": id, "block": true, "timeout_ms": 10000})).await?;
        keep.push(parent);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = rss_kib();
    println!(
        "idle children: {idle}, rss {before} KiB -> {after} KiB, about {:.1} KiB per idle child",
        (after.saturating_sub(before)) as f64 / f64::from(idle)
    );
    Ok(())
}
