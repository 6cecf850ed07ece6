//! `quiver providers check` against the scripted server, well behaved and
//! with the quirks of real servers switched on: the table, the
//! cache per base URL and model, `--recheck`, and the wire using what the
//! check learned from the first request of the next run.

use std::process::Output;

use quiver_agent::Usage;
use quiver_agent::scripted::{Quirk, ScriptedServer, ScriptedTurn};
use serde_json::Value;

use crate::exec::{Env, events, of_type, stderr, stdout};

/// The turns one check takes from the script, in order: plain chat,
/// streaming, the forced call, the answer to its result, streaming with
/// tools (unless the server answers it with nothing), the image, fill in the
/// middle (OpenAI wire only).
fn probe_turns(fim: bool) -> Vec<ScriptedTurn> {
    probe_turns_with(fim, true)
}

/// On the Messages wire: the turns of [`probe_turns`], then the deferred
/// tools check's requests (without and with a deferred tool, then, when it
/// added next to nothing, the same tool as an ordinary one); `answered`: how
/// many of them the server answers (a refusal takes no turn).
fn messages_probe_turns(answered: usize) -> Vec<ScriptedTurn> {
    let mut turns = probe_turns(false);
    turns.extend(std::iter::repeat_with(|| ScriptedTurn::text("hello")).take(answered));
    turns
}

fn probe_turns_with(fim: bool, streams_with_tools: bool) -> Vec<ScriptedTurn> {
    let mut turns = vec![
        ScriptedTurn::text("hello"),
        ScriptedTurn::text("hello"),
        ScriptedTurn::tool_call("call_p1", "probe_echo", r#"{"word":"ping"}"#),
        ScriptedTurn::text("ping"),
    ];
    if streams_with_tools {
        turns.push(ScriptedTurn::tool_call("call_p2", "probe_echo", r#"{"word":"ping"}"#));
    }
    turns.push(ScriptedTurn::text("red"));
    if fim {
        turns.push(ScriptedTurn::text("a + b"));
    }
    turns
}

async fn check(env: &Env, provider: &str, server: &ScriptedServer, extra: &[&str]) -> Output {
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test");
    cmd.args(["providers", "check", provider, "--base-url", &server.base_url(), "--workspace"]);
    cmd.arg(env.ws.path()).args(extra);
    cmd.output().await.unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

/// The stable part of a report: each row's check, status and detail, and
/// what quiver works around (no times, ports or paths).
pub(crate) fn stable(report: &Value) -> String {
    let mut lines: Vec<String> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{:22} {:3}  {}",
                r["check"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["detail"].as_str().unwrap()
            )
        })
        .collect();
    lines.push(format!("works around: {}", report["works_around"]));
    lines.push(format!("learned: {}", report["learned"]));
    lines.join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_well_behaved_server_passes_every_row() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.list_models(&["deepseek-chat", "deepseek-reasoner"]);
    server.script(probe_turns(true));
    let out = check(&env, "deepseek", &server, &["--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    insta::assert_snapshot!("check_well_behaved", stable(&report));
    assert_eq!(server.remaining(), 0, "every probe request was made");
    // The key never appears in the output or the cache.
    let cache = std::fs::read_to_string(report["cache_file"].as_str().unwrap()).unwrap();
    assert!(!cache.contains("sk-test-secret") && !stdout(&out).contains("sk-test-secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn llama_quirks_are_found_cached_and_used_from_the_first_request() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    for quirk in [Quirk::LlamaNullContent, Quirk::EmptyStreamWithTools, Quirk::NoUsage] {
        server.quirk(quirk);
    }
    server.list_models(&["smollm2"]);
    server.script(probe_turns_with(true, false));
    let out = check(&env, "deepseek", &server, &["--model", "smollm2", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    insta::assert_snapshot!("check_llama_quirks", stable(&report));
    assert_eq!(report["cached"], false);
    let probed = server.requests().len();

    // Shown again from the cache: no request.
    let again = check(&env, "deepseek", &server, &["--model", "smollm2"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).contains("(cached; --recheck probes again)"), "{}", stdout(&again));
    assert!(stdout(&again).contains("quiver works around: requests with tools are sent without streaming"));
    assert_eq!(server.requests().len(), probed);

    // The next run sends its requests with tools unstreamed from the first
    // one: no empty stream, no fallback.
    server.script([ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#), ScriptedTurn::text("hello")]);
    let out = env.exec(&server, &["--model", "smollm2", "--json", "Read notes.txt"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = events(&out);
    assert!(of_type(&events, "retrying").is_empty(), "{events:?}");
    let run: Vec<Value> = server.requests()[probed..].iter().map(|r| r.json()).collect();
    assert_eq!(run.len(), 2, "{}", stdout(&out));
    for body in &run {
        assert_eq!(body["stream"], false, "{body}");
    }
    let usage = of_type(&events, "usage");
    assert!(usage.iter().all(|u| u["usage"].is_null()), "{usage:?}");

    // --recheck probes again.
    server.script(probe_turns_with(true, false));
    let out = check(&env, "deepseek", &server, &["--model", "smollm2", "--recheck", "--json"]).await;
    assert_eq!(json_of(&out)["cached"], false);
    assert_eq!(server.remaining(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_wire_behind_a_proxy_that_splits_tool_use_blocks() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::SplitToolUseBlocks);
    server.list_models(&["claude-sonnet-4-5"]);
    server.script(messages_probe_turns(3));
    let out = check(&env, "anthropic", &server, &["--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("check_anthropic_split_blocks", stable(&json_of(&out)));
    assert_eq!(server.remaining(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_is_not_there_is_one_no_and_exit_1() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.args(["providers", "check", "--base-url", &format!("http://127.0.0.1:{port}"), "--workspace"]);
    let out = cmd.arg(env.ws.path()).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.lines().any(|l| l.trim_start().starts_with("reachable") && l.contains(" no ")), "{table}");
    assert_eq!(table.matches(" n/a ").count(), 12, "{table}");
}

/// The deferred tools row of an Anthropic-wire check against `server`.
async fn deferred_row(env: &Env, server: &ScriptedServer) -> Value {
    let out = check(env, "anthropic", server, &["--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(server.remaining(), 0, "every probe request was made");
    let row = report["rows"].as_array().unwrap().iter().find(|r| r["check"] == "deferred_tools").unwrap().clone();
    serde_json::json!({"row": row, "learned": report["learned"], "works_around": report["works_around"]})
}

/// A deferred tools verdict as the snapshots keep it (no time).
fn verdict(found: &Value) -> String {
    let row = &found["row"];
    format!(
        "{} {}\nworks around: {}\nlearned: {}",
        row["status"].as_str().unwrap(),
        row["detail"].as_str().unwrap(),
        found["works_around"],
        found["learned"]
    )
}

/// The deferred tools check's requests: without and with the deferred
/// tool, and the control (the tool as an ordinary one) when it was sent.
fn deferred_requests(server: &ScriptedServer, control: bool) -> (Value, Value) {
    let requests = server.requests();
    let pair = &requests[..requests.len() - usize::from(control)];
    let [.., without, with] = pair else { panic!("fewer than two requests") };
    (without.json(), with.json())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_messages_server_that_keeps_deferred_tools_out_is_ok() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.list_models(&["claude-sonnet-4-5"]);
    server.script(messages_probe_turns(3));
    let found = deferred_row(&env, &server).await;
    insta::assert_snapshot!("deferred_kept_out", verdict(&found));
    assert_eq!(found["row"]["status"], "ok", "{found}");
    let detail = found["row"]["detail"].as_str().unwrap();
    assert!(detail.starts_with("kept out of the prompt: +0 input tokens for a ~"), "{detail}");
    assert_eq!(found["learned"]["deferred_tools"], true, "{found}");
    assert_eq!(found["works_around"], serde_json::json!([]), "{found}");
    // The pair differs by the deferred tool only, sent by the wire's own body builder.
    let (without, mut with) = deferred_requests(&server, true);
    let tools = with["tools"].as_array_mut().unwrap();
    let deferred = tools.pop().unwrap();
    assert_eq!(deferred["defer_loading"], true, "{deferred}");
    let bytes = deferred.to_string().len();
    assert!((2500..4000).contains(&bytes), "a ~3 KB tool, not {bytes} bytes");
    assert_eq!(without, with);
    // The control: the same tool, as an ordinary one.
    let mut control = server.requests().last().unwrap().json();
    let ordinary = control["tools"].as_array_mut().unwrap().pop().unwrap();
    assert!(ordinary.get("defer_loading").is_none() && ordinary["name"] == deferred["name"], "{ordinary}");
    assert_eq!(control, without);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_counts_no_tools_cannot_tell() {
    // A backend whose chat template drops tools (llama-cpp-python's
    // chatml-function-calling without `tool_choice`) reports the same prompt
    // whatever the tools: adding nothing for the deferred tool proves nothing.
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.list_models(&["claude-sonnet-4-5"]);
    let same = Usage { input_tokens: 40, output_tokens: 1, ..Usage::default() };
    let mut turns = probe_turns(false);
    turns.extend(std::iter::repeat_with(|| ScriptedTurn::text("hello").with_usage(same)).take(3));
    server.script(turns);
    let found = deferred_row(&env, &server).await;
    insta::assert_snapshot!("deferred_tools_not_counted", verdict(&found));
    assert_eq!(found["row"]["status"], "n/a", "{found}");
    assert!(found["learned"].get("deferred_tools").is_none(), "{found}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_defer_loading_is_no_learned_and_the_next_run_appends() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::NoDeferLoading);
    server.list_models(&["claude-sonnet-4-5"]);
    server.script(messages_probe_turns(1));
    let found = deferred_row(&env, &server).await;
    insta::assert_snapshot!("deferred_refused", verdict(&found));
    assert_eq!(found["row"]["status"], "no", "{found}");
    let detail = found["row"]["detail"].as_str().unwrap();
    assert!(detail.starts_with("`defer_loading` is refused: HTTP 400"), "{detail}");
    assert!(detail.contains("Extra inputs are not permitted"), "{detail}");
    assert_eq!(found["learned"]["deferred_tools"], false, "{found}");
    let around = found["works_around"].to_string();
    assert!(around.contains("loaded tools are appended to `tools`"), "{around}");

    // The next run on that server appends: no `defer_loading` from the first request.
    let probed = server.requests().len();
    server.script([ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#), ScriptedTurn::text("hello")]);
    let out = env.exec_anthropic(&server, "Read notes.txt").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run: Vec<Value> = server.requests()[probed..].iter().map(|r| r.json()).collect();
    assert_eq!(run.len(), 2, "{}", stdout(&out));
    for body in &run {
        assert!(!body["tools"].to_string().contains("defer_loading"), "{body}");
    }

    // A setting wins over what the check learned.
    let config = "[providers.anthropic]\ndeferred_tools = \"defer\"\n";
    std::fs::write(env.config.path().join("config.toml"), config).unwrap();
    server.clear_quirks();
    let probed = server.requests().len();
    server.script([ScriptedTurn::text("hello")]);
    let out = env.exec_anthropic(&server, "Read notes.txt").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = server.requests()[probed].json();
    assert!(first["tools"].to_string().contains("\"defer_loading\":true"), "{first}");
}

#[tokio::test(flavor = "multi_thread")]
async fn deferred_tools_counted_as_prompt_are_no_and_learned() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::DeferredAsPrompt);
    server.list_models(&["claude-sonnet-4-5"]);
    server.script(messages_probe_turns(2));
    let found = deferred_row(&env, &server).await;
    insta::assert_snapshot!("deferred_counted_as_prompt", verdict(&found));
    assert_eq!(found["row"]["status"], "no", "{found}");
    let detail = found["row"]["detail"].as_str().unwrap();
    assert!(detail.starts_with("accepted, but counted as prompt: +"), "{detail}");
    assert!(detail.ends_with("it reaches the model as an ordinary tool"), "{detail}");
    // The server counts four bytes a token, as the estimate does: the whole tool was added.
    let (_, with) = deferred_requests(&server, false);
    let mut tool = with["tools"].as_array().unwrap().last().unwrap().clone();
    tool.as_object_mut().unwrap().remove("defer_loading");
    let estimate = quiver_engine::canonical::to_string(&tool).len() / 4;
    assert!(detail.contains(&format!("~{estimate}-token deferred tool")), "{detail}");
    assert_eq!(found["learned"]["deferred_tools"], false, "{found}");
    assert!(found["works_around"].to_string().contains("loaded tools are appended"), "{found}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_usage_the_deferred_tools_row_cannot_tell() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::NoUsage);
    server.list_models(&["claude-sonnet-4-5"]);
    server.script(messages_probe_turns(2));
    let found = deferred_row(&env, &server).await;
    insta::assert_snapshot!("deferred_no_usage", verdict(&found));
    assert_eq!(found["row"]["status"], "n/a", "{found}");
    assert!(found["row"]["detail"].as_str().unwrap().starts_with("cannot tell"), "{found}");
    assert!(found["learned"].get("deferred_tools").is_none(), "{found}");
}
