//! `exec_shell_interact`: write to a background job's stdin and read what it answers.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::shell::exec_shell::MAX_TIMEOUT_MS;
use crate::shell::shell_jobs::{ShellJobs, poll_output, timeout_arg};

pub const DEFAULT_INTERACT_MS: u64 = 2_000;

pub struct ExecShellInteract;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecShellInteractInput {
    /// Job id of a running background job.
    pub job_id: String,
    /// Text for its stdin, sent as is (end a line with \n).
    pub input: String,
    /// Longest wait for the answer, in ms (default 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Then close stdin (end-of-file; Ctrl-D on a terminal).
    #[serde(default)]
    pub close_stdin: Option<bool>,
}

impl Tool for ExecShellInteract {
    type Input = ExecShellInteractInput;
    const NAME: &'static str = "exec_shell_interact";
    const DOMAIN: Domain = Domain::Shell;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS;
    // Before one vocabulary, a shell job was a `task_id` (recorded calls say so).
    const INPUT_ALIASES: &'static [InputAlias] = &[InputAlias::rename("task_id", "job_id")];

    fn description(&self) -> String {
        "Send input to a running background job's stdin and return the output that follows.".into()
    }

    async fn run(&self, input: ExecShellInteractInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout = timeout_arg(input.timeout_ms, DEFAULT_INTERACT_MS, MAX_TIMEOUT_MS)?;
        let close = input.close_stdin.unwrap_or(false);
        if input.input.is_empty() && !close {
            return Err(ToolError::model(
                "`input` is empty; give text to send (end a line with \\n), or use exec_shell_wait to just read output",
            ));
        }
        let job = ctx.session.state::<ShellJobs>().get(&input.job_id)?;
        if let Some(exit) = job.exit() {
            return Err(ToolError::model(format!(
                "{} has already exited (code {}) and reads no more input; read its remaining output with exec_shell_wait",
                job.id, exit.code
            )));
        }
        let sent_at = std::time::Instant::now();
        if !input.input.is_empty() {
            job.send_input(input.input.as_bytes())?;
        }
        if close {
            job.close_stdin()?;
        }
        job.wait_output_since(sent_at, timeout).await;
        Ok(poll_output(&job).with_meta("input_bytes", input.input.len()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "exec_shell_interact_tests.rs"]
mod tests;
