use serde_json::json;

use super::*;

fn flat(name: &str) -> Value {
    json!({"type": "function", "name": name, "description": "d", "parameters": {"type": "object"}, "defer_loading": true})
}

#[test]
fn mcp_tools_group_by_server_in_load_order_and_others_stay_flat() {
    let loaded = vec![
        ("mcp__github__create_issue".to_string(), flat("mcp__github__create_issue")),
        ("git_log".to_string(), flat("git_log")),
        ("mcp__github__list_prs".to_string(), flat("mcp__github__list_prs")),
        ("mcp__jira__search".to_string(), flat("mcp__jira__search")),
    ];
    let tools = output_tools(&loaded);
    let shape: Vec<(String, Vec<String>)> = tools
        .iter()
        .map(|t| {
            let members = t["tools"].as_array().map(|m| m.iter().map(|f| f["name"].as_str().unwrap().to_string()));
            (t["name"].as_str().unwrap().to_string(), members.into_iter().flatten().collect())
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("mcp__github".to_string(), vec!["create_issue".to_string(), "list_prs".to_string()]),
            ("git_log".to_string(), vec![]),
            ("mcp__jira".to_string(), vec!["search".to_string()]),
        ]
    );
    // `defer_loading` is on the functions, never on the namespace.
    assert!(tools[0].get("defer_loading").is_none());
    assert_eq!(tools[0]["tools"][0]["defer_loading"], true);
}

#[test]
fn a_namespaced_call_maps_to_the_quiver_name_and_back() {
    let item = json!({"type": "function_call", "name": "create_issue", "namespace": "mcp__github"});
    assert_eq!(qualified_name(&item).as_deref(), Some("mcp__github__create_issue"));
    assert_eq!(qualified_name(&json!({"name": "read_file"})).as_deref(), Some("read_file"));
    let namespaced: BTreeSet<String> = ["mcp__github__create_issue".to_string()].into();
    assert_eq!(call_name("mcp__github__create_issue", &namespaced), (Some("mcp__github".into()), "create_issue"));
    // An MCP tool appended to `tools` (no search delivered it) keeps its full name.
    assert_eq!(call_name("mcp__github__list_prs", &namespaced), (None, "mcp__github__list_prs"));
}
