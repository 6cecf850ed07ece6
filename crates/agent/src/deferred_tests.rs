use serde_json::{Value, json};

use super::*;
use crate::message::{Message, ModelRequest};

fn tool(name: &str) -> Value {
    json!({"name": name, "description": format!("{name} things"), "input_schema": {"type": "object"}})
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().filter_map(|t| t["name"].as_str()).collect()
}

fn request(tail: &[&str], loaded_by_search: &[&str]) -> ModelRequest {
    let mut tools = vec![tool("read_file"), tool("tool_search")];
    tools.extend(tail.iter().map(|n| tool(n)));
    let mut search = Message::tool_result("c1", "found", false);
    if let Message::Tool { loaded, .. } = &mut search {
        *loaded = loaded_by_search.iter().map(|n| n.to_string()).collect();
    }
    ModelRequest {
        tools: Value::Array(tools),
        head_len: 2,
        deferred_tools: vec![tool("git_diff"), tool("git_log"), tool("web_fetch")],
        messages: vec![Message::user("hi"), search],
        ..ModelRequest::new("claude")
    }
}

#[test]
fn every_deferred_tool_goes_out_flagged_after_the_head_whatever_was_loaded() {
    let before = request(&[], &[]);
    let after = request(&["git_log"], &["git_log"]);
    let sent = wire_tools(&after);
    assert_eq!(names(&sent), ["read_file", "tool_search", "git_diff", "git_log", "web_fetch"]);
    assert!(sent[..2].iter().all(|t| t.get("defer_loading").is_none()));
    assert!(sent[2..].iter().all(|t| t["defer_loading"] == json!(true)));
    // The load changed nothing in `tools`: the prompt prefix is the same.
    assert_eq!(wire_tools(&before), sent);
    assert_eq!(prompt_tools(&after), prompt_tools(&before));
    assert_eq!(references(&after, &["git_log".to_string(), "elsewhere".to_string()]), ["git_log"]);
}

#[test]
fn a_loaded_tool_nothing_references_is_shown_and_a_newcomer_is_appended() {
    // git_diff was loaded by a direct call (no reference); mcp__x__y is an
    // MCP newcomer outside the deferred set.
    let req = request(&["git_diff", "mcp__x__y"], &[]);
    let sent = tools_with_deferral(&req);
    let flags: Vec<(&str, bool)> = sent.iter().map(|(t, d)| (t["name"].as_str().unwrap_or(""), *d)).collect();
    assert_eq!(
        flags,
        [
            ("read_file", false),
            ("tool_search", false),
            ("git_diff", false),
            ("git_log", true),
            ("web_fetch", true),
            ("mcp__x__y", false)
        ]
    );
}

#[test]
fn without_deferred_definitions_or_a_head_nothing_is_deferred() {
    let mut req = request(&["git_log"], &["git_log"]);
    req.deferred_tools.clear();
    assert_eq!(names(&wire_tools(&req)), ["read_file", "tool_search", "git_log"]);
    assert!(references(&req, &["git_log".to_string()]).is_empty());
    // Every tool deferred is refused by the API: send them as they are.
    let mut req = request(&[], &[]);
    req.head_len = 0;
    assert!(!defers(&req));
    assert!(wire_tools(&req).iter().all(|t| t.get("defer_loading").is_none()));
}

#[test]
fn the_setting_parses_its_two_values_only() {
    assert_eq!(DeferredTools::parse("defer"), Some(DeferredTools::Defer));
    assert_eq!(DeferredTools::parse("append"), Some(DeferredTools::Append));
    assert_eq!(DeferredTools::parse("Append"), None);
    assert_eq!(DeferredTools::Append.as_str(), "append");
}

fn a_search(matches: &[(&str, &str)], extra: serde_json::Value) -> String {
    let matches: Vec<serde_json::Value> =
        matches.iter().map(|(n, s)| serde_json::json!({"name": n, "status": s, "description": "long"})).collect();
    let mut content = serde_json::json!({"matches": matches, "nextInstruction": "Loaded `git_log`. Also matching ..."});
    if let (Some(content), serde_json::Value::Object(extra)) = (content.as_object_mut(), extra) {
        content.extend(extra);
    }
    serde_json::json!({"content": content, "is_error": false, "metadata": {"loaded": ["git_log"]}}).to_string()
}

#[test]
fn a_loading_searchs_note_names_what_else_matched_within_its_budget() {
    let loaded = vec!["git_log".to_string()];
    let lazy = [
        ("git_log", "loaded"),
        ("git_blame", "available_lazy"),
        ("git_diff", "available_lazy"),
        ("git_show_commit_details", "available_lazy"),
        ("mcp__github__list_pull_requests", "available_lazy"),
    ];
    let note = load_note(&a_search(&lazy, serde_json::json!({})), &loaded, LOAD_NOTE_MAX).unwrap();
    assert_eq!(note, "Also matched (select: to load): git_blame, git_diff");
    assert!(note.len() <= LOAD_NOTE_MAX);
    // Best first, and the first always, however long.
    let note = load_note(&a_search(&lazy[3..], serde_json::json!({})), &loaded, 10).unwrap();
    assert_eq!(note, "Also matched (select: to load): git_show_commit_details");
    // Everything loaded: nothing to say; Anthropic's references go alone.
    assert_eq!(load_note(&a_search(&lazy[..1], serde_json::json!({})), &loaded, LOAD_NOTE_MAX).unwrap(), "");
    assert_eq!(reference_note(&a_search(&lazy[..1], serde_json::json!({})), &loaded), "");
    // A name not found and the search's notes go beyond the budget.
    let extra = serde_json::json!({"notFound": ["git_bisect"], "notes": ["MCP servers still starting: `jira`."]});
    assert_eq!(
        load_note(&a_search(&lazy[..2], extra), &loaded, LOAD_NOTE_MAX).unwrap(),
        "Also matched (select: to load): git_blame\nNot found: git_bisect.\nMCP servers still starting: `jira`."
    );
    assert_eq!(reference_note("loaded: git_log", &loaded), "loaded: git_log", "not a search's JSON: whole");
}
