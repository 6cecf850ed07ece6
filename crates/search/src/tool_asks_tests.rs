use super::{names_a_tool, tool_purpose};
use crate::SearchIndex;
use crate::query::tests::{doc, top};

#[test]
fn what_a_requested_tool_should_do_weighs_like_a_scope() {
    // "is there a tool to" is words 0-3 (one-letter words are not counted);
    // the purpose runs to the end of its clause
    assert_eq!(tool_purpose("is there a tool to resize images"), Some((4, 6)));
    assert_eq!(tool_purpose("I need a tool for GitHub things, load it"), Some((3, 6)));
    assert_eq!(tool_purpose("call the query tool on the postgres server"), None);
    let idx = SearchIndex::build(vec![
        doc("tool_search", "Find and load more tools (file, git, web, MCP servers)."),
        doc("mcp_servers", "List the configured MCP servers and their connection state."),
        doc("github_issue", "Read a GitHub issue: title, labels, comments."),
    ]);
    assert_eq!(top(&idx, "is there a tool to talk with MCP servers? find it"), "tool_search");
    assert_eq!(top(&idx, "I need a tool for GitHub things, load it"), "tool_search");
    // without the request for a tool, the thing itself is meant
    assert_eq!(top(&idx, "list the MCP servers"), "mcp_servers");
}

#[test]
fn a_tool_named_by_its_identifier_is_called() {
    assert!(names_a_tool("use the sentry server's get_event tool directly"));
    assert!(names_a_tool("use mcp server jira, tool create_ticket, title 'bug'"));
    assert!(!names_a_tool("where do we use tenant_id in the code"));
    assert!(!names_a_tool("is there a tool to resize images"));
    let idx = SearchIndex::build(vec![
        doc("mcp_call", "Call a tool of a configured MCP server by server and tool name."),
        doc("mcp_servers", "List the configured MCP servers: transport, connection state, tool count."),
    ]);
    assert_eq!(top(&idx, "use the sentry server's get_event tool directly"), "mcp_call");
}
