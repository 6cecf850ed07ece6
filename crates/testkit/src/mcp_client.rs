//! The recording MCP test client shared by the in-process server tests
//! (`crates/mcp/tests/server_*.rs`) and the binary tests of `quiver mcp serve`
//! (`crates/cli/tests/mcp_*.rs`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::json;
use tokio::sync::Notify;

/// A client that records list_changed notifications and elicitation questions.
#[derive(Clone, Default)]
pub struct TestClient {
    /// `Some(answer)`: advertises elicitation and answers every form with it.
    pub elicitation: Option<bool>,
    pub list_changed: Arc<Notify>,
    pub list_changed_count: Arc<Mutex<usize>>,
    pub questions: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    pub fn answering(answer: bool) -> Self {
        TestClient { elicitation: Some(answer), ..Default::default() }
    }

    pub fn list_changes(&self) -> usize {
        *self.list_changed_count.lock().unwrap()
    }

    /// Waits for a list_changed beyond the `seen_before` already counted. The
    /// notification is the event; the 60 s ceiling only turns a lost one into
    /// a failure instead of a hang, and is far above any delay of a loaded machine.
    pub async fn wait_list_changed(&self, seen_before: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while self.list_changes() <= seen_before {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            assert!(!left.is_zero(), "no notifications/tools/list_changed within 60 s");
            let _ = tokio::time::timeout(left.min(Duration::from_millis(100)), self.list_changed.notified()).await;
        }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicitation.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("quiver-test-client", "0.0.0"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.list_changed_count.lock().unwrap() += 1;
        self.list_changed.notify_waiters();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.questions.lock().unwrap().push(message.clone());
        }
        let mut result = ElicitResult::new(if self.elicitation.is_some() {
            ElicitationAction::Accept
        } else {
            ElicitationAction::Decline
        });
        result.content = self.elicitation.map(|answer| json!({"approve": answer}));
        Ok(result)
    }
}

/// A connected client driven by a [`TestClient`].
pub type Client = rmcp::service::RunningService<RoleClient, TestClient>;

pub async fn list(client: &Client) -> Vec<rmcp::model::Tool> {
    client.list_all_tools().await.expect("tools/list")
}

pub async fn call(client: &Client, name: &str, args: serde_json::Value) -> rmcp::model::CallToolResult {
    let mut params = rmcp::model::CallToolRequestParams::new(name.to_string());
    if let serde_json::Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client.call_tool(params).await.expect("tools/call")
}
