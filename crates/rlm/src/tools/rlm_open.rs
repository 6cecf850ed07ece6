//! `rlm_open`: starts a named Python REPL over a source and returns only
//! metadata (never the source itself).

use std::sync::Arc;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::{RlmConfig, millis};
use crate::hub::{RlmHub, check_name};
use crate::session::RlmSession;
use crate::source::{self, SourceSpec};

pub struct RlmOpen {
    pub hub: Arc<RlmHub>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlmOpenInput {
    /// Session name, used by rlm_eval/rlm_configure/rlm_close.
    pub name: String,
    /// A workspace file to load as `_context`.
    #[serde(default)]
    pub path: Option<String>,
    /// Inline text to load as `_context`.
    #[serde(default)]
    pub content: Option<String>,
    /// An http(s) URL to fetch and load.
    #[serde(default)]
    pub url: Option<String>,
    /// A ref from rlm_session_objects, e.g. "session://active/transcript".
    #[serde(default)]
    pub session_object: Option<String>,
}

impl Tool for RlmOpen {
    type Input = RlmOpenInput;
    const NAME: &'static str = "rlm_open";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities =
        Capabilities::RUNS_COMMANDS.union(Capabilities::GATES_ITSELF).union(Capabilities::NETWORK);

    fn description(&self) -> String {
        "Open a named, persistent Python REPL (sandboxed) over a file, inline content, URL or session object, loaded as `_context`; returns metadata only. Then run code with rlm_eval.".into()
    }

    async fn run(&self, input: RlmOpenInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_name(&input.name)?;
        self.hub.check_free(ctx, &input.name)?;
        let spec = SourceSpec::pick(
            input.path.as_deref(),
            input.content.as_deref(),
            input.url.as_deref(),
            input.session_object.as_deref(),
        )?;
        let source = source::load(ctx, spec).await?;
        let config = RlmConfig::new(&self.hub.child().model);
        let session =
            RlmSession::open(ctx, &input.name, source, config, 0, self.hub.child().secret_env.clone()).await?;
        // Two opens racing for one name: the later one loses, cleanly.
        self.hub.check_free(ctx, &input.name)?;
        let (python, sandbox, startup) = match session.repl() {
            Some(r) => (r.python_version.clone(), r.sandbox, r.startup),
            None => (String::new(), "unavailable", std::time::Duration::ZERO),
        };
        let mut body = session.source.meta.clone();
        if let Value::Object(map) = &mut body {
            map.insert("name".into(), json!(input.name));
            map.insert("python".into(), json!(python));
            map.insert("bound_as".into(), json!(["_context", "_ctx", "content"]));
            map.insert(
                "helpers".into(),
                json!([
                    "sub_query",
                    "sub_query_batch (max 16)",
                    "sub_query_map",
                    "sub_rlm",
                    "finalize(value, confidence=None)"
                ]),
            );
            map.insert("config".into(), session.config.to_json());
        }
        self.hub.insert(ctx, &input.name, session);
        Ok(ToolOutput::json(body).with_meta("sandbox", sandbox).with_meta("startup_ms", millis(startup)))
    }
}
