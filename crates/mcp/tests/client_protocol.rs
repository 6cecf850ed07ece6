//! Which revision quiver's client speaks to a server behind it
//! (`protocol = "auto"`): MCP 2026-07-28 to a server that answers
//! `server/discover` (here quiver's own `mcp serve` over HTTP), and an
//! `initialize` session with one that does not (the reference
//! server-everything, whose SDK predates the revision). At 2026-07-28 what
//! the server asks mid-call comes back as `InputRequiredResult` rounds, which
//! quiver answers through the client in front of it, whichever revision that
//! client speaks.

use std::sync::Arc;

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::client::McpManager;
use quiver_mcp::config::{Expose, Protocol, ServerConfig, Transport};
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};
use serde_json::json;

use crate::client_support::{discover, full_host, manager, stdio_server, test_server};
use crate::gateway_call_stream::{CallStream, open_session, said};
use crate::gateway_input_required::{
    ASKING, Stateless, answer_to, ask_client_rounds, greeting, profile, prompt_text, resource, rounds_of,
};

/// `surface` served over streamable HTTP on loopback: its URL.
async fn serve(surface: &Arc<Surface>) -> String {
    let options = HttpOptions { listen: None, allow_remote: false, token: None };
    let server = HttpServer::bind(Arc::clone(surface), options).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run());
    url
}

fn surface(servers: Vec<ServerConfig>, dirs: &[tempfile::TempDir]) -> (Arc<Surface>, Arc<McpManager>) {
    let manager = manager(servers, dirs[0].path());
    let host = full_host(&manager);
    let audience = Audience { mode: Mode::Agent, ..Audience::default() };
    let workspace = Workspace::new(dirs[1].path()).unwrap();
    (Arc::new(Surface::hosted(host, Arc::clone(&manager), workspace, audience)), manager)
}

fn dirs() -> Vec<tempfile::TempDir> {
    (0..2).map(|_| tempfile::tempdir().unwrap()).collect()
}

/// Two gateways in a row: the outer one's server `inner` is the inner
/// gateway (over HTTP, `protocol = "auto"`, direct), which fronts the test
/// server (direct too, so `ask_client` keeps its name through both). The
/// outer gateway's URL, its manager, and both surfaces (to shut down).
async fn chain(
    outer_dirs: &[tempfile::TempDir],
    inner_dirs: &[tempfile::TempDir],
) -> (String, Arc<McpManager>, [Arc<Surface>; 2]) {
    chain_env(outer_dirs, inner_dirs, &[]).await
}

/// [`chain`], the test server started with `env`.
async fn chain_env(
    outer_dirs: &[tempfile::TempDir],
    inner_dirs: &[tempfile::TempDir],
    env: &[(&str, &str)],
) -> (String, Arc<McpManager>, [Arc<Surface>; 2]) {
    let mut behind = test_server("misbehaver", env);
    behind.expose = Expose::Direct;
    let (inner, _) = surface(vec![behind], inner_dirs);
    let inner_url = serve(&inner).await;
    let transport = Transport::Http {
        url: inner_url,
        headers: Default::default(),
        bearer_token_env: None,
        oauth: Default::default(),
    };
    let config =
        ServerConfig { transport, expose: Expose::Direct, protocol: Protocol::Auto, ..test_server("inner", &[]) };
    let (outer, manager) = surface(vec![config], outer_dirs);
    let url = serve(&outer).await;
    (url, manager, [outer, inner])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_speaks_2026_07_28_to_a_server_that_does_and_relays_what_it_asks_a_session_client() {
    let (outer_dirs, inner_dirs) = (dirs(), dirs());
    let (url, manager, surfaces) = chain(&outer_dirs, &inner_dirs).await;
    let client = open_session(&url, "session-client").await;
    let mut call = CallStream::start(&client, 3, "ask_client", "p").await;
    let answer = call.run(&client, 3, None).await;
    assert_eq!(
        said(&answer),
        json!({"roots": 1, "sampled": {"type": "text", "text": "sampled upstream"}, "elicited": {"name": "ada"}})
    );
    // The inner gateway asked in rounds; the outer one asked its client on the call's stream.
    for asked in ["roots/list", "sampling/createMessage", "elicitation/create"] {
        assert!(call.seen.iter().any(|m| m == asked), "{asked} never came: {:?}", call.seen);
    }
    let status = manager.server("inner").unwrap().status();
    assert_eq!(status.protocol.as_deref(), Some("2026-07-28"), "{status:?}");
    for surface in surfaces {
        surface.shutdown().await;
    }
}

/// A stateless client in front, a stateless server behind: each round the
/// inner gateway asks becomes a round of the outer one's own call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_passes_a_stateless_servers_rounds_on_to_a_stateless_client() {
    let (outer_dirs, inner_dirs) = (dirs(), dirs());
    let (url, _manager, surfaces) = chain(&outer_dirs, &inner_dirs).await;
    let (asked, answer) = ask_client_rounds(&Stateless::new(&url, "alice"), answer_to).await;
    assert_eq!(asked, ["roots/list", "sampling/createMessage", "elicitation/create"]);
    assert_eq!(said(&answer)["elicited"], json!({"name": "ada"}), "{answer}");
    for surface in surfaces {
        surface.shutdown().await;
    }
}

/// A prompt and a read whose server asks first, through two gateways: the
/// inner one answers the outer one's `prompts/get` and `resources/read` with
/// rounds, which the outer one drives through its own client in front (a
/// session's on the request's stream, a stateless one's in rounds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_drives_a_stateless_servers_rounds_of_a_prompt_and_a_read() {
    let (outer_dirs, inner_dirs) = (dirs(), dirs());
    let (url, _manager, surfaces) = chain_env(&outer_dirs, &inner_dirs, &ASKING).await;
    let session = open_session(&url, "session-client").await;
    let mut prompt = CallStream::request(&session, 3, "prompts/get", greeting()).await;
    let answer = prompt.run(&session, 3, None).await;
    assert_eq!(prompt.seen, ["elicitation/create", "answer:3"], "{answer}");
    assert_eq!(prompt_text(&answer), "Greet ada.");

    let client = Stateless::new(&url, "alice");
    let (asked, message) = rounds_of(&client, "resources/read", profile(), answer_to).await;
    assert_eq!(asked, ["elicitation/create"], "{message}");
    assert_eq!(resource(&message), ("name: ada", "test://profile"));
    for surface in surfaces {
        surface.shutdown().await;
    }
}

/// server-everything's SDK answers `server/discover` "method not found":
/// `auto` falls back to an `initialize` session, and its tools work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_falls_back_to_a_session_with_a_server_that_predates_2026_07_28() {
    let Some(script) = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")
    else {
        return;
    };
    let script = script.to_string_lossy().to_string();
    let config =
        ServerConfig { protocol: Protocol::Auto, ..stdio_server("everything", "node", &[&script, "stdio"], &[]) };
    let dirs = dirs();
    let manager = manager(vec![config], dirs[0].path());
    let tools = discover(&manager, "everything").await.unwrap_or_else(|e| panic!("discover: {e}"));
    assert!(tools.iter().any(|(name, _)| name == "mcp__everything__echo"), "{tools:?}");
    let server = manager.server("everything").unwrap();
    assert_eq!(server.status().protocol.as_deref(), Some("2025-11-25"), "{:?}", server.status());
    let host = full_host(&manager);
    let mut ctx = crate::client_support::host_context(&host, dirs[1].path(), Mode::Agent);
    let echoed = crate::client_support::call(&host, &mut ctx, "mcp__everything__echo", json!({"message": "hi"})).await;
    assert_eq!(crate::client_support::text(&echoed), "Echo: hi");
    manager.shutdown().await;
}

/// A 2026-07-28 server's list changes come on `subscriptions/listen`, which
/// quiver keeps open: when the test server behind the inner gateway grows a
/// tool, the outer gateway's list of the inner one follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_follows_a_stateless_servers_list_changes() {
    let (outer_dirs, inner_dirs) = (dirs(), dirs());
    let (url, manager, surfaces) = chain(&outer_dirs, &inner_dirs).await;
    let inner = Arc::clone(manager.server("inner").unwrap());
    let names = |tools: Vec<quiver_mcp::client::RemoteTool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    let before = names(inner.refresh().await.unwrap());
    assert!(before.contains(&"change_tools".to_string()) && !before.contains(&"added_later".to_string()), "{before:?}");

    let client = open_session(&url, "session-client").await;
    let mut call = CallStream::start(&client, 3, "change_tools", "p").await;
    call.run(&client, 3, None).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = names(inner.refresh().await.unwrap());
        if now.contains(&"added_later".to_string()) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the outer gateway never heard of the change: {now:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for surface in surfaces {
        surface.shutdown().await;
    }
}

/// A server that speaks only 2026-07-28 refuses `initialize` (-32022): with
/// the default `protocol` quiver opens it again with `server/discover`, so
/// it needs no `protocol = "auto"`; over stdio and over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_speaks_only_2026_07_28_opens_without_auto() {
    let only = [("QUIVER_TEST_MCP_STATELESS_ONLY", "1")];
    let (mut http_child, url) = crate::client_http::http_server_with(&only).await;
    let http = crate::client_http::http_config("over_http", &url, None);
    let stdio = test_server("over_stdio", &only);
    assert_eq!((stdio.protocol, http.protocol), (Protocol::Initialize, Protocol::Initialize), "the default");
    let dirs = dirs();
    let manager = manager(vec![stdio, http], dirs[0].path());
    let host = full_host(&manager);
    let mut ctx = crate::client_support::host_context(&host, dirs[1].path(), Mode::Agent);
    for name in ["over_stdio", "over_http"] {
        let tools = discover(&manager, name).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let (pid, _) = tools.iter().find(|(tool, _)| tool.ends_with("__pid")).unwrap_or_else(|| panic!("{tools:?}"));
        let status = manager.server(name).unwrap().status();
        assert_eq!(status.protocol.as_deref(), Some("2026-07-28"), "{name}: {status:?}");
        let answer = crate::client_support::call(&host, &mut ctx, pid, json!({})).await;
        assert!(crate::client_support::text(&answer).parse::<u32>().is_ok(), "{name}: {answer:?}");
    }
    manager.shutdown().await;
    http_child.kill().await.unwrap();
}
