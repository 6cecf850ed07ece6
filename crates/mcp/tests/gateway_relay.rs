//! The gateway's relay, against server-everything: progress from a
//! long-running downstream tool reaches the client in front of quiver, and a
//! downstream `sampling/createMessage` is answered by that client when it
//! declared sampling and refused with a reason when it did not. Skips when the
//! npm packages are not installed (fails under `QUIVER_REQUIRE_ALL`).

#![allow(clippy::unwrap_used, clippy::expect_used, deprecated)]

use std::sync::{Arc, Mutex};

use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::server::Surface;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, Implementation,
    ProgressNotificationParam, ProtocolVersion, SamplingMessage,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

use crate::client_support::{full_host, manager, stdio_server};

/// A client that records progress and, when `sampling`, answers every
/// sampling request with a fixed text.
#[derive(Clone, Default)]
struct Recorder {
    sampling: bool,
    progress: Arc<Mutex<Vec<f64>>>,
    prompts: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.sampling {
            ClientCapabilities::builder().enable_sampling().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("relay-test", "0.0.0"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.progress);
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.prompts.lock().unwrap().push(serde_json::to_string(&params.messages).unwrap());
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("sampled by the upstream client"),
            "test-model".into(),
        ))
    }
}

async fn gateway(client: Recorder) -> Option<(rmcp::service::RunningService<RoleClient, Recorder>, Arc<Surface>)> {
    let script = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js")?;
    let script = script.to_string_lossy().to_string();
    let cache = tempfile::tempdir().unwrap().keep();
    let ws = tempfile::tempdir().unwrap().keep();
    let m = manager(vec![stdio_server("everything", "node", &[&script, "stdio"], &[])], &cache);
    let host = full_host(&m);
    let surface = Arc::new(Surface::hosted(
        host,
        m,
        Workspace::new(&ws).unwrap(),
        Audience { mode: Mode::Yolo, ..Audience::default() },
    ));
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let serving = Arc::clone(&surface);
    tokio::spawn(async move {
        let _ = quiver_mcp::server::serve_io(serving, server_read, server_write).await;
    });
    let (client_read, client_write) = tokio::io::split(client_io);
    let client = client.serve((client_read, client_write)).await.unwrap();
    // A fresh machine: the first search discovers the server's tools.
    // (In yolo mode the server's tools join the head, so the search itself
    // lists none of them; what matters is that it waited for them.)
    let found = call(&client, "tool_search", json!({"query": "long running operation progress"})).await;
    assert!(!found.to_string().contains("still starting"), "{found}");
    Some((client, surface))
}

async fn call(client: &rmcp::service::RunningService<RoleClient, Recorder>, name: &str, args: Value) -> Value {
    let Value::Object(map) = args else { unreachable!() };
    let params = rmcp::model::CallToolRequestParams::new(name.to_string()).with_arguments(map);
    serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_and_sampling_reach_the_upstream_client() {
    let recorder = Recorder { sampling: true, ..Default::default() };
    let Some((client, surface)) = gateway(recorder.clone()).await else { return };

    let done =
        call(&client, "mcp__everything__trigger-long-running-operation", json!({"duration": 1, "steps": 3})).await;
    assert_ne!(done["isError"], true, "{done}");
    // Notifications and the answer travel separately; the ceiling only turns a
    // lost notification into a failure.
    let seen = crate::client_support::eventually(|| recorder.progress.lock().unwrap().len() >= 3).await;
    let progress = recorder.progress.lock().unwrap().clone();
    assert!(seen, "{progress:?}");
    assert_eq!(progress, vec![1.0, 2.0, 3.0], "every downstream step reached the client");

    let sampled =
        call(&client, "mcp__everything__trigger-sampling-request", json!({"prompt": "hello", "maxTokens": 5})).await;
    assert_ne!(sampled["isError"], true, "{sampled}");
    assert!(sampled.to_string().contains("sampled by the upstream client"), "{sampled}");
    assert!(recorder.prompts.lock().unwrap()[0].contains("hello"));
    client.cancel().await.unwrap();
    surface.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_is_refused_with_a_reason_when_the_client_cannot_sample() {
    let Some((client, surface)) = gateway(Recorder::default()).await else { return };
    let refused = call(&client, "mcp__everything__trigger-sampling-request", json!({"prompt": "hello"})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused.to_string().contains("did not declare"), "{refused}");
    client.cancel().await.unwrap();
    surface.shutdown().await;
}
