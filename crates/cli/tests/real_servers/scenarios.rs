//! The scenarios, each on the wires it applies to. Every `quiver exec` run
//! is audited: 0 head changes and 0 prefix breaks.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use super::proxy::{Force, Seen};
use super::{Outcome, PATIENCE, Rig, Via, events, fail};
use crate::exec::stdout;

const WIRES: [Via; 3] = [Via::Llama, Via::LiteLlmAnthropic, Via::LiteLlmOpenAi];

/// Every scenario in order (each reported as it ends), then the stable
/// part of `providers check` per server, for the caller to snapshot.
pub(crate) async fn run_all(rig: &Rig) -> (Vec<(String, Outcome)>, Vec<(&'static str, String)>) {
    // `QUIVER_REAL_SCENARIOS=alias,sub-agent`: only the scenarios whose names
    // hold one of these words (a developer's loop; CI runs every one).
    let only: Vec<String> = std::env::var("QUIVER_REAL_SCENARIOS")
        .map(|v| v.split(',').map(|w| w.trim().to_lowercase()).filter(|w| !w.is_empty()).collect())
        .unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|w| name.to_lowercase().contains(w));
    let mut results = Vec::new();
    // Runs one scenario when wanted, and reports it as it ends.
    macro_rules! scenario {
        ($name:expr, $run:expr) => {{
            let name: String = $name;
            if wanted(&name) {
                let started = std::time::Instant::now();
                // A server that crashed (a model server built for another
                // CPU dies on its first long prompt) fails the scenario at
                // once, and every later one, instead of each waiting out
                // its patience on a server that is gone.
                let outcome: Outcome = tokio::select! {
                    outcome = $run => outcome,
                    why = rig.llama.died("llama") => Err(why),
                    why = rig.litellm.died("LiteLLM") => Err(why),
                };
                let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
                eprintln!("real servers: {name}: {verdict} ({:.1?})", started.elapsed());
                results.push((name, outcome));
            }
        }};
    }
    let mut checks = Vec::new();
    scenario!("providers check".into(), async {
        let (found, outcome) = providers_check(rig).await;
        checks = found;
        outcome
    });
    scenario!(
        "deferred tools counted behind LiteLLM (counting backend)".into(),
        super::more::deferred_counted_behind_litellm(rig)
    );
    scenario!("interactive agent in tmux (Llama)".into(), super::more::interactive_in_tmux(rig));
    for via in WIRES {
        scenario!(format!("plain answer ({via:?})"), plain(rig, via));
        scenario!(format!("resume ({via:?})"), resume(rig, via));
        if via == Via::LiteLlmAnthropic {
            scenario!(format!("tool round trip refused behind LiteLLM ({via:?})"), refused_round_trip(rig));
        } else {
            scenario!(format!("tool round trip ({via:?})"), round_trip(rig, via));
            scenario!(format!("deprecated alias ({via:?})"), super::agents::deprecated_alias(rig, via));
            // The same backend behind both: once is enough for these.
            if via == Via::Llama {
                scenario!(format!("sub-agent opened and evaluated ({via:?})"), super::agents::subagent(rig, via));
                scenario!(format!("tool_search, load, call ({via:?})"), search_load_call(rig, via));
            }
        }
        if via != Via::LiteLlmOpenAi {
            scenario!(format!("compaction ({via:?})"), super::more::compaction(rig, via));
        }
        scenario!(format!("Ctrl-C mid-stream ({via:?})"), interrupt(rig, via));
    }
    scenario!("RLM sub_query".into(), super::more::rlm_sub_query(rig));
    (results, checks)
}

fn tool(name: &str) -> Force {
    Force::Tool(name.to_string())
}

/// The run's last session, audited: 0 head changes and 0 prefix breaks.
pub(crate) fn audited(rig: &Rig) -> Result<(std::path::PathBuf, String), String> {
    let Some(session) = rig.sessions().pop() else { return fail("no session was recorded", None) };
    audit(&session)
}

pub(crate) fn audit(session: &Path) -> Result<(std::path::PathBuf, String), String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quiver")).arg("audit").arg(session).output().unwrap();
    let summary = stdout(&out).lines().last().unwrap_or_default().to_string();
    if out.status.code() != Some(0) || !summary.contains("head_changes=0 prefix_breaks=0") {
        return fail(format!("audit of {}: {summary}", session.display()), Some(&out));
    }
    Ok((session.to_path_buf(), summary))
}

/// A finished run: exit 0, `session_ended` done, a non-empty answer.
fn finished(out: &std::process::Output) -> Result<Vec<Value>, String> {
    let events = events(out);
    let ended = events.iter().rev().find(|e| e["type"] == "session_ended");
    if out.status.code() != Some(0) || ended.is_none_or(|e| e["status"] != "done") {
        return fail(format!("exit {:?}", out.status.code()), Some(out));
    }
    let answered =
        events.iter().any(|e| e["type"] == "model_message" && e["text"].as_str().is_some_and(|t| !t.trim().is_empty()));
    if !answered {
        return fail("no answer text", Some(out));
    }
    Ok(events)
}

fn calls(events: &[Value]) -> Vec<(String, Option<String>)> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_call_ended")
        .map(|e| (e["name"].as_str().unwrap_or_default().to_string(), e["error"].as_str().map(str::to_string)))
        .collect()
}

async fn plain(rig: &Rig, via: Via) -> Outcome {
    rig.proxy.plan([Force::Text]);
    let out = rig.exec(via, &["Say hello in one word."]).await;
    finished(&out)?;
    audited(rig).map(|_| ())
}

async fn round_trip(rig: &Rig, via: Via) -> Outcome {
    let from = rig.proxy.seen().len();
    rig.proxy.plan([tool("read_file"), Force::Text]);
    let out = rig.exec(via, &["Read the file notes.txt and tell me what it says."]).await;
    let events = finished(&out)?;
    let calls = calls(&events);
    if calls.first().map(|c| c.0.as_str()) != Some("read_file") {
        return fail(format!("expected a read_file call first, got {calls:?}"), Some(&out));
    }
    // The server got the result back, paired with the call's id.
    let chats = rig.proxy.chats_since(from);
    let Some(messages) = first_with_a_result(&chats) else {
        return fail(format!("no request carried the tool result ({} chat requests)", chats.len()), Some(&out));
    };
    let call_id = messages.iter().find_map(|m| m.pointer("/tool_calls/0/id").and_then(Value::as_str));
    let result_id = messages.iter().find(|m| m["role"] == "tool").and_then(|m| m["tool_call_id"].as_str());
    if call_id.is_none() || call_id != result_id {
        return fail(format!("the tool result does not answer the call: {messages:?}"), Some(&out));
    }
    if chats.iter().any(|c| c.status != 200) {
        return fail(
            format!("a request was refused: {:?}", chats.iter().map(|c| c.status).collect::<Vec<_>>()),
            Some(&out),
        );
    }
    audited(rig).map(|_| ())
}

/// The Anthropic wire through LiteLLM in front of llama-cpp-python: the
/// forced call streams back as LiteLLM's one `tool_use` block per fragment
/// and quiver runs it once, with one id; the result goes back paired with
/// it. LiteLLM then hands llama-cpp-python a tool-only assistant turn
/// without `content`, which its chat template cannot render (500). LiteLLM's
/// stream hides that as an empty message; quiver asks once more without
/// streaming, gets the error, and (nothing in a Messages body can change
/// it) fails naming the refusal, without sending that body again.
async fn refused_round_trip(rig: &Rig) -> Outcome {
    let from = rig.proxy.seen().len();
    rig.proxy.plan([tool("read_file"), Force::Text]);
    let out = rig.exec(Via::LiteLlmAnthropic, &["Read the file notes.txt and tell me what it says."]).await;
    let events = events(&out);
    let calls = calls(&events);
    if calls.len() != 1 || calls[0].0 != "read_file" {
        return fail(format!("expected one read_file call, got {calls:?}"), Some(&out));
    }
    let refused = crate::exec::stderr(&out).contains("has no attribute 'content'");
    if out.status.code() != Some(1) || !refused {
        return fail("expected exit 1 naming the template's refusal", Some(&out));
    }
    // quiver's side: one retry, the unstreamed repeat, and no resend of the
    // refused body (LiteLLM retries upstream on its own: the server sees more).
    let retries: Vec<&Value> = events.iter().filter(|e| e["type"] == "retrying").collect();
    if retries.len() != 1 || !retries[0]["reason"].as_str().is_some_and(|r| r.contains("no content at all")) {
        return fail(format!("expected one unstreamed repeat: {retries:?}"), Some(&out));
    }
    let chats = rig.proxy.chats_since(from);
    let statuses: Vec<u16> = chats.iter().map(|c| c.status).collect();
    if statuses.first() != Some(&200) || statuses.last() != Some(&500) {
        return fail(format!("expected the call, then refusals: {statuses:?}"), Some(&out));
    }
    let Some(messages) = first_with_a_result(&chats) else {
        return fail(format!("no request carried the tool result: {statuses:?}"), Some(&out));
    };
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    let call_id = messages.iter().find_map(|m| m.pointer("/tool_calls/0/id").and_then(Value::as_str));
    if results.len() != 1 || results[0]["tool_call_id"].as_str() != call_id {
        return fail(format!("one result paired with the call expected: {messages:?}"), Some(&out));
    }
    audited(rig).map(|_| ())
}

/// The messages of the first request that carried a tool result back. Not
/// "the second request": a proxy in between (LiteLLM) repeats a request on
/// its own when the server is slow to answer it, so the server may see the
/// first turn twice before the result.
fn first_with_a_result(chats: &[Seen]) -> Option<Vec<Value>> {
    chats
        .iter()
        .map(|c| c.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|messages| messages.iter().any(|m| m["role"] == "tool"))
}

async fn resume(rig: &Rig, via: Via) -> Outcome {
    let Some(last) = rig.sessions().pop() else { return fail("no session to resume", None) };
    let id = last.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    rig.proxy.plan([Force::Text]);
    let out = rig.exec(via, &["resume", &id, "Now say goodbye in one word."]).await;
    finished(&out)?;
    let (_, summary) = audit(&last)?;
    if !summary.contains("prefix_breaks=0") {
        return fail(summary, Some(&out));
    }
    Ok(())
}

async fn search_load_call(rig: &Rig, via: Via) -> Outcome {
    let from = rig.proxy.seen().len();
    rig.proxy.plan([tool("tool_search"), Force::Loaded, Force::Text]);
    let prompt = "Call tool_search with the query \"project map\".";
    let out = rig.exec(via, &[prompt]).await;
    let calls = calls(&events(&out));
    // What the model sent and got back, for the failure message.
    let exchanged: Vec<String> = rig
        .proxy
        .chats_since(from)
        .last()
        .map(|c| c.body["messages"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool" || m.get("tool_calls").is_some())
        .map(|m| if m["role"] == "tool" { m["content"].to_string() } else { m["tool_calls"].to_string() })
        .collect();
    if let Err(e) = finished(&out) {
        return fail(format!("{e}\ncalls {calls:?}, exchanged {exchanged:?}"), None);
    }
    // The head: the tools of the run's first request.
    let first = rig.proxy.chats_since(from).into_iter().next().map(|s| s.body).unwrap_or_default();
    let head: Vec<&str> =
        first["tools"].as_array().into_iter().flatten().filter_map(|t| t.pointer("/function/name")?.as_str()).collect();
    match calls.as_slice() {
        [(first, None), (second, error), ..] if first == "tool_search" && !head.contains(&second.as_str()) => {
            if error.as_deref().is_some_and(|e| e.contains("unknown tool") || e.contains("not loaded")) {
                return fail(format!("the loaded tool {second} was not dispatched: {error:?}"), Some(&out));
            }
        }
        _ => {
            return fail(
                format!("expected tool_search then a loaded tool, got {calls:?}; exchanged {exchanged:?}"),
                Some(&out),
            );
        }
    }
    audited(rig).map(|_| ())
}

/// Ctrl-C while the answer streams: exit 130, `interrupted`, the transcript kept.
async fn interrupt(rig: &Rig, via: Via) -> Outcome {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("quiver.toml"), "[model]\nmax_output_tokens = 1500\n").unwrap();
    let from = rig.proxy.seen().len();
    rig.proxy.plan([Force::LongText]);
    let mut cmd = rig.command();
    cmd.args(["exec", "--json", "--mode", "yolo", "--provider", via.provider(), "--workspace"]).arg(ws.path());
    cmd.arg("Write a very long story about a dragon who learns to code.").stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id().unwrap_or_default();
    // Until the server is answering the request (its status is in), then a little more.
    let waited = tokio::time::timeout(PATIENCE, async {
        while rig.proxy.chats_since(from).is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    if waited.is_err() {
        return fail("the request never reached the server", None);
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output()).await.expect("exec exits on SIGINT").unwrap();
    let events = events(&out);
    if out.status.code() != Some(130) || events.last().is_none_or(|e| e["status"] != "interrupted") {
        return fail(format!("exit {:?}", out.status.code()), Some(&out));
    }
    audited(rig).map(|_| ())
}

/// `providers check` for each way in: the stable part of each report, and
/// whether every one ran. Run first, so the runs after it start with what it
/// learned (as a user's would after checking).
async fn providers_check(rig: &Rig) -> (Vec<(&'static str, String)>, Outcome) {
    let mut failures = Vec::new();
    let mut checks = Vec::new();
    let servers = [
        (Via::Llama, "llama_cpp_python"),
        (Via::LiteLlmAnthropic, "litellm_anthropic"),
        (Via::LiteLlmOpenAi, "litellm_openai"),
    ];
    for (via, name) in servers {
        let mut cmd = rig.command();
        let provider = via.provider();
        // Through the pass-through with nothing planned: it only sets
        // `temperature: 0`, so the model's side is the same on every run.
        rig.proxy.plan([]);
        cmd.args(["providers", "check", provider]);
        let started = std::time::Instant::now();
        let out = match tokio::time::timeout(PATIENCE, cmd.arg("--recheck").arg("--json").output()).await {
            Ok(out) => out.unwrap(),
            Err(_) => {
                failures.push(format!("{provider}: no result within {PATIENCE:?}"));
                continue;
            }
        };
        eprintln!("providers check {provider}: {:.1?}", started.elapsed());
        let report: Value = match serde_json::from_str(stdout(&out).trim()) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{provider}: not JSON ({e}): {}", stdout(&out)));
                continue;
            }
        };
        let times: Vec<String> = report["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| Some(format!("{} {}ms", r["check"].as_str()?, r["ms"].as_u64()?)))
            .collect();
        eprintln!("providers check {provider}:\n{}\n({})", crate::providers::stable(&report), times.join(", "));
        checks.push((name, stable_real(&report)));
    }
    (checks, if failures.is_empty() { Ok(()) } else { fail(failures.join("\n"), None) })
}

/// The fields of a real server's report that do not depend on what the
/// model wrote: each row's check and status, and what quiver works around.
fn stable_real(report: &Value) -> String {
    let mut lines: Vec<String> = report["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| format!("{:22} {}", r["check"].as_str().unwrap_or_default(), r["status"].as_str().unwrap_or_default()))
        .collect();
    lines.push(format!("works around: {}", report["works_around"]));
    lines.join("\n")
}
