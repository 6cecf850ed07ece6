//! A cloned repository's `.mcp.json` once started its own
//! servers unasked. A project-defined server now starts only after the user's
//! approval (asked through the host), remembered per workspace and exact
//! configuration; a user-defined one starts unasked; deny rules hold for both.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use quiver_engine::permissions::Approver;
use quiver_engine::permissions::trust::{Source, TrustStore};
use quiver_engine::{Audience, EngineHost, Manifest, Mode, Workspace};
use quiver_mcp::client::ToolCache;
use quiver_mcp::config::ConfigSources;
use quiver_mcp::{McpConfig, McpManager, McpProvider};
use serde_json::json;

use crate::client_support::{TEST_SERVER, native_registry, text};

#[derive(Default)]
struct Recorder {
    yes: bool,
    asked: Mutex<Vec<String>>,
}

impl Approver for Recorder {
    fn approve<'a>(&'a self, question: &'a str) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        self.asked.lock().unwrap().push(question.to_string());
        Box::pin(async move { self.yes })
    }
}

fn write_project_config(ws: &std::path::Path, greeting: &str) {
    let config = json!({"mcpServers": {"proj": {"command": TEST_SERVER, "args": [], "env": {"GREETING": greeting}}}});
    std::fs::write(ws.join(".mcp.json"), config.to_string()).unwrap();
}

fn load(ws: &std::path::Path) -> McpConfig {
    let sources = ConfigSources {
        files: vec![ws.join(".mcp.json")],
        project_files: vec![ws.join(".mcp.json")],
        workspace: Some(ws.to_path_buf()),
    };
    McpConfig::load(&sources).unwrap()
}

struct Setup {
    manager: Arc<McpManager>,
    host: Arc<EngineHost>,
}

fn setup(ws: &std::path::Path, cache: &std::path::Path, trust_file: &std::path::Path, manifest: &str) -> Setup {
    let manager = McpManager::with_cache(load(ws), ToolCache::at(cache));
    let mut m = Manifest::builtin().unwrap();
    m.overlay_toml(manifest).unwrap();
    let host =
        EngineHost::with_trust(native_registry(), m, vec![McpProvider::shared(&manager)], TrustStore::at(trust_file))
            .unwrap();
    Setup { manager, host }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_server_starts_only_after_approval_which_is_remembered() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let trust_file = state.path().join("trust.json");
    write_project_config(ws.path(), "one");
    assert_eq!(load(ws.path()).servers["proj"].trust, Source::Project);

    // Nobody to ask: refused with the way to trust it, and nothing started.
    let s = setup(ws.path(), &state.path().join("cache"), &trust_file, "");
    let ctx = s.host.context(Workspace::new(ws.path()).unwrap(), Audience::default());
    let refused = ctx.call("mcp_discover", json!({"server": "proj"})).await.unwrap();
    assert!(refused.is_error, "{}", text(&refused));
    assert!(text(&refused).contains("quiver mcp trust proj"), "{}", text(&refused));
    assert_eq!(s.manager.server("proj").unwrap().status().starts, 0, "the server must not have started");

    // The user declines: still nothing started.
    let mut ctx = s.host.context(Workspace::new(ws.path()).unwrap(), Audience::default());
    let no = Arc::new(Recorder::default());
    ctx.approver = Some(no.clone());
    let declined = ctx.call("mcp_discover", json!({"server": "proj"})).await.unwrap();
    assert!(declined.is_error && text(&declined).contains("declined"), "{}", text(&declined));
    assert_eq!(s.manager.server("proj").unwrap().status().starts, 0);
    assert!(no.asked.lock().unwrap()[0].contains("defined by the project"), "{:?}", no.asked.lock().unwrap());

    // The user approves: it starts, and the approval is remembered.
    let yes = Arc::new(Recorder { yes: true, ..Recorder::default() });
    ctx.approver = Some(yes.clone());
    let ok = ctx.call("mcp_discover", json!({"server": "proj"})).await.unwrap();
    assert!(!ok.is_error, "{}", text(&ok));
    assert_eq!(yes.asked.lock().unwrap().len(), 1);
    assert_eq!(s.manager.server("proj").unwrap().status().starts, 1);
    s.manager.shutdown().await;

    // A new session, nobody to ask: the remembered approval lets it start.
    let s = setup(ws.path(), &state.path().join("cache"), &trust_file, "");
    let ctx = s.host.context(Workspace::new(ws.path()).unwrap(), Audience::default());
    let echoed = ctx.call("mcp__proj__echo", json!({"text": "hi"})).await.unwrap();
    assert!(!echoed.is_error, "{}", text(&echoed));
    s.manager.shutdown().await;

    // An edited config is a different thing to trust: asked about again.
    write_project_config(ws.path(), "two");
    let s = setup(ws.path(), &state.path().join("cache"), &trust_file, "");
    let ctx = s.host.context(Workspace::new(ws.path()).unwrap(), Audience::default());
    let again = ctx.call("mcp_discover", json!({"server": "proj"})).await.unwrap();
    assert!(again.is_error && text(&again).contains("needs approval"), "{}", text(&again));
    assert_eq!(s.manager.server("proj").unwrap().status().starts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_rules_stop_any_server_launch_even_in_yolo() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write_project_config(ws.path(), "one");
    let deny = format!("[exec_policy]\ndeny_prefixes = [\"{TEST_SERVER}\"]\n");
    let s = setup(ws.path(), &state.path().join("cache"), &state.path().join("trust.json"), &deny);
    let ctx = s.host.context(Workspace::new(ws.path()).unwrap(), Audience { mode: Mode::Yolo, ..Audience::default() });
    let refused = ctx.call("mcp_discover", json!({"server": "proj"})).await.unwrap();
    assert!(refused.is_error && text(&refused).contains("deny rule"), "{}", text(&refused));
    assert_eq!(s.manager.server("proj").unwrap().status().starts, 0);
}
