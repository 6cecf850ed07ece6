//! One vocabulary for tool inputs, over quiver's whole surface (native, sub-agent,
//! RLM and `mcp_*` tools; the tools of MCP servers are theirs, not ours): a
//! shell job is `job_id`, a durable task `task_id`, a line window
//! `offset`/`limit` (1-based first line, count of lines), every count
//! `limit`, every timeout `*_ms`, a sub-agent's role `agent_type`. Earlier
//! words are hidden input aliases (`quiver_engine::InputAlias`): never in a
//! schema, still accepted from recorded calls.

use std::sync::Arc;

use quiver_engine::{Audience, Domain, Engine, EngineHost, InputAlias, Manifest, Mode, Workspace};
use serde_json::{Map, Value, json};

/// The surface as the CLI composes it, with the durable store in `work`.
fn engine(work: &std::path::Path) -> Arc<Engine> {
    let options = quiver_tools::NativeOptions { work_dir: Some(work.to_path_buf()), ..Default::default() };
    let mut registry = quiver_tools::native_registry_with(&options).unwrap();
    quiver_agent::subagent::register_tools(&quiver_agent::subagent::AgentHub::new(), &mut registry).unwrap();
    let providers = vec![
        quiver_mcp::McpProvider::shared(&quiver_mcp::McpManager::empty()),
        quiver_rlm::RlmProvider::shared(quiver_rlm::ChildModel::unavailable("no model in this test")),
    ];
    EngineHost::new(registry, Manifest::builtin().unwrap(), providers).unwrap().engine()
}

/// Words an input must not use, and the word to use instead.
const REPLACED: &[(&str, &str)] = &[
    ("n", "limit"),
    ("max_results", "limit"),
    ("max_entries", "limit"),
    ("max_items", "limit"),
    ("max_count", "limit"),
    ("count", "limit"),
    ("top_k", "limit"),
    ("events", "limit"),
    ("runs", "limit"),
    ("start_line", "offset"),
    ("end_line", "limit"),
    ("line", "offset"),
    ("task", "task_id"),
    ("type", "agent_type"),
    ("timeout", "timeout_ms"),
];

/// `start`/`end` stay on `handle_read`'s `slice` only: a Python slice of items
/// or characters (negative from the end), not a line window.
const INDEX_SLICE: &str = "handle_read";

/// Every property of an object schema, nested ones included, with its path.
fn properties<'a>(schema: &'a Value, path: &str, out: &mut Vec<(String, &'a Map<String, Value>, &'a Value)>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return };
    for (name, property) in props {
        let at = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
        out.push((at.clone(), props, property));
        properties(property, &at, out);
        if let Some(items) = property.get("items") {
            properties(items, &at, out);
        }
    }
}

/// What is wrong with one tool's input words; empty when nothing is.
fn vocabulary_problems(name: &str, domain: Domain, description: &str, schema: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut all = Vec::new();
    properties(schema, "", &mut all);
    let top = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for (path, siblings, property) in &all {
        let word = path.rsplit('.').next().unwrap_or(path);
        if !word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
            wrong.push(format!("{name}.{path}: not snake_case"));
        }
        if let Some((_, instead)) = REPLACED.iter().find(|(old, _)| *old == word) {
            wrong.push(format!("{name}.{path}: say `{instead}`"));
        }
        if word.ends_with("_secs") || word.ends_with("_seconds") || word.ends_with("_sec") {
            wrong.push(format!("{name}.{path}: a timeout is in ms (`*_ms`)"));
        }
        if word.contains("timeout") && !word.ends_with("_ms") {
            wrong.push(format!("{name}.{path}: a timeout is `*_ms`"));
        }
        if (word == "start" || word == "end") && name != INDEX_SLICE {
            wrong.push(format!("{name}.{path}: a window is `offset` (1-based) and `limit`"));
        }
        if word == "offset" && !siblings.contains_key("limit") {
            wrong.push(format!("{name}.{path}: `offset` without `limit`"));
        }
        let described = property.get("description").and_then(Value::as_str).unwrap_or_default();
        wrong.extend(former_words_in(&format!("{name}.{path} (description)"), described));
    }
    // A bare `id` does not say whose: a durable task, a shell job, an
    // automation or an attempt are each `<kind>_id`, as results name them.
    if top.contains_key("id") {
        wrong.push(format!("{name}.id: say whose (`task_id`, `job_id`, `automation_id`, ...)"));
    }
    // On a shell tool `task_id` can only be the durable task, beside the job's `job_id`.
    if domain == Domain::Shell && top.contains_key("task_id") && !top.contains_key("job_id") {
        wrong.push(format!("{name}.task_id: a shell job is `job_id`"));
    }
    if domain == Domain::Shell && !top.contains_key("task_id") && mentions(description, "task_id") {
        wrong.push(format!("{name} (description): a shell job is a `job_id`"));
    }
    wrong.extend(former_words_in(&format!("{name} (description)"), description));
    wrong
}

/// Whole-word mentions of argument names no tool takes any more.
fn former_words_in(at: &str, text: &str) -> Vec<String> {
    [
        "max_results",
        "max_entries",
        "start_line",
        "end_line",
        "eval_timeout_secs",
        "sub_query_timeout_secs",
        "includeLoaded",
    ]
    .iter()
    .filter(|word| mentions(text, word))
    .map(|word| format!("{at}: names `{word}`"))
    .collect()
}

fn mentions(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after)
    })
}

#[test]
fn every_built_in_tool_input_uses_the_one_vocabulary() {
    let work = tempfile::tempdir().unwrap();
    let engine = engine(work.path());
    let mut checked = 0;
    let mut wrong = Vec::new();
    for tool in engine.registry().iter().filter(|t| t.spec.is_native()) {
        checked += 1;
        wrong.extend(vocabulary_problems(
            &tool.spec.name,
            tool.spec.domain,
            &tool.spec.description,
            &tool.spec.input_schema,
        ));
    }
    // The whole surface: the tools crate's, the sub-agents', RLM's and the `mcp_*` tools.
    for name in ["exec_shell_wait", "task_read", "agent_open", "rlm_configure", "mcp_call", "tool_search"] {
        assert!(engine.registry().get(name).is_some(), "{name} is not in the surface under test");
    }
    assert!(checked > 60, "only {checked} tools checked");
    assert!(wrong.is_empty(), "inputs outside the vocabulary:\n{}", wrong.join("\n"));
}

/// The check itself: each rule catches what it is for.
#[test]
fn the_vocabulary_check_catches_each_former_word() {
    let schema = |props: Value| json!({"type": "object", "properties": props});
    let cases = [
        ("exec_shell_wait", Domain::Shell, schema(json!({"task_id": {"type": "string"}}))),
        ("grep_files", Domain::Search, schema(json!({"max_results": {"type": "integer"}}))),
        ("retrieve_tool_result", Domain::Evidence, schema(json!({"n": {"type": "integer"}}))),
        ("rlm_configure", Domain::Subagent, schema(json!({"eval_timeout_secs": {"type": "integer"}}))),
        ("fim_edit", Domain::File, schema(json!({"start_line": {"type": "integer"}}))),
        ("retrieve_tool_result", Domain::Evidence, schema(json!({"start": {}, "end": {}}))),
        ("read_file", Domain::File, schema(json!({"offset": {"type": "integer"}}))),
        ("task_read", Domain::Planning, schema(json!({"id": {"type": "string"}}))),
        ("automation_pause", Domain::Planning, schema(json!({"id": {"type": "string"}}))),
        ("task_gate_run", Domain::Diagnostics, schema(json!({"task": {"type": "string"}}))),
        ("agent_open", Domain::Subagent, schema(json!({"type": {"type": "string"}}))),
        ("tool_search", Domain::Meta, schema(json!({"includeLoaded": {"type": "boolean"}}))),
        ("x", Domain::File, schema(json!({"a": {"description": "at most max_results"}}))),
    ];
    for (name, domain, schema) in cases {
        assert!(!vocabulary_problems(name, domain, "", &schema).is_empty(), "{name}: {schema} passed");
    }
    let shell = schema(json!({"job_id": {}}));
    assert!(!vocabulary_problems("exec_shell", Domain::Shell, "returns a task_id", &shell).is_empty());
    let both = schema(json!({"job_id": {}, "task_id": {}}));
    assert!(vocabulary_problems("task_shell_wait", Domain::Shell, "", &both).is_empty());
}

/// Each old word of each tool, as a recorded call sends it, and the call it
/// becomes: units converted (seconds → ms, `start..=end` → `offset` + `limit`).
fn alias_cases() -> Vec<(&'static str, Value, Value)> {
    let write = |extra: Value| {
        let mut args = json!({"number": 1, "acceptance_criteria": ["a"], "evidence": ["e"]});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        args
    };
    vec![
        ("exec_shell_wait", json!({"task_id": "job-1", "timeout_ms": 5}), json!({"job_id": "job-1", "timeout_ms": 5})),
        (
            "exec_shell_interact",
            json!({"task_id": "job-1", "input": "y\n"}),
            json!({"job_id": "job-1", "input": "y\n"}),
        ),
        ("exec_shell_cancel", json!({"task_id": "job-1"}), json!({"job_id": "job-1"})),
        (
            "task_shell_wait",
            json!({"task_id": "job-1", "task": "task-3"}),
            json!({"job_id": "job-1", "task_id": "task-3"}),
        ),
        ("task_read", json!({"id": "task-3", "events": 5}), json!({"task_id": "task-3", "limit": 5})),
        ("task_cancel", json!({"id": "task-3"}), json!({"task_id": "task-3"})),
        (
            "task_gate_run",
            json!({"command": "true", "task": "task-3"}),
            json!({"command": "true", "task_id": "task-3"}),
        ),
        ("pr_attempt_record", json!({"task": "task-3"}), json!({"task_id": "task-3"})),
        ("pr_attempt_list", json!({"task": "task-3"}), json!({"task_id": "task-3"})),
        (
            "github_comment",
            write(json!({"body": "b", "task": "task-3"})),
            write(json!({"body": "b", "task_id": "task-3"})),
        ),
        ("github_close_issue", write(json!({"task": "task-3"})), write(json!({"task_id": "task-3"}))),
        ("github_close_pr", write(json!({"task": "task-3"})), write(json!({"task_id": "task-3"}))),
        ("github_create_issue", json!({"title": "t", "task": "task-3"}), json!({"title": "t", "task_id": "task-3"})),
        ("github_create_pr", json!({"title": "t", "task": "task-3"}), json!({"title": "t", "task_id": "task-3"})),
        ("automation_read", json!({"id": "auto-1", "runs": 3}), json!({"automation_id": "auto-1", "limit": 3})),
        ("automation_pause", json!({"id": "auto-1"}), json!({"automation_id": "auto-1"})),
        ("automation_resume", json!({"id": "auto-1"}), json!({"automation_id": "auto-1"})),
        ("automation_run", json!({"id": "auto-1"}), json!({"automation_id": "auto-1"})),
        ("automation_delete", json!({"id": "auto-1"}), json!({"automation_id": "auto-1"})),
        (
            "automation_update",
            json!({"id": "auto-1", "prompt": "p"}),
            json!({"automation_id": "auto-1", "prompt": "p"}),
        ),
        ("pr_attempt_read", json!({"id": "attempt-1"}), json!({"attempt_id": "attempt-1"})),
        ("pr_attempt_preflight", json!({"id": "attempt-1"}), json!({"attempt_id": "attempt-1"})),
        ("checklist_update", json!({"id": 2, "status": "completed"}), json!({"item_id": 2, "status": "completed"})),
        ("grep_files", json!({"pattern": "x", "max_results": 5}), json!({"pattern": "x", "limit": 5})),
        ("project_map", json!({"max_entries": 5}), json!({"limit": 5})),
        (
            "retrieve_tool_result",
            json!({"handle": "out_1", "mode": "lines", "start": 10, "end": 19}),
            json!({"handle": "out_1", "mode": "lines", "offset": 10, "limit": 10}),
        ),
        (
            "retrieve_tool_result",
            json!({"handle": "out_1", "mode": "head", "n": 3}),
            json!({"handle": "out_1", "mode": "head", "limit": 3}),
        ),
        (
            "handle_read",
            json!({"handle": "var_1", "op": "range", "start": 2, "end": 3}),
            json!({"handle": "var_1", "op": "range", "offset": 2, "limit": 2}),
        ),
        (
            "handle_read",
            json!({"handle": "var_1", "op": "slice", "start": 2, "end": 3}),
            json!({"handle": "var_1", "op": "slice", "start": 2, "end": 3}),
        ),
        (
            "fim_edit",
            json!({"path": "a.rs", "start_line": 2, "end_line": 4}),
            json!({"path": "a.rs", "offset": 2, "limit": 3}),
        ),
        (
            "rlm_configure",
            json!({"name": "s", "eval_timeout_secs": 30, "sub_query_timeout_secs": 2}),
            json!({"name": "s", "eval_timeout_ms": 30000, "sub_query_timeout_ms": 2000}),
        ),
        ("agent_open", json!({"prompt": "p", "type": "explore"}), json!({"prompt": "p", "agent_type": "explore"})),
        ("tool_search", json!({"query": "q", "includeLoaded": true}), json!({"query": "q", "include_loaded": true})),
    ]
}

fn aliases_of(engine: &Engine, tool: &str) -> &'static [InputAlias] {
    engine.registry().get(tool).unwrap_or_else(|| panic!("no tool {tool}")).handler.input_aliases()
}

#[test]
fn every_old_word_maps_to_the_new_one_with_its_unit() {
    let work = tempfile::tempdir().unwrap();
    let engine = engine(work.path());
    for (tool, old, new) in alias_cases() {
        let mut args = old.as_object().unwrap().clone();
        quiver_engine::apply_input_aliases(tool, aliases_of(&engine, tool), &mut args).unwrap();
        assert_eq!(Value::Object(args), new, "{tool} {old}");
    }
    // Every table is covered, and no alias hides in a schema or names a missing property.
    let covered: Vec<&str> = alias_cases().iter().map(|(tool, _, _)| *tool).collect();
    for tool in engine.registry().iter() {
        let aliases = tool.handler.input_aliases();
        let name = tool.spec.name.as_str();
        if aliases.is_empty() {
            continue;
        }
        assert!(covered.contains(&name), "{name}'s aliases have no case here");
        let props = tool.spec.input_schema["properties"].as_object().unwrap();
        for alias in aliases {
            assert!(props.contains_key(alias.new), "{name}: alias target `{}` is not in its schema", alias.new);
            let hidden = !props.contains_key(alias.old) || alias.unless.is_some() || alias.when.is_some();
            assert!(hidden, "{name}: the old word `{}` is still in its schema", alias.old);
        }
    }
}

/// Through dispatch, as a replayed transcript calls: the old words pass the
/// schema check (a tool may still refuse the call for its own reasons, or
/// plan mode may), and an old word contradicting its new one is refused.
#[tokio::test]
async fn old_words_pass_dispatch_and_a_disagreeing_pair_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(work.path());
    let ctx = engine.context(Workspace::new(ws.path()).unwrap(), Audience { mode: Mode::Plan, ..Audience::default() });
    for (tool, old, _) in alias_cases() {
        let result = engine.dispatch(tool, old.clone(), &ctx).await.unwrap();
        let text = result.content_text();
        assert!(!text.starts_with("invalid arguments"), "{tool} {old}: {text}");
    }
    let clash =
        engine.dispatch("agent_open", json!({"prompt": "p", "type": "explore", "agent_type": "plan"}), &ctx).await;
    let text = clash.unwrap().content_text();
    assert!(text.contains("`type` is the former name of `agent_type`"), "{text}");
    assert!(text.contains("\"explore\"") && text.contains("\"plan\""), "{text}");
    let clash =
        engine.dispatch("rlm_configure", json!({"name": "s", "eval_timeout_secs": 2, "eval_timeout_ms": 3000}), &ctx);
    let text = clash.await.unwrap().content_text();
    assert!(text.contains("read as `eval_timeout_ms`: 2000") && text.contains("`eval_timeout_ms`: 3000"), "{text}");
    let same = engine.dispatch("agent_open", json!({"prompt": "p", "type": "explore", "agent_type": "explore"}), &ctx);
    assert!(!same.await.unwrap().content_text().contains("former name"));
}
