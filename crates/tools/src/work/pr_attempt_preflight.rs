//! `pr_attempt_preflight`: does a recorded attempt still apply? `git apply
//! --check` on a private index holding the target commit's tree: the work tree
//! and the user's index are never touched.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::pr_attempt::{PrivateIndex, check};
use super::{WorkStore, blocking};

pub struct PrAttemptPreflight(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrAttemptPreflightInput {
    /// The attempt id, e.g. "pr-2".
    pub attempt_id: String,
    /// Check against this commit, branch or tag (default: the current HEAD).
    #[serde(default)]
    pub onto: Option<String>,
}

impl Tool for PrAttemptPreflight {
    type Input = PrAttemptPreflightInput;
    const NAME: &'static str = "pr_attempt_preflight";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS;

    // Before one vocabulary the input was `id`; `attempt_id` says whose.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "attempt_id")];

    fn description(&self) -> String {
        "Check that a recorded PR attempt still applies (git apply --check) to HEAD or a given commit, without touching the work tree; names conflicting hunks.".into()
    }

    async fn run(&self, input: PrAttemptPreflightInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let onto = input.onto.map(|o| o.trim().to_string()).filter(|o| !o.is_empty()).unwrap_or_else(|| "HEAD".into());
        if onto.starts_with('-') {
            return Err(ToolError::model(format!("`onto` {onto:?} is not a commit, branch or tag")));
        }
        let store = self.0.get()?;
        let id = input.attempt_id.trim().to_string();
        let (attempt, patch) = blocking(store, move |s| {
            let a = s.attempt(&id)?;
            let bytes = s.artifact_bytes(&a.patch_artifact)?;
            Ok((a, bytes))
        })
        .await?;
        let text = String::from_utf8_lossy(&patch).into_owned();
        let ix = PrivateIndex::new(ctx, "check that the attempt applies").await?;
        // The sandbox lets git read the store's artifact through a copy in the
        // private directory (the store lives outside the workspace).
        let copy = ix.scratch("attempt.patch");
        std::fs::write(&copy, &patch)
            .map_err(|e| ToolError::model(format!("cannot stage the patch for checking: {e}")))?;
        let result = check(&ix, &copy, &text, &onto).await?;
        let verdict = if result.applies {
            format!(
                "{} applies cleanly to {} ({}).",
                attempt.id,
                result.onto,
                &result.commit[..result.commit.len().min(12)]
            )
        } else {
            format!(
                "{} does NOT apply to {} ({}): {} conflicting hunk(s).",
                attempt.id,
                result.onto,
                &result.commit[..result.commit.len().min(12)],
                result.conflicts.len().max(result.errors.len().min(1))
            )
        };
        Ok(ToolOutput::json(json!({
            "attempt_id": attempt.id,
            "base_commit": attempt.base_commit,
            "onto": result.onto,
            "onto_commit": result.commit,
            "applies": result.applies,
            "verdict": verdict,
            "errors": result.errors,
            "conflicting_hunks": result.conflicts,
        })))
    }
}
