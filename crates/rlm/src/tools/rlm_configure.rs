//! `rlm_configure`: a session's policy: output feedback and limit, eval and
//! child-query timeouts, nesting depth, child model, sharing.

use std::sync::Arc;
use std::time::Duration;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput, Unit};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::{Feedback, MAX_DEPTH, MAX_EVAL_TIMEOUT_SECS, MAX_OUTPUT_LIMIT, MAX_SUB_QUERY_TIMEOUT_SECS};
use crate::hub::RlmHub;

pub struct RlmConfigure {
    pub hub: Arc<RlmHub>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlmConfigureInput {
    /// The session's name.
    pub name: String,
    /// full: printed output inline up to the limit; handle: always as a var_handle.
    #[serde(default)]
    pub output_feedback: Option<Feedback>,
    /// Characters of output shown inline (100-100000).
    #[serde(default)]
    pub output_limit_chars: Option<usize>,
    /// Wall-time limit of one rlm_eval in ms (1000-600000).
    #[serde(default)]
    pub eval_timeout_ms: Option<u64>,
    /// Timeout of each child query in ms; governs every sub_query* call (1000-900000).
    #[serde(default)]
    pub sub_query_timeout_ms: Option<u64>,
    /// How deep sub_rlm may nest (0-3).
    #[serde(default)]
    pub max_depth: Option<u32>,
    /// Let other sessions of this process (sub-agents) use it by name.
    #[serde(default)]
    pub shared: Option<bool>,
    /// Child model id for sub_query* (default deepseek-v4-flash).
    #[serde(default)]
    pub child_model: Option<String>,
}

fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    field: &str,
    v: Option<T>,
    lo: T,
    hi: T,
) -> Result<Option<T>, ToolError> {
    match v {
        Some(v) if v < lo || v > hi => {
            Err(ToolError::model(format!("`{field}` must be between {lo} and {hi}, got {v}")))
        }
        other => Ok(other),
    }
}

impl Tool for RlmConfigure {
    type Input = RlmConfigureInput;
    const NAME: &'static str = "rlm_configure";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // Before one vocabulary these timeouts were in seconds, as recorded calls say.
    const INPUT_ALIASES: &'static [InputAlias] = &[
        InputAlias::converted("eval_timeout_secs", "eval_timeout_ms", Unit::SecondsToMs),
        InputAlias::converted("sub_query_timeout_secs", "sub_query_timeout_ms", Unit::SecondsToMs),
    ];

    fn description(&self) -> String {
        "Set an RLM session's output feedback and limit, eval and child-query timeouts (sub_query_timeout_ms), sub_rlm depth, child model and sharing; returns the settings.".into()
    }

    async fn run(&self, input: RlmConfigureInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Check everything before changing anything: a bad field changes nothing.
        let limit = in_range("output_limit_chars", input.output_limit_chars, 100, MAX_OUTPUT_LIMIT)?;
        let eval = in_range("eval_timeout_ms", input.eval_timeout_ms, 1000, MAX_EVAL_TIMEOUT_SECS * 1000)?;
        let sub =
            in_range("sub_query_timeout_ms", input.sub_query_timeout_ms, 1000, MAX_SUB_QUERY_TIMEOUT_SECS * 1000)?;
        let depth = in_range("max_depth", input.max_depth, 0, MAX_DEPTH)?;
        if let Some(m) = &input.child_model
            && (m.trim().is_empty() || m.len() > 200)
        {
            return Err(ToolError::model("`child_model` must be a model id (1-200 characters)"));
        }
        let handle = self.hub.get(ctx, &input.name)?;
        let Ok(mut session) = handle.try_lock() else {
            return Err(ToolError::model(format!(
                "RLM session `{}` is running an eval; configure it after",
                input.name
            )));
        };
        let c = &mut session.config;
        if let Some(f) = input.output_feedback {
            c.feedback = f;
        }
        if let Some(v) = limit {
            c.output_limit = v;
        }
        if let Some(v) = eval {
            c.eval_timeout = Duration::from_millis(v);
        }
        if let Some(v) = sub {
            c.sub_query_timeout = Duration::from_millis(v);
        }
        if let Some(v) = depth {
            c.max_depth = v;
        }
        if let Some(m) = input.child_model {
            c.child_model = m.trim().to_string();
        }
        if let Some(shared) = input.shared {
            c.shared = shared;
            self.hub.set_shared(&input.name, &handle, shared);
        }
        Ok(ToolOutput::json(session.config.to_json()).with_meta("session", input.name))
    }
}
