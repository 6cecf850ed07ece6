//! Chat Completions with `deferred_tools = "dispatch"` against the scripted
//! server and a small real engine: a search loads `git_diff`, the model calls
//! it through `call_tool`, and the engine validates the arguments against
//! `git_diff`'s own schema; `tools` never changes.

use quiver_agent::deferred::DeferredTools;
use quiver_agent::run::{AgentLoop, EnginePort, RunLimits, RunStatus};
use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use quiver_agent::{Message, Provider};
use quiver_engine::tool_search::ToolSearch;
use quiver_engine::{
    Audience, Capabilities, Domain, DynTool, Engine, Manifest, Mode, Registry, Risk, ToolContext, ToolFuture,
    ToolOutput, ToolSource, ToolSpec, Workspace,
};
use serde_json::{Value, json};

use crate::support::deepseek;

struct Stub(&'static str, Domain);

impl DynTool for Stub {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.0.into(),
            description: format!("The {} stub.", self.0),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            domain: self.1,
            risk: Risk::Read,
            capabilities: Capabilities::NONE,
            source: ToolSource::Native,
            prompt_snippet: None,
        }
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            Ok(ToolOutput::text(format!("{} ran with {}", self.0, quiver_engine::canonical::to_string(&args))))
        })
    }
}

fn port(dir: &std::path::Path) -> EnginePort {
    let mut registry = Registry::new();
    registry.register(ToolSearch).unwrap();
    registry.register(Stub("read_file", Domain::File)).unwrap();
    registry.register(Stub("git_diff", Domain::Git)).unwrap();
    let engine = std::sync::Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    let audience = Audience { provider: "deepseek".into(), model: Some("deepseek-chat".into()), mode: Mode::Agent };
    let ctx = engine.context(Workspace::new(dir).unwrap(), audience);
    EnginePort::new(engine, ctx)
}

#[tokio::test]
async fn loaded_tools_are_called_through_call_tool_and_validated_against_their_schema() {
    let dir = tempfile::tempdir().unwrap();
    let tools = port(dir.path());
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"select:git_diff"}"#),
        ScriptedTurn::tool_call("c2", "git_diff", r#"{"path":"src"}"#),
        ScriptedTurn::tool_call("c3", "git_diff", r#"{"path":5}"#),
        ScriptedTurn::tool_call("c4", "call_tool", r#"{"arguments":{"path":"src"}}"#),
        ScriptedTurn::text("Done."),
    ]);
    let provider = deepseek(&server).with_deferred_tools(Some(DeferredTools::Dispatch));
    let agent = AgentLoop {
        provider: &provider as &dyn Provider,
        tools: &tools,
        model: "deepseek-chat".into(),
        system: "You are a coding agent.".into(),
        max_output_tokens: None,
        effort: None,
        stream: true,
        limits: RunLimits { max_turns: 10, token_budget: None },
        compaction: None,
    };
    let outcome = agent.run(Vec::new(), "review the diff", &mut |_| {}).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Done);

    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 5);
    let tools_bytes = |r: &Value| quiver_engine::canonical::to_string(&r["tools"]);
    for request in &requests[1..] {
        assert_eq!(tools_bytes(request), tools_bytes(&requests[0]), "`tools` never changes");
    }
    let names: Vec<&str> =
        requests[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(names.last(), Some(&"call_tool"));
    assert!(!names.contains(&"git_diff"));
    crate::support::assert_messages_only_grow(&requests);
    // The search's result carries git_diff's definition; the call goes through call_tool.
    let last = requests[4]["messages"].as_array().unwrap();
    let search = last.iter().find(|m| m["tool_call_id"] == "c1").unwrap()["content"].as_str().unwrap();
    assert!(search.starts_with(r#"[{"description""#) && search.contains(r#""required":["path"]"#), "{search}");
    let call = last.iter().find_map(|m| m["tool_calls"].as_array().and_then(|c| c.first()).filter(|c| c["id"] == "c2"));
    let call = call.unwrap();
    assert_eq!(call["function"]["name"], "call_tool");
    assert_eq!(call["function"]["arguments"], r#"{"arguments":{"path":"src"},"name":"git_diff"}"#);

    // The history keeps the real tool: one call ran, the other was refused by git_diff's schema.
    let result = |id: &str| {
        outcome.messages.iter().find_map(|m| match m {
            Message::Tool { call_id, content, is_error, .. } if call_id == id => Some((content.clone(), *is_error)),
            _ => None,
        })
    };
    assert_eq!(result("c2").unwrap(), (r#"git_diff ran with {"path":"src"}"#.to_string(), false));
    let (refusal, is_error) = result("c3").unwrap();
    assert!(is_error && refusal.contains("path"), "{refusal}");
    // A dispatcher call naming no tool is an error the model can act on.
    let (nameless, is_error) = result("c4").unwrap();
    assert!(is_error && nameless.starts_with("`call_tool` needs `name`"), "{nameless}");
    let Some(Message::Assistant { tool_calls, .. }) = outcome.messages.get(3) else { panic!() };
    assert_eq!(tool_calls[0].name, "git_diff");
}
