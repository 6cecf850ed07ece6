//! `exec_shell_cancel`: stop one background job, or all of them when asked explicitly,
//! each with its whole process group.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::shell::shell_jobs::ShellJobs;

/// How long a task gets to exit on SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(1);

pub struct ExecShellCancel;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecShellCancelInput {
    /// The job to stop.
    #[serde(default)]
    pub job_id: Option<String>,
    /// Stop every running background job (instead of job_id).
    #[serde(default)]
    pub all: Option<bool>,
}

impl Tool for ExecShellCancel {
    type Input = ExecShellCancelInput;
    const NAME: &'static str = "exec_shell_cancel";
    const DOMAIN: Domain = Domain::Shell;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // Before one vocabulary, a shell job was a `task_id` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task_id", "job_id")];

    fn description(&self) -> String {
        "Stop a background shell job and every process it started; all: true stops every running job.".into()
    }

    async fn run(&self, input: ExecShellCancelInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let jobs = ctx.session.state::<ShellJobs>();
        let all = input.all.unwrap_or(false);
        let targets = match (input.job_id.as_deref(), all) {
            (Some(_), true) => {
                return Err(ToolError::model("give either `job_id` or `all: true`, not both"));
            }
            (None, false) => {
                return Err(ToolError::model(
                    "name the job to stop with `job_id`, or pass `all: true` to stop every running job",
                ));
            }
            (Some(id), false) => vec![jobs.get(id)?],
            (None, true) => jobs.running(),
        };
        let mut lines = Vec::new();
        let mut stopped = Vec::new();
        for job in &targets {
            if let Some(exit) = job.exit() {
                lines.push(format!("{} had already exited (code {}); nothing to stop", job.id, exit.code));
                continue;
            }
            job.stop("cancelled", STOP_GRACE).await;
            stopped.push(Value::from(job.id.clone()));
            lines.push(format!("Stopped {} ({}) and its process group", job.id, job.command));
        }
        if lines.is_empty() {
            lines.push("No background job is running; nothing to stop".into());
        }
        let mut out = ToolOutput::text(lines.join("\n")).with_meta("cancelled", Value::Array(stopped));
        if let [job] = targets.as_slice() {
            out = job.metadata(out);
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "exec_shell_cancel_tests.rs"]
mod tests;
