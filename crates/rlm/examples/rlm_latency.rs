//! Measures an RLM session: REPL start (gate, sandbox, python3 boot), the
//! round trip of a trivial eval (p50/p90), and the wall time of a 16-prompt
//! `sub_query_batch` against the scripted model server (answers at once, so
//! the number is quiver's and the REPL's overhead, not a model's).
//!
//! `cargo run -p quiver-rlm --example rlm_latency --release`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::{AgentConfig, CliOverrides, HttpOptions, Provider};
use quiver_engine::permissions::trust::TrustStore;
use quiver_engine::{Audience, EngineHost, Manifest, Workspace};
use quiver_rlm::{ChildModel, DEFAULT_CHILD_MODEL, RlmProvider};
use serde_json::json;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = ScriptedServer::start().await.unwrap();
    let url = server.base_url();
    let child = ChildModel::new(
        DEFAULT_CHILD_MODEL,
        Arc::new(move || {
            let cli =
                CliOverrides { provider: Some("deepseek".into()), base_url: Some(url.clone()), ..Default::default() };
            let config = AgentConfig::load(&[], &cli).map_err(|e| e.to_string())?;
            let p: Box<dyn Provider> = config
                .build_provider(&|_| Some("sk-bench".into()), HttpOptions::default())
                .map_err(|e| e.to_string())?;
            Ok(Arc::from(p))
        }),
        Vec::new(),
    );
    let dir = tempfile::tempdir().unwrap();
    let host = EngineHost::with_trust(
        quiver_tools::native_registry().unwrap(),
        Manifest::builtin().unwrap(),
        vec![RlmProvider::shared(child)],
        TrustStore::ephemeral(),
    )
    .unwrap();
    let ctx = host.engine().context(Workspace::new(dir.path()).unwrap(), Audience::default());

    let mut starts = Vec::new();
    for i in 0..10 {
        let t = Instant::now();
        let r = ctx.call("rlm_open", json!({"name": format!("s{i}"), "content": "hello"})).await.unwrap();
        starts.push(t.elapsed());
        assert!(!r.is_error, "{}", r.content_text());
        if i == 0 {
            println!("sandbox: {}", r.metadata["sandbox"]);
        }
        ctx.call("rlm_close", json!({"name": format!("s{i}")})).await.unwrap();
    }
    starts.sort();
    println!("rlm_open (REPL start) over 10: p50 {:?}, max {:?}", percentile(&starts, 0.5), starts[starts.len() - 1]);

    ctx.call("rlm_open", json!({"name": "s", "content": "hello"})).await.unwrap();
    let mut evals = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        let r = ctx.call("rlm_eval", json!({"name": "s", "code": "1 + 1"})).await.unwrap();
        evals.push(t.elapsed());
        assert_eq!(r.content["value"], "2");
    }
    evals.sort();
    println!(
        "rlm_eval `1 + 1` round trip over 300: p50 {:?}, p90 {:?}, max {:?}",
        percentile(&evals, 0.5),
        percentile(&evals, 0.9),
        evals[evals.len() - 1]
    );

    let mut batches = Vec::new();
    for _ in 0..10 {
        server.script((0..16).map(|i| ScriptedTurn::text(format!("a{i}"))));
        let t = Instant::now();
        let r = ctx
            .call("rlm_eval", json!({"name": "s", "code": "len(sub_query_batch([f'q{i}' for i in range(16)]))"}))
            .await
            .unwrap();
        batches.push(t.elapsed());
        assert_eq!(r.content["value"], "16", "{}", r.content_text());
    }
    batches.sort();
    println!(
        "16-prompt sub_query_batch (scripted server) over 10: p50 {:?}, max {:?}",
        percentile(&batches, 0.5),
        batches[9]
    );
}
