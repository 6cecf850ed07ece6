//! Resources, prompts, completion and announcements passed through the
//! gateway from `quiver-conformance-mcp` and `quiver-test-mcp` (real child
//! processes, real rmcp on both sides): a directly exposed server keeps its
//! names and URIs and its tools sit in the head; a server exposed through
//! search gets prefixed names and URIs that round-trip; a direct server's
//! tool clashing with another name is a precise config error; a server's
//! `tools/list_changed` re-indexes its tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::config::{ConfigSources, McpConfig};
use quiver_mcp::server::{Surface, serve_io};
use rmcp::model::{
    ClientCapabilities, ClientConfig, CompleteRequestParams, GetPromptRequestParams, Implementation,
    ReadResourceRequestParams, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::client_support::{TEST_SERVER, full_host};
use crate::gateway_conformance::{CONFORMANCE_SERVER, direct_gateway};

/// Records what the gateway announces.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn push(&self, event: String) {
        self.seen.lock().unwrap().push(event);
    }

    /// Waits (bounded: a ceiling against a hang, not a guess) until `event` was announced.
    async fn wait_for(&self, event: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !self.seen.lock().unwrap().iter().any(|e| e == event) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no `{event}` within 60 s: {:?}",
                self.seen.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("recorder", "0"))
    }
    async fn on_tool_list_changed(&self, _c: NotificationContext<RoleClient>) {
        self.push("tools/list_changed".into());
    }
    async fn on_resource_list_changed(&self, _c: NotificationContext<RoleClient>) {
        self.push("resources/list_changed".into());
    }
    async fn on_prompt_list_changed(&self, _c: NotificationContext<RoleClient>) {
        self.push("prompts/list_changed".into());
    }
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _c: NotificationContext<RoleClient>,
    ) {
        self.push(format!("updated {}", params.uri));
    }
}

type Client = RunningService<RoleClient, Recorder>;

async fn connect(surface: Arc<Surface>, recorder: Recorder) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = serve_io(surface, server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client_io);
    recorder.serve((client_read, client_write)).await.expect("client handshake")
}

/// A gateway over servers written as the user's own config file.
fn gateway(dirs: &[tempfile::TempDir], toml: &str) -> (Arc<Surface>, Arc<quiver_mcp::McpManager>) {
    let file = dirs[0].path().join("config.toml");
    std::fs::write(&file, toml).unwrap();
    let sources = ConfigSources { files: vec![file], project_files: vec![], workspace: None };
    let config = McpConfig::load(&sources).unwrap();
    let manager = crate::client_support::manager(config.servers.into_values().collect(), dirs[1].path());
    let host = full_host(&manager);
    let audience = Audience { mode: Mode::Agent, ..Audience::default() };
    let surface = Surface::hosted(host, Arc::clone(&manager), Workspace::new(dirs[2].path()).unwrap(), audience);
    (Arc::new(surface), manager)
}

fn dirs() -> Vec<tempfile::TempDir> {
    (0..4).map(|_| tempfile::tempdir().unwrap()).collect()
}

fn quoted(path: &str) -> String {
    serde_json::to_string(path).unwrap()
}

fn wire<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_server_keeps_its_names_and_uris_and_its_tools_head_the_list() {
    let d = dirs();
    let surface = direct_gateway(d[0].path(), d[1].path(), d[2].path());
    let recorder = Recorder::default();
    let client = connect(Arc::clone(&surface), recorder.clone()).await;

    // Agent mode, fresh machine: the first list already has the direct tools.
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"test_simple_text") && names.contains(&"tool_search"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let schema_tool = tools.iter().find(|t| t.name == "json_schema_2020_12_tool").unwrap();
    assert_eq!(schema_tool.input_schema["$schema"], "https://json-schema.org/draft/2020-12/schema");

    let resources = wire(&client.list_all_resources().await.unwrap());
    let uris: Vec<&str> = resources.as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&"test://static-text"), "{uris:?}");
    let read = client.read_resource(ReadResourceRequestParams::new("test://template/42/data")).await.unwrap();
    let read = wire(&read);
    assert_eq!(read["contents"][0]["uri"], "test://template/42/data");
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("42"));
    let prompts = wire(&client.list_all_prompts().await.unwrap());
    assert!(prompts.as_array().unwrap().iter().any(|p| p["name"] == "test_simple_prompt"), "{prompts}");

    // A subscribed resource's update reaches the client under its own URI.
    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("test://watched-resource")).await.unwrap();
    recorder.wait_for("updated test://watched-resource").await;
    // The server's list changes are passed on.
    client.call_tool(rmcp::model::CallToolRequestParams::new("touch_resources")).await.unwrap();
    recorder.wait_for("resources/list_changed").await;
    recorder.wait_for("prompts/list_changed").await;
    client.cancel().await.unwrap();
    surface.shutdown().await;
}

/// A session that ends gives its subscriptions back at once: the session's
/// forwarder learns of the end from the session's handles dropping (no
/// periodic check), and the last holder unsubscribes downstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_ends_gives_its_subscriptions_back_at_once() {
    let d = dirs();
    let surface = direct_gateway(d[0].path(), d[1].path(), d[2].path());
    let client = connect(Arc::clone(&surface), Recorder::default()).await;
    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("test://watched-resource")).await.unwrap();
    assert_eq!(surface.downstream_subscriptions(), 1);
    client.cancel().await.unwrap();
    given_back_within_2_s(&surface).await;
    surface.shutdown().await;
}

/// Waits until the gateway holds no downstream subscription: at most 2 s
/// after the session ended (a periodic check would take up to its period).
async fn given_back_within_2_s(surface: &Surface) {
    let ended = std::time::Instant::now();
    while surface.downstream_subscriptions() > 0 {
        assert!(ended.elapsed() < Duration::from_secs(2), "still subscribed 2 s after the session ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Over HTTP too: a session the client deletes gives its subscriptions back
/// at once (every handle on it drops with the session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_http_session_gives_its_subscriptions_back_at_once() {
    let (_dirs, surface, url) = crate::gateway_conformance::http_gateway(3).await;
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let client = crate::gateway_call_stream::open_session(&url, "subscriber").await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
        "params": {"uri": "test://watched-resource"}});
    let answer = client.post(subscribe).await.text().await.unwrap();
    assert!(answer.contains("\"result\""), "{answer}");
    assert_eq!(surface.downstream_subscriptions(), 1);
    let session = client.session.clone().unwrap();
    let deleted = client.http.delete(&client.url).header("mcp-session-id", session).send().await.unwrap();
    assert!(deleted.status().is_success(), "DELETE: {}", deleted.status());
    given_back_within_2_s(&surface).await;
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_behind_search_gets_prefixed_names_and_uris_that_round_trip() {
    let d = dirs();
    let toml = format!("[mcp_servers.conf]\ncommand = {}\n", quoted(CONFORMANCE_SERVER));
    let (surface, _manager) = gateway(&d, &toml);
    let recorder = Recorder::default();
    let client = connect(Arc::clone(&surface), recorder.clone()).await;

    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name.starts_with("test_")), "search-exposed tools are not in the head");

    let resources = wire(&client.list_all_resources().await.unwrap());
    let uris: Vec<&str> = resources.as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    assert!(uris.contains(&"quiver-mcp://conf/test://static-text"), "{uris:?}");
    let templates = wire(&client.list_all_resource_templates().await.unwrap());
    assert_eq!(templates[0]["uriTemplate"], "quiver-mcp://conf/test://template/{id}/data", "{templates}");

    let read = wire(
        &client.read_resource(ReadResourceRequestParams::new("quiver-mcp://conf/test://static-binary")).await.unwrap(),
    );
    assert_eq!(read["contents"][0]["uri"], "quiver-mcp://conf/test://static-binary", "the URI the client asked for");
    assert_eq!(read["contents"][0]["mimeType"], "image/png");
    assert!(read["contents"][0]["blob"].as_str().is_some_and(|b| !b.is_empty()));
    let read = wire(
        &client
            .read_resource(ReadResourceRequestParams::new("quiver-mcp://conf/test://template/7/data"))
            .await
            .unwrap(),
    );
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("Data for ID: 7"), "{read}");

    let prompts = wire(&client.list_all_prompts().await.unwrap());
    assert!(
        prompts.as_array().unwrap().iter().any(|p| p["name"] == "mcp__conf__test_prompt_with_arguments"),
        "{prompts}"
    );
    let mut params = GetPromptRequestParams::new("mcp__conf__test_prompt_with_arguments");
    params.arguments = Some(serde_json::from_value(json!({"arg1": "one", "arg2": "two"})).unwrap());
    let prompt = wire(&client.get_prompt(params).await.unwrap());
    assert_eq!(prompt["messages"][0]["content"]["text"], "Prompt with arguments: arg1='one', arg2='two'");

    let complete: CompleteRequestParams = serde_json::from_value(json!({
        "ref": {"type": "ref/prompt", "name": "mcp__conf__test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "par"}
    }))
    .unwrap();
    let completed = wire(&client.complete(complete).await.unwrap());
    assert_eq!(completed["completion"]["values"], json!(["paris", "park", "party"]));

    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("quiver-mcp://conf/test://watched-resource")).await.unwrap();
    recorder.wait_for("updated quiver-mcp://conf/test://watched-resource").await;

    // Names nobody has are refused precisely, and nothing is left broken.
    let err =
        client.read_resource(ReadResourceRequestParams::new("quiver-mcp://nope/test://static-text")).await.unwrap_err();
    assert!(err.to_string().contains("prefix `nope`"), "{err}");
    let err = client.get_prompt(GetPromptRequestParams::new("test_simple_prompt")).await.unwrap_err();
    assert!(err.to_string().contains("mcp__<server>__<name>"), "{err}");
    let again = client.read_resource(ReadResourceRequestParams::new("quiver-mcp://conf/test://static-text")).await;
    assert!(again.is_ok(), "{again:?}");
    client.cancel().await.unwrap();
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_tool_named_like_another_is_a_config_error() {
    let d = dirs();
    let toml = format!(
        "[mcp_servers.first]\ncommand = {bin}\nexpose = \"direct\"\n\
         [mcp_servers.second]\ncommand = {bin}\nexpose = \"direct\"\nenv = {{ QUIVER_CONFORMANCE_EXTRA_TOOL = \"tool_search\" }}\n",
        bin = quoted(CONFORMANCE_SERVER)
    );
    let (surface, manager) = gateway(&d, &toml);
    let client = connect(Arc::clone(&surface), Recorder::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let count = |name: &str| tools.iter().filter(|t| t.name == name).count();
    assert_eq!(count("tool_search"), 1, "the native tool keeps its name");
    assert_eq!(count("test_simple_text"), 1, "the first direct server keeps it");

    let clashes = manager.direct_clashes().join("\n");
    assert!(clashes.contains("mcp_servers.second.expose"), "{clashes}");
    assert!(clashes.contains("`tool_search` has the name of a native quiver tool"), "{clashes}");
    assert!(clashes.contains("`test_simple_text` has the name of a tool of MCP server `first`"), "{clashes}");
    assert!(clashes.contains("disabled_tools = [\"tool_search\"]"), "{clashes}");
    let status = manager.server("second").unwrap().status();
    assert!(status.last_error.unwrap_or_default().contains("tool_search"), "mcp_servers shows it");

    // The native tool still runs, and the first server's tool is the one called.
    let out = client.call_tool(rmcp::model::CallToolRequestParams::new("test_simple_text")).await.unwrap();
    assert_eq!(wire(&out)["content"][0]["text"], "This is a simple text response for testing.");
    client.cancel().await.unwrap();
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_re_indexed_and_the_head_stays() {
    let d = dirs();
    let toml = format!("[mcp_servers.t]\ncommand = {}\n", quoted(TEST_SERVER));
    let (surface, manager) = gateway(&d, &toml);
    let recorder = Recorder::default();
    let client = connect(Arc::clone(&surface), recorder.clone()).await;
    let head = wire(&client.list_all_tools().await.unwrap());

    let mut events = manager.subscribe_events();
    let changed =
        client
            .call_tool(rmcp::model::CallToolRequestParams::new("tool_search").with_arguments(
                serde_json::from_value(json!({"query": "add tool and send tools/list_changed"})).unwrap(),
            ))
            .await
            .unwrap();
    assert!(wire(&changed).to_string().contains("mcp__t__change_tools"), "{}", wire(&changed));
    client.call_tool(rmcp::model::CallToolRequestParams::new("mcp__t__change_tools")).await.unwrap();
    // The manager re-lists on the server's word (not only at its next call).
    let relisted = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Ok(quiver_mcp::client::DownstreamEvent::ToolsRelisted { server }) = events.recv().await {
                return server;
            }
        }
    })
    .await
    .expect("no re-listing within 60 s");
    assert_eq!(relisted, "t");

    let found = client
        .call_tool(rmcp::model::CallToolRequestParams::new("tool_search").with_arguments(
            serde_json::from_value(json!({"query": "a tool that appeared after the first listing"})).unwrap(),
        ))
        .await
        .unwrap();
    assert!(wire(&found).to_string().contains("mcp__t__added_later"), "the search index follows: {}", wire(&found));
    let listed = wire(&client.list_all_tools().await.unwrap());
    let head_len = head.as_array().unwrap().len();
    assert_eq!(listed.as_array().unwrap()[..head_len], head.as_array().unwrap()[..], "the head is byte-stable");
    let cached = std::fs::read_dir(d[1].path())
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("added_later")));
    assert!(cached, "the tool-list cache holds the new list");
    client.cancel().await.unwrap();
    surface.shutdown().await;
}
