//! `quiver exec` over the Responses wire (`--provider openai`, a model with
//! tool search) end to end against the scripted server, which refuses what
//! the API refuses: the client-executed `tool_search` loads a tool without
//! changing `tools`, reasoning comes back encrypted, and a resumed session's
//! input extends the last one.

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use serde_json::Value;

use crate::exec::{Env, events, of_type, stderr, stdout};

async fn exec_openai(env: &Env, server: &ScriptedServer, args: &[&str]) -> std::process::Output {
    let mut cmd = env.command(None);
    cmd.env("OPENAI_API_KEY", "sk-test-secret")
        .args(["exec", "--provider", "openai", "--model", "gpt-5.4", "--base-url"])
        .arg(server.base_url())
        .arg("--workspace")
        .arg(env.ws.path());
    cmd.args(args).output().await.unwrap()
}

fn input(request: &Value) -> Vec<Value> {
    request["input"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn search_loads_through_tool_search_output_and_the_tools_never_change() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"select:project_map"}"#)
            .with_reasoning("The map tool is deferred."),
        ScriptedTurn::tool_call("c2", "project_map", "{}"),
        ScriptedTurn::text("Mapped."),
    ]);
    let out = exec_openai(&env, &server, &["--json", "Map the project."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let ended: Vec<(&str, bool)> =
        of_type(&evs, "tool_call_ended").iter().map(|e| (e["name"].as_str().unwrap(), e["error"].is_null())).collect();
    assert_eq!(ended, [("tool_search", true), ("project_map", true)]);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.path == "/responses"), "{:?}", requests[0].path);
    let bodies: Vec<Value> = requests.iter().map(|r| r.json()).collect();
    // One `tools` array for the whole session, with the client-executed search.
    let tools = quiver_engine::canonical::to_string(&bodies[0]["tools"]);
    for body in &bodies {
        assert_eq!(quiver_engine::canonical::to_string(&body["tools"]), tools);
        assert_eq!(body["store"], false);
        assert_eq!(body["include"][0], "reasoning.encrypted_content");
    }
    let search: Vec<&Value> =
        bodies[0]["tools"].as_array().unwrap().iter().filter(|t| t["type"] == "tool_search").collect();
    assert_eq!(search.len(), 1);
    assert_eq!(search[0]["execution"], "client");
    assert!(!tools.contains("\"name\":\"project_map\""));
    // The load is a tool_search_output carrying the definition, after its call.
    let second = input(&bodies[1]);
    let kinds: Vec<&str> = second.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "reasoning", "tool_search_call", "tool_search_output"]);
    assert_eq!(second[1]["encrypted_content"], format!("scripted-encrypted:{}", "The map tool is deferred.".len()));
    assert_eq!(second[3]["tools"][0]["name"], "project_map");
    assert_eq!(second[3]["tools"][0]["defer_loading"], true);
    // Every request's input extends the previous one's, item for item.
    for pair in bodies.windows(2) {
        let (a, b) = (input(&pair[0]), input(&pair[1]));
        assert_eq!(b[..a.len()], a[..]);
    }

    // Resume: the history (reasoning items included) comes back whole.
    let transcript = env.only_session();
    let id = transcript.file_stem().unwrap().to_str().unwrap().to_string();
    server.script([ScriptedTurn::text("Resumed.")]);
    let out = exec_openai(&env, &server, &["resume", &id, "And now?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Resumed.\n");
    let resumed = server.requests().last().unwrap().json();
    let (before, after) = (input(&bodies[2]), input(&resumed));
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(quiver_engine::canonical::to_string(&resumed["tools"]), tools);
}
