//! A host with the native tools plus the RLM provider, over a temp workspace;
//! a child model pointed at a scripted server.

use std::sync::Arc;
use std::time::Duration;

use quiver_agent::scripted::ScriptedServer;
use quiver_agent::{AgentConfig, CliOverrides, HttpOptions, Provider, RetryPolicy};
use quiver_engine::permissions::trust::TrustStore;
use quiver_engine::{Audience, EngineHost, Manifest, ToolContext, ToolResult, Workspace};
use quiver_rlm::{ChildModel, DEFAULT_CHILD_MODEL, RlmProvider};
use serde_json::Value;

pub struct H {
    pub dir: tempfile::TempDir,
    pub ctx: ToolContext,
    _host: Arc<EngineHost>,
}

/// `python3`, or a visible skip.
pub fn python() -> bool {
    quiver_testkit::program_or_skip("python3", "apt-get install python3, or brew install python").is_some()
}

pub fn harness(child: ChildModel) -> H {
    let dir = tempfile::tempdir().unwrap();
    let registry = quiver_tools::native_registry().unwrap();
    let host = EngineHost::with_trust(
        registry,
        Manifest::builtin().unwrap(),
        vec![RlmProvider::shared(child)],
        TrustStore::ephemeral(),
    )
    .unwrap();
    let ctx = host.engine().context(Workspace::new(dir.path()).unwrap(), Audience::default());
    H { dir, ctx, _host: host }
}

/// No child model configured: the REPL works, queries fail.
pub fn plain() -> H {
    harness(ChildModel::unavailable("none configured in this test"))
}

pub fn scripted_child(server: &ScriptedServer, secret_env: Vec<String>) -> ChildModel {
    let url = server.base_url();
    ChildModel::new(
        DEFAULT_CHILD_MODEL,
        Arc::new(move || {
            let cli =
                CliOverrides { provider: Some("deepseek".into()), base_url: Some(url.clone()), ..Default::default() };
            let config = AgentConfig::load(&[], &cli).map_err(|e| e.to_string())?;
            let options = HttpOptions {
                request_timeout: Duration::from_secs(30),
                idle_timeout: Duration::from_secs(30),
                retry: RetryPolicy {
                    max_attempts: 1,
                    base_delay: Duration::from_millis(10),
                    max_delay: Duration::from_millis(10),
                    max_total: Duration::from_secs(1),
                },
            };
            let provider: Box<dyn Provider> =
                config.build_provider(&|_| Some("sk-test-key".into()), options).map_err(|e| e.to_string())?;
            Ok(Arc::from(provider))
        }),
        secret_env,
    )
}

impl H {
    pub async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.ctx.call(name, args).await.unwrap()
    }

    /// A successful call's JSON content (panics with the result otherwise).
    pub async fn ok(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args).await;
        assert!(!r.is_error, "{name} failed: {}", r.content_text());
        r.content
    }

    pub async fn err(&self, name: &str, args: Value) -> ToolResult {
        let r = self.call(name, args).await;
        assert!(r.is_error, "{name} should have failed: {}", r.content_text());
        r
    }

    pub async fn eval_ok(&self, session: &str, code: &str) -> Value {
        self.ok("rlm_eval", serde_json::json!({"name": session, "code": code})).await
    }

    pub fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.dir.path().join(rel), text).unwrap();
    }
}
