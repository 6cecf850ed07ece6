//! Scenarios beyond the basic runs: compaction with a small context window,
//! an RLM `sub_query` answered by the real server, and LiteLLM's Messages
//! route in front of a backend that counts the tools it receives.

use std::sync::Arc;

use quiver_agent::{AgentConfig, CliOverrides, ConfigLayer, HttpOptions, Trust};
use quiver_engine::permissions::trust::TrustStore;
use quiver_engine::{Audience, EngineHost, Manifest, Workspace};
use quiver_rlm::{ChildModel, RlmProvider};
use serde_json::{Value, json};

use super::proxy::Force;
use super::servers::MODEL;
use super::{Outcome, Rig, Via, events, fail};

/// A small `context_window`: resuming a session makes the first request of
/// the new run pass 80% of it, so the model is asked for a relay first
/// (a text request to the real server), then answers; audit counts the
/// compaction and finds no head change and no other prefix break.
pub(crate) async fn compaction(rig: &Rig, via: Via) -> Outcome {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("quiver.toml"), "[model]\ncontext_window = 1000\n").unwrap();
    let run = |args: Vec<String>| {
        let mut cmd = rig.command();
        cmd.args(["exec", "--json", "--mode", "yolo", "--provider", via.provider(), "--workspace"]).arg(ws.path());
        cmd.args(args);
        async move { tokio::time::timeout(super::PATIENCE, cmd.output()).await.expect("exec finishes").unwrap() }
    };
    rig.proxy.plan([Force::Text]);
    let first = run(vec!["Say hello in one word.".into()]).await;
    let Some(session) = rig.sessions().pop() else { return fail("no session", Some(&first)) };
    let id = session.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    rig.proxy.plan([Force::Text, Force::Text]);
    let out = run(vec!["resume".into(), id, "Now say goodbye in one word.".into()]).await;
    let events = events(&out);
    if out.status.code() != Some(0) || !events.iter().any(|e| e["type"] == "compaction") {
        return fail("expected a compaction and a finished run", Some(&out));
    }
    let audit = std::process::Command::new(env!("CARGO_BIN_EXE_quiver")).arg("audit").arg(&session).output().unwrap();
    let summary = crate::exec::stdout(&audit).lines().last().unwrap_or_default().to_string();
    if !summary.contains("head_changes=0 prefix_breaks=0 compactions=1") {
        return fail(format!("audit: {summary}"), Some(&audit));
    }
    Ok(())
}

/// `sub_query` inside an RLM session, answered by the llama server through
/// quiver's provider layer (one unstreamed request), its usage reported.
pub(crate) async fn rlm_sub_query(rig: &Rig) -> Outcome {
    if quiver_testkit::program_or_skip("python3", "apt-get install python3").is_none() {
        return Ok(());
    }
    let config_text = rig.config_text();
    let key = "sk-local".to_string();
    let factory: quiver_rlm::ProviderFactory = Arc::new(move || {
        let layer = ConfigLayer { trust: Trust::User, path: "config.toml", text: &config_text };
        let cli = CliOverrides { provider: Some("llama".into()), ..Default::default() };
        let config = AgentConfig::load(&[layer], &cli).map_err(|e| e.to_string())?;
        let key = key.clone();
        let provider = config.build_provider(&move |_| Some(key.clone()), HttpOptions::default());
        Ok(Arc::from(provider.map_err(|e| e.to_string())?))
    });
    let child = ChildModel::new(MODEL, factory, vec!["LLAMA_API_KEY".into()]);
    let dir = tempfile::tempdir().unwrap();
    let host = EngineHost::with_trust(
        quiver_tools::native_registry().map_err(|e| e.to_string())?,
        Manifest::builtin().map_err(|e| e.to_string())?,
        vec![RlmProvider::shared(child)],
        TrustStore::ephemeral(),
    )
    .map_err(|e| e.to_string())?;
    let workspace = Workspace::new(dir.path()).map_err(|e| e.to_string())?;
    let ctx = host.engine().context(workspace, Audience::default());
    let from = rig.proxy.seen().len();
    rig.proxy.plan([Force::Text]);
    let call = |name: &'static str, args: Value| {
        let ctx = &ctx;
        async move { ctx.call(name, args).await.map_err(|e| format!("{name}: {e}")) }
    };
    let opened = call("rlm_open", json!({"name": "s", "content": "apples: 3\npears: 5\n"})).await?;
    if opened.is_error {
        return fail(format!("rlm_open: {}", opened.content_text()), None);
    }
    let code = "answer = sub_query('How many apples are there? Answer with a number.', context=_context)\nanswer";
    let r = call("rlm_eval", json!({"name": "s", "code": code})).await?;
    let child = &r.metadata["child_usage"];
    if r.is_error || child["queries"] != 1 || !child["input_tokens"].is_u64() {
        return fail(format!("rlm_eval: {} / {child}", r.content_text()), None);
    }
    let chats = rig.proxy.chats_since(from);
    if chats.len() != 1 || chats[0].body["stream"] == true || chats[0].status != 200 {
        return fail(
            format!("expected one unstreamed request: {:?}", chats.iter().map(|c| c.status).collect::<Vec<_>>()),
            None,
        );
    }
    Ok(())
}

/// `providers check` on LiteLLM's Messages route in front of the counting
/// backend: LiteLLM accepts `defer_loading` and hands the deferred tool to
/// its backend as an ordinary function, whose bytes the backend's usage
/// counts, so the deferred tools row is `no` ("counted as prompt") and the
/// next runs append. (In front of llama-cpp-python the row is `n/a`: its
/// template drops tools, so neither request counts them.)
pub(crate) async fn deferred_counted_behind_litellm(rig: &Rig) -> Outcome {
    let backend = &rig.counting;
    let from = backend.requests().len();
    // Every probe request gets a word back (a forced call is not answered
    // with one: that row's `no` is not this scenario's business).
    backend.script(std::iter::repeat_with(|| quiver_agent::scripted::ScriptedTurn::text("hello")).take(40));
    let mut cmd = rig.command();
    cmd.args(["providers", "check", Via::LiteLlmCounting.provider(), "--model", super::servers::COUNTING]);
    let out = tokio::time::timeout(super::PATIENCE, cmd.args(["--recheck", "--json"]).output())
        .await
        .expect("the check finishes")
        .unwrap();
    let report: Value = match serde_json::from_str(crate::exec::stdout(&out).trim()) {
        Ok(report) => report,
        Err(e) => return fail(format!("not JSON ({e})"), Some(&out)),
    };
    let rows = report["rows"].as_array().cloned().unwrap_or_default();
    let Some(row) = rows.iter().find(|r| r["check"] == "deferred_tools") else {
        return fail("no deferred_tools row", Some(&out));
    };
    let detail = row["detail"].as_str().unwrap_or_default();
    eprintln!("providers check litellm-counting: deferred_tools {} {detail}", row["status"]);
    if row["status"] != "no" || !detail.contains("counted as prompt") {
        return fail(format!("expected `no`, counted as prompt: {row}"), Some(&out));
    }
    if report["learned"]["deferred_tools"] != false {
        return fail(format!("not learned: {}", report["learned"]), Some(&out));
    }
    // What reached the backend: the deferred tool as an ordinary function.
    let bodies: Vec<Value> = backend.requests()[from..].iter().map(|r| r.json()).collect();
    let delivered = bodies
        .iter()
        .flat_map(|b| b["tools"].as_array().cloned().unwrap_or_default())
        .find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some("probe_deferred_report"));
    match delivered {
        Some(tool) if tool.get("defer_loading").is_none() && tool["function"].get("defer_loading").is_none() => Ok(()),
        Some(tool) => fail(format!("the backend got `defer_loading`: {tool}"), None),
        None => fail(format!("the backend never got the deferred tool ({} requests)", bodies.len()), Some(&out)),
    }
}

/// The interactive agent in a real terminal (tmux) against the llama server:
/// a prompt typed, the model's answer on screen, quit, and a transcript whose
/// prefix only grew.
pub(crate) async fn interactive_in_tmux(rig: &Rig) -> Outcome {
    use crate::tui_terminal::{Tmux, audit, quit, quiver_command};
    let exit_file = rig.env.state.path().join("tui-exit-status");
    let before = rig.sessions();
    let command = quiver_command(
        &rig.env,
        &["--provider", "llama", "--mode", "yolo", "--workspace", &rig.env.ws.path().display().to_string()],
        &[("LLAMA_API_KEY", "sk-local")],
        &exit_file,
    );
    let Some(tmux) = Tmux::start(&command, 100, 30) else { return Ok(()) };
    tmux.wait_within(super::PATIENCE, "the first frame", |s| s.contains("Ctrl+P palette")).await?;
    tmux.line("Say hello in one short sentence.");
    // The run ends: an answer is recorded and the status line stops saying it works.
    let answered = || {
        let new: Vec<_> = rig.sessions().into_iter().filter(|s| !before.contains(s)).collect();
        new.iter().any(|s| std::fs::read_to_string(s).is_ok_and(|t| t.contains("\"role\":\"assistant\"")))
    };
    let screen = tmux.wait_within(super::PATIENCE, "the answer", |s| answered() && !s.contains("working ·")).await?;
    if screen.contains('✗') {
        return Err(format!("the run failed on screen:\n{screen}"));
    }
    let status = quit(&tmux, &exit_file).await?;
    if status != "0" {
        return Err(format!("quiver exited with {status}:\n{}", tmux.screen()));
    }
    let session = rig.sessions().into_iter().find(|s| !before.contains(s)).ok_or("no new session transcript")?;
    if !screen.contains("› Say hello in one short sentence.\n") {
        return Err(format!("the prompt is not in the transcript view:\n{screen}"));
    }
    audit(&session).map(|_| ())
}
