//! A session's policy (what `rlm_configure` changes) and its running totals
//! (what `rlm_close` reports).

use std::time::Duration;

use crate::child::ChildUsage;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const DEFAULT_EVAL_TIMEOUT_SECS: u64 = 60;
pub const MAX_EVAL_TIMEOUT_SECS: u64 = 600;
pub const DEFAULT_OUTPUT_LIMIT: usize = 8000;
pub const MAX_OUTPUT_LIMIT: usize = 100_000;
pub const DEFAULT_SUB_QUERY_TIMEOUT_SECS: u64 = 120;
pub const MAX_SUB_QUERY_TIMEOUT_SECS: u64 = 900;
pub const DEFAULT_MAX_DEPTH: u32 = 1;
pub const MAX_DEPTH: u32 = 3;

/// How an eval's printed output reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Feedback {
    /// Inline up to the output limit; the rest kept behind a text var handle.
    Full,
    /// Never inline: printed output always comes back as a text var handle card.
    Handle,
}

impl Feedback {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RlmConfig {
    pub eval_timeout: Duration,
    pub output_limit: usize,
    pub feedback: Feedback,
    pub sub_query_timeout: Duration,
    pub max_depth: u32,
    /// Other engine sessions of this process (sub-agents) may use it by name.
    pub shared: bool,
    pub child_model: String,
}

impl RlmConfig {
    pub fn new(child_model: &str) -> Self {
        RlmConfig {
            eval_timeout: Duration::from_secs(DEFAULT_EVAL_TIMEOUT_SECS),
            output_limit: DEFAULT_OUTPUT_LIMIT,
            feedback: Feedback::Full,
            sub_query_timeout: Duration::from_secs(DEFAULT_SUB_QUERY_TIMEOUT_SECS),
            max_depth: DEFAULT_MAX_DEPTH,
            shared: false,
            child_model: child_model.to_string(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "eval_timeout_ms": u64::try_from(self.eval_timeout.as_millis()).unwrap_or(u64::MAX),
            "output_limit_chars": self.output_limit,
            "output_feedback": self.feedback.as_str(),
            "sub_query_timeout_ms": u64::try_from(self.sub_query_timeout.as_millis()).unwrap_or(u64::MAX),
            "max_depth": self.max_depth,
            "shared": self.shared,
            "child_model": self.child_model,
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RlmStats {
    pub evals: u64,
    pub eval_errors: u64,
    pub timeouts: u64,
    pub restarts: u64,
    pub child_queries: u64,
    pub child_failures: u64,
    pub usage: ChildUsage,
    pub eval_time: Duration,
    pub finalized: u64,
}

impl RlmStats {
    pub fn to_json(&self, open_for: Duration) -> Value {
        json!({
            "evals": self.evals,
            "eval_errors": self.eval_errors,
            "timeouts": self.timeouts,
            "restarts": self.restarts,
            "finalized": self.finalized,
            "child_queries": self.child_queries,
            "child_failures": self.child_failures,
            "input_tokens": self.usage.figure(|u| u.input_tokens),
            "output_tokens": self.usage.figure(|u| u.output_tokens),
            "cache_hit_tokens": self.usage.figure(|u| u.cache_hit_tokens),
            "usage_unreported": self.usage.unreported,
            "eval_wall_ms": millis(self.eval_time),
            "open_wall_ms": millis(open_for),
        })
    }
}

pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::Feedback;

    #[test]
    fn strum_names_are_the_serde_names() {
        quiver_testkit::assert_strum_matches_serde::<Feedback>();
    }
}
