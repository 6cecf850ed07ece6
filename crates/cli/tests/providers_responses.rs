//! `quiver providers check` for a Responses provider (`--provider openai`):
//! the chat rows speak Chat Completions, and the deferred tools row sends
//! the client-executed `tool_search` with a `tool_search_output` to
//! `/responses` (OpenAI's "Tool search" guide), against the scripted server,
//! which refuses what the API refuses; and a server that refuses the search
//! tool is learned, so the next run sends `tool_search` as a function.

use std::process::Output;

use quiver_agent::scripted::{Quirk, ScriptedServer, ScriptedTurn};
use serde_json::Value;

use crate::exec::{Env, events, of_type, stderr, stdout};
use crate::providers::stable;

/// The chat rows' turns (plain, streaming, forced call, its answer,
/// streaming with tools, the image); a Responses provider has no FIM.
fn chat_turns() -> Vec<ScriptedTurn> {
    vec![
        ScriptedTurn::text("hello"),
        ScriptedTurn::text("hello"),
        ScriptedTurn::tool_call("call_p1", "probe_echo", r#"{"word":"ping"}"#),
        ScriptedTurn::text("ping"),
        ScriptedTurn::tool_call("call_p2", "probe_echo", r#"{"word":"ping"}"#),
        ScriptedTurn::text("red"),
    ]
}

/// The model calling the tool only the probe's `tool_search_output` delivered.
fn calls_the_delivered_tool() -> ScriptedTurn {
    ScriptedTurn::tool_call("call_r", "probe_deferred_report", r#"{"repository":"quiver/quiver"}"#)
}

async fn check(env: &Env, server: &ScriptedServer) -> Output {
    let mut cmd = env.command(None);
    cmd.env("OPENAI_API_KEY", "sk-test-secret");
    cmd.args(["providers", "check", "openai", "--model", "gpt-5.4", "--json", "--base-url", &server.base_url()]);
    cmd.arg("--workspace").arg(env.ws.path()).output().await.unwrap()
}

fn report(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

fn deferred_row(report: &Value) -> String {
    let rows = report["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["check"] == "deferred_tools").unwrap();
    format!("{} {}\nlearned: {}", row["status"].as_str().unwrap(), row["detail"].as_str().unwrap(), report["learned"])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_runs_the_client_tool_search_is_ok() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.list_models(&["gpt-5.4"]);
    let mut turns = chat_turns();
    turns.push(calls_the_delivered_tool());
    server.script(turns);
    let report = report(&check(&env, &server).await);
    insta::assert_snapshot!("check_responses_tool_search", stable(&report));
    assert_eq!(server.remaining(), 0, "every probe request was made");

    // The probe's request, as the wire renders a loading turn: the search
    // tool in `tools`, the delivered tool only in the output.
    let requests = server.requests();
    let probe = requests.last().unwrap();
    assert_eq!(probe.path, "/responses");
    assert!(requests[..requests.len() - 1].iter().all(|r| r.path == "/chat/completions"));
    let body = probe.json();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!((&tools[0]["type"], &tools[0]["execution"]), (&"tool_search".into(), &"client".into()));
    insta::assert_json_snapshot!("responses_tool_search_probe_input", body["input"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_does_not_call_the_delivered_tool_cannot_tell() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.list_models(&["gpt-5.4"]);
    let mut turns = chat_turns();
    turns.push(ScriptedTurn::text("I found a report tool."));
    server.script(turns);
    let report = report(&check(&env, &server).await);
    insta::assert_snapshot!("responses_tool_search_not_called", deferred_row(&report));
    assert_eq!(report["learned"].get("tool_search"), None, "nothing learned from a model's choice");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_tool_search_is_no_learned_and_the_next_run_sends_a_function() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::NoToolSearch);
    server.list_models(&["gpt-5.4"]);
    // The refused probe takes no turn.
    server.script(chat_turns());
    let report = report(&check(&env, &server).await);
    insta::assert_snapshot!("responses_tool_search_refused", deferred_row(&report));
    assert_eq!(report["learned"]["tool_search"], false);
    assert_eq!(server.remaining(), 0);
    let table = {
        let mut cmd = env.command(None);
        cmd.env("OPENAI_API_KEY", "sk-test-secret");
        cmd.args(["providers", "check", "openai", "--model", "gpt-5.4", "--base-url", &server.base_url()]);
        stdout(&cmd.arg("--workspace").arg(env.ws.path()).output().await.unwrap())
    };
    assert!(table.contains("`tool_search` is sent as an ordinary function"), "{table}");

    // The next run (a tool-search model) sends `tool_search` as a function,
    // which the server takes, and appends the loaded tool.
    let probed = server.requests().len();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"select:project_map"}"#),
        ScriptedTurn::tool_call("c2", "project_map", "{}"),
        ScriptedTurn::text("Mapped."),
    ]);
    let mut exec = env.command(None);
    exec.env("OPENAI_API_KEY", "sk-test-secret")
        .args(["exec", "--provider", "openai", "--model", "gpt-5.4", "--json", "--base-url", &server.base_url()])
        .arg("--workspace")
        .arg(env.ws.path())
        .arg("Map the project.");
    let out = exec.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ended = of_type(&events(&out), "tool_call_ended").len();
    assert_eq!(ended, 2, "{}", stdout(&out));
    let run: Vec<Value> = server.requests()[probed..].iter().map(|r| r.json()).collect();
    assert_eq!(run.len(), 3);
    for body in &run {
        let tools = body["tools"].as_array().unwrap();
        assert!(tools.iter().all(|t| t["type"] == "function"), "{body}");
        assert!(tools.iter().any(|t| t["name"] == "tool_search"));
    }
    let last = run[2]["tools"].as_array().unwrap();
    assert!(last.iter().any(|t| t["name"] == "project_map"), "the loaded tool is appended");
}
