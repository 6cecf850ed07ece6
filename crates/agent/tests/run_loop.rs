//! The turn loop against the scripted server and a small real engine: the
//! engine's own `tool_search`, stub native tools, and the built-in manifest
//! (so `todo_write` is the deprecated alias of `checklist_write`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use quiver_agent::run::{AgentLoop, EnginePort, RunEvent, RunLimits, RunStatus};
use quiver_agent::scripted::{Quirk, ScriptedServer, ScriptedTurn};
use quiver_agent::{Message, Provider, Usage};
use quiver_engine::tool_search::ToolSearch;
use quiver_engine::{
    Audience, Capabilities, Domain, DynTool, Engine, Manifest, Mode, Registry, Risk, ToolContext, ToolFuture,
    ToolOutput, ToolSource, ToolSpec, Workspace,
};
use serde_json::{Value, json};

use crate::support::deepseek;

/// Counts calls in flight, to see which ran concurrently.
#[derive(Default)]
struct Flight {
    now: AtomicUsize,
    max: AtomicUsize,
    writes_saw_others: AtomicUsize,
}

struct Stub {
    name: &'static str,
    domain: Domain,
    risk: Risk,
    flight: Arc<Flight>,
}

impl DynTool for Stub {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: format!("The {} stub.", self.name),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"},
                "items": {"type": "array"}}}),
            domain: self.domain,
            risk: self.risk,
            capabilities: Capabilities::NONE,
            source: ToolSource::Native,
            prompt_snippet: None,
        }
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let others = self.flight.now.fetch_add(1, Ordering::SeqCst);
            if self.risk != Risk::Read && others > 0 {
                self.flight.writes_saw_others.fetch_add(1, Ordering::SeqCst);
            }
            self.flight.max.fetch_max(others + 1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.flight.now.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::text(format!("{} ran with {}", self.name, quiver_engine::canonical::to_string(&args))))
        })
    }
}

fn port(flight: &Arc<Flight>, dir: &std::path::Path) -> EnginePort {
    let mut registry = Registry::new();
    registry.register(ToolSearch).unwrap();
    for (name, domain, risk) in [
        ("read_file", Domain::File, Risk::Read),
        ("grep_files", Domain::Search, Risk::Read),
        ("checklist_write", Domain::Planning, Risk::Write),
        ("git_diff", Domain::Git, Risk::Read),
    ] {
        registry.register(Stub { name, domain, risk, flight: flight.clone() }).unwrap();
    }
    let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    let audience = Audience { provider: "deepseek".into(), model: Some("deepseek-chat".into()), mode: Mode::Agent };
    let ctx = engine.context(Workspace::new(dir).unwrap(), audience);
    EnginePort::new(engine, ctx)
}

fn agent<'a>(provider: &'a dyn Provider, tools: &'a EnginePort) -> AgentLoop<'a> {
    AgentLoop {
        provider,
        tools,
        model: "deepseek-chat".into(),
        system: "You are a coding agent.".into(),
        max_output_tokens: Some(2048),
        effort: None,
        stream: true,
        limits: RunLimits { max_turns: 10, token_budget: None },
        compaction: None,
    }
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn search_load_call_deprecated_alias_then_answer() {
    let dir = tempfile::tempdir().unwrap();
    let flight = Arc::new(Flight::default());
    let tools = port(&flight, dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"select:git_diff"}"#),
        ScriptedTurn::tool_call("c2", "git_diff", r#"{"path":"src"}"#).with_reasoning("Now the diff."),
        ScriptedTurn::tool_call("c3", "todo_write", r#"{"items":[{"content":"ship","status":"pending"}]}"#),
        ScriptedTurn::tool_call("c4", "no_such_tool", "{}").and_call("c5", "read_file", r#"{"path": "a.rs"#),
        ScriptedTurn::text("All done."),
    ]);
    let provider = deepseek(&server);
    let mut events = Vec::new();
    let mut sink = |e: RunEvent| events.push(e);
    let outcome = agent(&provider, &tools).run(Vec::new(), "review the diff", &mut sink).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Done);
    assert_eq!(outcome.final_text, "All done.");
    assert_eq!(outcome.turns, 5);

    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 5);
    // The head never changes; the loaded tool joins the tail after the search.
    let head = tool_names(&requests[0]);
    assert!(head.contains(&"tool_search".to_string()) && !head.contains(&"git_diff".to_string()), "{head:?}");
    for request in &requests[1..] {
        let names = tool_names(request);
        assert_eq!(names[..head.len()], head[..]);
        assert_eq!(names[head.len()..], ["git_diff".to_string()]);
        let tools = request["tools"].as_array().unwrap();
        assert_eq!(
            quiver_engine::canonical::to_string(&json!(tools[..head.len()])),
            quiver_engine::canonical::to_string(&requests[0]["tools"])
        );
    }
    // Each request's messages extend the previous request's, byte for byte.
    crate::support::assert_messages_only_grow(&requests);
    let last = requests[4]["messages"].as_array().unwrap();
    let tool_text =
        |id: &str| last.iter().find(|m| m["tool_call_id"] == id).unwrap()["content"].as_str().unwrap().to_string();
    assert!(tool_text("c1").contains("git_diff"));
    assert!(tool_text("c2").starts_with("git_diff ran with"));
    let deprecated: Value = serde_json::from_str(&tool_text("c3")).unwrap();
    assert_eq!(deprecated["metadata"]["_deprecation"]["use_instead"], "checklist_write");
    assert!(deprecated["content"].as_str().unwrap().starts_with("checklist_write ran with"));
    assert!(tool_text("c4").contains("unknown tool `no_such_tool`"), "{}", tool_text("c4"));
    assert!(tool_text("c5").contains("not valid JSON"), "{}", tool_text("c5"));

    // Events: the session start names the head, each tool call is bracketed.
    assert!(matches!(&events[0], RunEvent::SessionStarted { head_hash, .. } if head_hash.starts_with("sha256:")));
    let ended: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCallEnded { name, error, .. } => Some((name.clone(), error.is_some())),
            _ => None,
        })
        .collect();
    let expected = [
        ("tool_search", false),
        ("git_diff", false),
        ("todo_write", false),
        ("no_such_tool", true),
        ("read_file", true),
    ];
    assert_eq!(ended, expected.map(|(n, e)| (n.to_string(), e)).to_vec());
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ReasoningSummary { summary, .. } if summary == "Now the diff."))
    );
    assert!(matches!(events.last(), Some(RunEvent::SessionEnded { status: RunStatus::Done, turns: 5, .. })));
    let cached: u64 = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Usage { usage, .. } => usage.map(|u| u.cache_hit_tokens),
            _ => None,
        })
        .sum();
    assert!(cached > 0, "later requests hit the prefix cache");
}

#[tokio::test]
async fn reads_of_one_turn_run_together_and_writes_alone_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let flight = Arc::new(Flight::default());
    let tools = port(&flight, dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("r1", "read_file", r#"{"path":"a"}"#)
            .and_call("r2", "grep_files", r#"{"path":"b"}"#)
            .and_call("w1", "checklist_write", r#"{"items":[]}"#)
            .and_call("r3", "read_file", r#"{"path":"c"}"#),
        ScriptedTurn::text("ok"),
    ]);
    let provider = deepseek(&server);
    let mut sink = |_: RunEvent| {};
    let outcome = agent(&provider, &tools).run(Vec::new(), "go", &mut sink).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Done);
    assert_eq!(flight.max.load(Ordering::SeqCst), 2, "the two reads before the write overlapped");
    assert_eq!(flight.writes_saw_others.load(Ordering::SeqCst), 0, "the write ran alone");
    let ids: Vec<&str> = outcome
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["r1", "r2", "w1", "r3"]);
}

#[tokio::test]
async fn max_turns_and_token_budget_stop_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let tools = port(&Arc::new(Flight::default()), dir.path());
    let server = ScriptedServer::start().await.unwrap();
    let call = || ScriptedTurn::tool_call("c", "read_file", r#"{"path":"a"}"#);
    server.script([call(), call()]);
    let provider = deepseek(&server);
    let mut sink = |_: RunEvent| {};
    let mut looping = agent(&provider, &tools);
    looping.limits = RunLimits { max_turns: 2, token_budget: None };
    let outcome = looping.run(Vec::new(), "loop", &mut sink).await.unwrap();
    assert_eq!((outcome.status, outcome.turns), (RunStatus::MaxTurns, 2));
    assert_eq!(server.remaining(), 0);

    let big = Usage { input_tokens: 900, output_tokens: 200, ..Default::default() };
    server.script([call().with_usage(big), call()]);
    looping.limits = RunLimits { max_turns: 10, token_budget: Some(1000) };
    let outcome = looping.run(Vec::new(), "spend", &mut sink).await.unwrap();
    assert_eq!((outcome.status, outcome.turns), (RunStatus::TokenBudget, 1));
}

#[tokio::test]
async fn a_provider_failure_ends_the_session_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let tools = port(&Arc::new(Flight::default()), dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.push(ScriptedTurn::status(401, None));
    let provider = deepseek(&server);
    let mut events = Vec::new();
    let mut sink = |e: RunEvent| events.push(e);
    let err = agent(&provider, &tools).run(Vec::new(), "hi", &mut sink).await.unwrap_err();
    assert_eq!(err.to_string(), "deepseek: HTTP 401: scripted status 401");
    assert!(matches!(events.last(), Some(RunEvent::SessionEnded { status: RunStatus::Failed(_), .. })));
}

fn search_then_call_then_done() -> [ScriptedTurn; 3] {
    [
        ScriptedTurn::tool_call("t1", "tool_search", r#"{"query":"select:git_diff"}"#),
        ScriptedTurn::tool_call("t2", "git_diff", "{}"),
        ScriptedTurn::text("done"),
    ]
}

#[tokio::test]
async fn the_anthropic_wire_sends_loadable_tools_deferred_and_loads_by_tool_reference() {
    let dir = tempfile::tempdir().unwrap();
    let tools = port(&Arc::new(Flight::default()), dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.script(search_then_call_then_done());
    let provider = crate::support::anthropic(&server);
    let mut sink = |_: RunEvent| {};
    let outcome = agent(&provider, &tools).run(Vec::new(), "diff", &mut sink).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Done);
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    let first = requests[0]["tools"].as_array().unwrap();
    for later in &requests[1..] {
        assert_eq!(later["tools"].as_array().unwrap(), first, "the tool list never changes");
    }
    let flagged: Vec<&str> =
        first.iter().filter(|t| t["defer_loading"] == json!(true)).filter_map(|t| t["name"].as_str()).collect();
    assert!(flagged.contains(&"git_diff"), "{flagged:?}");
    let head = first.iter().take_while(|t| t.get("defer_loading").is_none()).count();
    assert_eq!(first[head - 1]["cache_control"], json!({"type": "ephemeral"}));
    assert!(first[head..].iter().all(|t| t["defer_loading"] == json!(true)));
    // The search's result is the reference alone: the definition it brings
    // says what was loaded, and nothing else matched a `select:`, so quiver
    // adds no byte of its own.
    let user = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(user["content"][0]["type"], "tool_result");
    assert_eq!(user["content"][0]["content"], json!([{"type": "tool_reference", "tool_name": "git_diff"}]));
    assert_eq!(user["content"].as_array().unwrap().len(), 1, "{user}");
}

#[tokio::test]
async fn the_anthropic_wire_appends_loaded_tools_when_set_to_append() {
    let dir = tempfile::tempdir().unwrap();
    let tools = port(&Arc::new(Flight::default()), dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.script(search_then_call_then_done());
    let provider =
        crate::support::anthropic(&server).with_deferred_tools(Some(quiver_agent::deferred::DeferredTools::Append));
    let mut sink = |_: RunEvent| {};
    let outcome = agent(&provider, &tools).run(Vec::new(), "diff", &mut sink).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Done);
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    let first = requests[0]["tools"].as_array().unwrap();
    let last = requests[2]["tools"].as_array().unwrap();
    assert_eq!(last.len(), first.len() + 1);
    assert_eq!(first[..], last[..first.len()], "the head is unchanged, breakpoint included");
    assert_eq!(first.last().unwrap()["cache_control"], json!({"type": "ephemeral"}));
    assert!(first.iter().all(|t| t.get("input_schema").is_some() && t.get("defer_loading").is_none()));
    assert_eq!(last.last().unwrap()["name"], "git_diff");
    assert!(last.last().unwrap().get("cache_control").is_none());
    assert!(!requests[1].to_string().contains("tool_reference"));
}

/// llama-cpp-python as observed: it refuses `content: null`, sends
/// an empty 200 stream for tools without `tool_choice`, reports no usage, and
/// repeats id and name on every delta. A tool round trip must still work.
#[tokio::test]
async fn a_tool_round_trip_against_a_llama_cpp_python_like_server() {
    let dir = tempfile::tempdir().unwrap();
    let flight = Arc::new(Flight::default());
    let tools = port(&flight, dir.path());
    let server = ScriptedServer::start().await.unwrap();
    for quirk in [Quirk::LlamaNullContent, Quirk::EmptyStreamWithTools, Quirk::NoUsage, Quirk::RepeatCallHeader] {
        server.quirk(quirk);
    }
    server
        .script([ScriptedTurn::tool_call("call_1", "read_file", r#"{"path":"a.rs"}"#), ScriptedTurn::text("Read it.")]);
    let provider = deepseek(&server);
    let mut events = Vec::new();
    let mut sink = |e: RunEvent| events.push(e);
    let outcome = agent(&provider, &tools).run(Vec::new(), "read a.rs", &mut sink).await.unwrap();
    assert_eq!((outcome.status, outcome.final_text.as_str()), (RunStatus::Done, "Read it."));
    assert_eq!((outcome.usage, outcome.usage_unreported), (Usage::default(), 2));
    // One streamed try that came back empty, then unstreamed from there on.
    let requests = server.requests();
    let streamed: Vec<bool> = requests.iter().map(|r| r.json()["stream"].as_bool().unwrap()).collect();
    assert_eq!(streamed, [true, false, false]);
    assert!(requests[2].json()["messages"][2].get("content").is_none());
    let usages: Vec<Value> = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Usage { .. }))
        .map(|e| quiver_agent::exec::render::json_event(e).unwrap())
        .collect();
    assert_eq!(usages.len(), 2);
    for usage in &usages {
        assert_eq!((&usage["usage"], &usage["total"]), (&Value::Null, &Value::Null), "{usage}");
    }
    assert_eq!(usages[1]["unreported_requests"], 2);
    let ended = quiver_agent::exec::render::json_event(events.last().unwrap()).unwrap();
    assert_eq!((&ended["usage"], &ended["unreported_requests"]), (&Value::Null, &json!(2)), "{ended}");
}

/// LiteLLM's Anthropic adapter in front of such a server: one call arrives as
/// many `tool_use` blocks with one id. It runs once and goes back once.
#[tokio::test]
async fn a_call_split_over_tool_use_blocks_runs_once_and_goes_back_once() {
    let dir = tempfile::tempdir().unwrap();
    let flight = Arc::new(Flight::default());
    let tools = port(&flight, dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.quirk(Quirk::SplitToolUseBlocks);
    let args = r#"{"path":"src/some/rather/long/path/lib.rs"}"#;
    server.script([ScriptedTurn::tool_call("toolu_1", "read_file", args), ScriptedTurn::text("done")]);
    let provider = crate::support::anthropic(&server);
    let mut events = Vec::new();
    let mut sink = |e: RunEvent| events.push(e);
    let outcome = agent(&provider, &tools).run(Vec::new(), "read it", &mut sink).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Done);
    let ran: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ToolCallEnded { .. })).collect();
    assert_eq!(ran.len(), 1);
    assert!(matches!(ran[0], RunEvent::ToolCallEnded { id, error: None, .. } if id == "toolu_1"), "{ran:?}");
    let second = server.requests()[1].json();
    let blocks = second["messages"][1]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0]["input"], json!({"path": "src/some/rather/long/path/lib.rs"}));
    let results = second["messages"][2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], "toolu_1");
}

#[tokio::test]
async fn a_responses_session_routes_every_request_by_one_prompt_cache_key() {
    use quiver_agent::responses::{ResponsesDialect, ResponsesProvider};
    use quiver_agent::run::ToolPort;
    let dir = tempfile::tempdir().unwrap();
    let flight = Arc::new(Flight::default());
    let server = ScriptedServer::start().await.unwrap();
    let provider = ResponsesProvider::new(
        "openai",
        &server.base_url(),
        quiver_agent::ApiKey::new("sk-test"),
        ResponsesDialect::default(),
        crate::support::fast_options(),
    )
    .unwrap();
    let mut keys = Vec::new();
    for _session in 0..2 {
        let tools = port(&flight, dir.path());
        server.script([ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"a.rs"}"#), ScriptedTurn::text("Done.")]);
        let before = server.requests().len();
        let outcome = AgentLoop { model: "gpt-5.4".into(), ..agent(&provider, &tools) }
            .run(Vec::new(), "read a.rs", &mut |_| {})
            .await
            .unwrap();
        assert_eq!(outcome.status, RunStatus::Done);
        let sent: Vec<Value> =
            server.requests()[before..].iter().map(|r| r.json()["prompt_cache_key"].clone()).collect();
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0], sent[1], "one key for the whole session");
        let key = sent[0].as_str().unwrap().to_string();
        assert!(key.len() <= 64 && key.starts_with("quiver-"), "{key}");
        assert!(!key.contains(&tools.session_id()), "a digest, not the session id");
        keys.push(key);
    }
    assert_ne!(keys[0], keys[1], "each session its own key");
}
