//! `tool_search` over the real native tools: a tool that asks for approval
//! is loaded only by a request that names its own action (issue 44: "open an
//! issue: login page 500s" loaded `github_close_issue`).

use serde_json::{Value, json};

use crate::test_support::Harness;

async fn search(h: &Harness, query: &str) -> (Value, Vec<String>) {
    let r = h.call("tool_search", json!({"query": query})).await;
    assert!(!r.is_error, "{}", r.content_text());
    let loaded: Vec<String> =
        r.metadata["loaded"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    (r.content, loaded)
}

fn listed(body: &Value) -> Vec<String> {
    body["matches"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_request_to_open_an_issue_does_not_load_the_tool_that_closes_one() {
    let h = Harness::new();
    let (body, loaded) = search(&h, "open an issue: login page 500s").await;
    assert!(!loaded.contains(&"github_close_issue".to_string()), "loaded {loaded:?}: {body}");
    assert_eq!(listed(&body).first().map(String::as_str), Some("github_create_issue"), "{body}");
    assert!(loaded.contains(&"github_create_issue".to_string()), "its own action is named: {loaded:?}");
}

#[tokio::test]
async fn close_issue_12_loads_the_tool_that_closes_issues() {
    let h = Harness::new();
    let (body, loaded) = search(&h, "close issue 12").await;
    assert!(loaded.contains(&"github_close_issue".to_string()), "loaded {loaded:?}: {body}");
}

#[tokio::test]
async fn a_confident_approval_tool_for_another_action_is_listed_with_how_to_load_it() {
    let h = Harness::new();
    let (body, loaded) = search(&h, "mark GitHub issue 12 done, it's fixed").await;
    assert!(listed(&body).contains(&"github_close_issue".to_string()), "{body}");
    assert!(!loaded.contains(&"github_close_issue".to_string()), "loaded {loaded:?}");
    let next = body["nextInstruction"].as_str().unwrap();
    assert!(next.contains("`select:github_close_issue` loads it"), "{next}");
    let status = body["matches"].as_array().unwrap().iter().find(|m| m["name"] == "github_close_issue").unwrap();
    assert_eq!(status["status"], "available_lazy");
    // Named exactly, it loads.
    let (_, loaded) = search(&h, "select:github_close_issue").await;
    assert_eq!(loaded, ["github_close_issue"]);
}
