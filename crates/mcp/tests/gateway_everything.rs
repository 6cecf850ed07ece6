//! The gateway against a server nobody here wrote: `quiver mcp serve`'s
//! handler in front of `@modelcontextprotocol/server-everything`, compared
//! with a direct connection to the same server. What the server says must
//! reach the client as the server said it (content blocks, structured
//! content, output schemas), and a fresh machine's first search must find the
//! server's tools. Skips when the npm packages are not installed (fails under
//! `QUIVER_REQUIRE_ALL`); install with `npm ci --prefix crates/mcp/tests/node`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::server::Surface;
use rmcp::ServiceExt;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::client_support::{full_host, manager, stdio_server};
use crate::server_support::{TestClient, connect, list};

fn everything_script() -> Option<String> {
    let script = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")?;
    Some(script.to_string_lossy().to_string())
}

async fn call(client: &crate::server_support::Client, name: &str, args: Value) -> CallToolResult {
    crate::server_support::call(client, name, args).await
}

/// The parts of a result a client acts on, as JSON (`isError` absent means false).
fn wire(result: &CallToolResult) -> (Value, Value, bool) {
    let v = untimed(serde_json::to_value(result).unwrap());
    (
        v["content"].clone(),
        v.get("structuredContent").cloned().unwrap_or(Value::Null),
        v["isError"].as_bool().unwrap_or(false),
    )
}

/// server-everything stamps dynamic resources with the time they were made
/// ("... created at 6:25:34 AM"); two calls a second apart differ only there.
fn untimed(v: Value) -> Value {
    match v {
        Value::String(s) => match s.find(" created at ") {
            Some(at) => Value::String(format!("{} created at <time>", &s[..at])),
            None => Value::String(s),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(untimed).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, untimed(v))).collect()),
        other => other,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_passes_everything_through_unchanged() {
    let Some(script) = everything_script() else { return };
    // A fresh machine: no tool-list cache at all.
    let cache = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let m = manager(vec![stdio_server("everything", "node", &[&script, "stdio"], &[])], cache.path());
    let host = full_host(&m);
    let workspace = Workspace::new(ws.path()).unwrap();
    let audience = Audience { mode: Mode::Agent, ..Audience::default() };
    let surface = Arc::new(Surface::hosted(host, Arc::clone(&m), workspace, audience));
    let gateway = connect(Arc::clone(&surface), TestClient::answering(true)).await;

    // The first search finds a tool of a server that was never started.
    let found = call(&gateway, "tool_search", json!({"query": "echo back the input message"})).await;
    let body = found.structured_content.clone().unwrap();
    assert_eq!(body["matches"][0]["name"], "mcp__everything__echo", "{body}");
    assert!(cache.path().read_dir().unwrap().next().is_some(), "the tool-list cache was written");

    let direct = ()
        .serve(
            rmcp::transport::TokioChildProcess::new({
                let mut cmd = tokio::process::Command::new("node");
                cmd.args([script.as_str(), "stdio"]);
                cmd
            })
            .unwrap(),
        )
        .await
        .unwrap();

    let cases = [
        ("get-tiny-image", json!({})),
        ("get-structured-content", json!({"location": "Chicago"})),
        ("get-resource-reference", json!({"resourceType": "Text", "resourceId": 2})),
        ("get-resource-reference", json!({"resourceType": "Blob", "resourceId": 3})),
        ("get-resource-links", json!({"count": 3})),
        ("get-annotated-message", json!({"messageType": "error", "includeImage": true})),
        ("get-sum", json!({"a": 2, "b": 3})),
        ("echo", json!({"message": "hi"})),
    ];
    for (tool, args) in cases {
        let Value::Object(map) = args.clone() else { unreachable!() };
        let want = direct
            .call_tool(rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(map))
            .await
            .unwrap();
        let got = call(&gateway, &format!("mcp__everything__{tool}"), args).await;
        assert_eq!(wire(&got), wire(&want), "{tool}: the gateway changed the result");
    }

    // The client sees the downstream tool's outputSchema and annotations.
    let downstream = direct.list_all_tools().await.unwrap();
    let listed = list(&gateway).await;
    let ours = listed.iter().find(|t| t.name == "mcp__everything__get-structured-content").expect("loaded by the call");
    let theirs = downstream.iter().find(|t| t.name == "get-structured-content").unwrap();
    assert!(theirs.output_schema.is_some());
    assert_eq!(ours.output_schema, theirs.output_schema);
    assert_eq!(serde_json::to_value(&ours.annotations).unwrap(), serde_json::to_value(&theirs.annotations).unwrap());
    direct.cancel().await.unwrap();
    gateway.cancel().await.unwrap();
    surface.shutdown().await;
}
