//! `rlm_eval`: runs Python in a session, bounded by the session's wall-time
//! and output limits. Large output, values and `finalize` results come back
//! as var handles (`handle_read`).

use std::sync::Arc;

use quiver_engine::spill::VarHandles;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::{Feedback, RlmConfig, millis};
use crate::hub::RlmHub;
use crate::session::EvalOutcome;

pub struct RlmEval {
    pub hub: Arc<RlmHub>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlmEvalInput {
    /// The session's name.
    pub name: String,
    /// Python to run; state persists across evals. A trailing expression's repr is returned.
    pub code: String,
}

impl Tool for RlmEval {
    type Input = RlmEvalInput;
    const NAME: &'static str = "rlm_eval";
    const DOMAIN: Domain = Domain::Subagent;
    const RISK: Risk = Risk::External;
    const CAPABILITIES: Capabilities =
        Capabilities::RUNS_COMMANDS.union(Capabilities::GATES_ITSELF).union(Capabilities::NETWORK);

    fn description(&self) -> String {
        "Run Python in an RLM session (`_context` holds the source). Helpers: sub_query(prompt, context), sub_query_batch(prompts) (at most 16 per call, concurrent), sub_query_map, sub_rlm, finalize(value) (returns a var_handle for handle_read). Wall-time and output limited.".into()
    }

    async fn run(&self, input: RlmEvalInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let handle = self.hub.get(ctx, &input.name)?;
        let Ok(mut session) = handle.try_lock() else {
            return Err(ToolError::model(format!(
                "RLM session `{}` is running another eval; wait for it to finish",
                input.name
            )));
        };
        let outcome = session.eval(ctx, &input.code, &self.hub.fanout).await?;
        let vars = ctx.session.state::<VarHandles>();
        let body = shape(&outcome, &session.config, &vars);
        let output = ToolOutput::json(body)
            .with_meta("session", input.name.clone())
            .with_meta("elapsed_ms", millis(outcome.elapsed))
            // One object under a shared key: the agent loop passes it on to
            // `quiver exec --json` events (and the transcript keeps it).
            .with_meta(
                "child_usage",
                json!({
                    "queries": outcome.child_queries,
                    "input_tokens": outcome.usage.figure(|u| u.input_tokens),
                    "output_tokens": outcome.usage.figure(|u| u.output_tokens),
                    "cache_hit_tokens": outcome.usage.figure(|u| u.cache_hit_tokens),
                    "usage_unreported": outcome.usage.unreported,
                }),
            );
        if outcome.error.is_some() { Err(ToolError::Report(output)) } else { Ok(output) }
    }
}

/// Inline up to `limit` characters; the whole text behind a handle when longer
/// (or always, in `handle` feedback).
fn bounded(map: &mut Map<String, Value>, key: &str, text: &str, limit: usize, always_handle: bool, vars: &VarHandles) {
    if text.is_empty() {
        return;
    }
    let chars = text.chars().count();
    if chars <= limit && !always_handle {
        map.insert(key.into(), json!(text));
        return;
    }
    let payload = Value::String(text.to_string());
    let handle = vars.register(payload.clone());
    map.insert(format!("{key}_handle"), VarHandles::card(&handle, &payload));
    if !always_handle {
        let shown: String = text.chars().take(limit).collect();
        map.insert(
            key.into(),
            json!(format!("{shown}\n… [{} more characters; the whole text is var_handle `{handle}`]", chars - limit)),
        );
    }
}

fn shape(outcome: &EvalOutcome, config: &RlmConfig, vars: &VarHandles) -> Value {
    let mut map = Map::new();
    let quiet = config.feedback == Feedback::Handle;
    bounded(&mut map, "stdout", &outcome.stdout, config.output_limit, quiet, vars);
    bounded(&mut map, "stderr", &outcome.stderr, config.output_limit, quiet, vars);
    for (key, dropped) in
        [("stdout_dropped_chars", outcome.stdout_dropped), ("stderr_dropped_chars", outcome.stderr_dropped)]
    {
        if dropped > 0 {
            map.insert(key.into(), json!(dropped));
        }
    }
    if let Some(value) = &outcome.value {
        bounded(&mut map, "value", value, config.output_limit, false, vars);
        if outcome.value_chars > value.chars().count() as u64 {
            map.insert("value_chars".into(), json!(outcome.value_chars));
        }
    }
    if let Some((value, confidence)) = &outcome.final_value {
        let handle = vars.register(value.clone());
        let mut card = VarHandles::card(&handle, value);
        if let (Value::Object(c), false) = (&mut card, confidence.is_null()) {
            c.insert("confidence".into(), confidence.clone());
        }
        map.insert("final".into(), card);
    }
    if let Some(error) = &outcome.error {
        let error = if outcome.timed_out && outcome.restarted.is_none() {
            format!(
                "stopped at the wall-time limit of {}s (interrupted; the session's variables are kept): {error}",
                config.eval_timeout.as_secs()
            )
        } else {
            error.clone()
        };
        bounded(&mut map, "error", &error, config.output_limit, false, vars);
    }
    if outcome.timed_out {
        map.insert("timed_out".into(), json!(true));
    }
    if let Some(why) = &outcome.restarted {
        map.insert("restarted".into(), json!(why));
    }
    if map.is_empty() {
        map.insert("stdout".into(), json!(""));
    }
    Value::Object(map)
}
