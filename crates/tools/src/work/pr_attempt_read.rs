//! `pr_attempt_read`: one PR attempt, with its patch (bounded) and artifact.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use super::{WorkStore, blocking};

const MAX_PATCH_CHARS: usize = 16_000;

pub struct PrAttemptRead(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrAttemptReadInput {
    /// The attempt id, e.g. "pr-2".
    pub attempt_id: String,
}

impl Tool for PrAttemptRead {
    type Input = PrAttemptReadInput;
    const NAME: &'static str = "pr_attempt_read";
    const DOMAIN: Domain = Domain::Git;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    // Before one vocabulary the input was `id`; `attempt_id` says whose.
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("id", "attempt_id")];

    fn description(&self) -> String {
        "Read one recorded PR attempt: metadata and its patch (large patches summarized; the artifact holds all)."
            .into()
    }

    async fn run(&self, input: PrAttemptReadInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = self.0.get()?;
        let id = input.attempt_id.trim().to_string();
        let (attempt, artifact, patch) = blocking(store, move |s| {
            let a = s.attempt(&id)?;
            let art = s.artifact(&a.patch_artifact)?;
            let bytes = s.artifact_bytes(&a.patch_artifact)?;
            Ok((a, art, bytes))
        })
        .await?;
        let text = String::from_utf8_lossy(&patch);
        let shown = if text.chars().count() > MAX_PATCH_CHARS { artifact.summary.clone() } else { text.into_owned() };
        Ok(ToolOutput::json(json!({
            "attempt": attempt,
            "patch": shown,
            "patch_path": artifact.path,
            "patch_bytes": artifact.bytes,
        })))
    }
}
