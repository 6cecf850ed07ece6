//! `exec_shell_wait`: a background job's output since the last poll, and its status.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::shell::exec_shell::MAX_TIMEOUT_MS;
use crate::shell::shell_jobs::{ShellJobs, poll_output, timeout_arg};

pub const DEFAULT_WAIT_MS: u64 = 5_000;

pub struct ExecShellWait;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecShellWaitInput {
    /// Job id from exec_shell with background: true.
    pub job_id: String,
    /// Longest wait for new output or exit, in ms (default 5000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
}

impl Tool for ExecShellWait {
    type Input = ExecShellWaitInput;
    const NAME: &'static str = "exec_shell_wait";
    const DOMAIN: Domain = Domain::Shell;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    // Before one vocabulary, a shell job was a `task_id` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task_id", "job_id")];

    fn description(&self) -> String {
        "Wait for a background job: returns its output since the last poll and whether it is still running or exited (with exit code).".into()
    }

    async fn run(&self, input: ExecShellWaitInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout = timeout_arg(input.timeout_ms, DEFAULT_WAIT_MS, MAX_TIMEOUT_MS)?;
        let job = ctx.session.state::<ShellJobs>().get(&input.job_id)?;
        job.wait_output(timeout).await;
        Ok(poll_output(&job))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "exec_shell_wait_tests.rs"]
mod tests;
