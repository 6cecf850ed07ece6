//! `task_shell_wait`: poll a background task; once it has finished, optionally
//! record its result as a named gate (verification evidence kept in the session).

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::shell::exec_shell::MAX_TIMEOUT_MS;
use crate::shell::shell_jobs::{Gate, ShellJobs, gate_json, poll_output, timeout_arg};

/// Longer than exec_shell_wait's default: these tasks are builds and test suites.
pub const DEFAULT_TASK_WAIT_MS: u64 = 30_000;
const MAX_GATE_NAME: usize = 64;

pub struct TaskShellWait;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskShellWaitInput {
    /// Task id from task_shell_start or exec_shell.
    pub task_id: String,
    /// Longest wait, in ms (default 30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Record the finished task's result under this gate name (waits for the exit).
    #[serde(default)]
    pub gate: Option<GateArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateArg {
    /// Gate name, e.g. "tests" or "build".
    pub name: String,
}

impl Tool for TaskShellWait {
    type Input = TaskShellWaitInput;
    const NAME: &'static str = "task_shell_wait";
    const DOMAIN: Domain = Domain::Shell;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Wait for a background task and return its new output and status; with gate: {name} on a finished task, \
         record command, exit code, duration and log file as a named gate."
            .into()
    }

    async fn run(&self, input: TaskShellWaitInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let timeout = timeout_arg(input.timeout_ms, DEFAULT_TASK_WAIT_MS, MAX_TIMEOUT_MS)?;
        let gate_name = match &input.gate {
            Some(gate) => {
                let name = gate.name.trim();
                if name.is_empty() || name.chars().count() > MAX_GATE_NAME {
                    return Err(ToolError::model(format!("`gate.name` must be 1 to {MAX_GATE_NAME} characters")));
                }
                Some(name.to_string())
            }
            None => None,
        };
        let jobs = ctx.session.state::<ShellJobs>();
        let job = jobs.get(&input.task_id)?;
        // A gate records a result, so wait for the result rather than for output.
        if gate_name.is_some() {
            job.wait_exit(timeout).await;
        } else {
            job.wait_output(timeout).await;
        }
        let mut out = poll_output(&job);
        let Some(name) = gate_name else { return Ok(out) };
        let Some(exit) = job.exit() else {
            if let serde_json::Value::String(text) = &mut out.content {
                text.push_str(&format!(
                    "\nGate `{name}` not recorded: {} is still running; wait again to record it.",
                    job.id
                ));
            }
            return Ok(out.with_meta("gate", serde_json::Value::Null));
        };
        let gate = Gate {
            name: name.clone(),
            task_id: job.id.clone(),
            command: job.command.clone(),
            cwd: job.cwd_shown.clone(),
            exit_code: exit.code,
            passed: exit.code == 0 && job.stopped_because().is_none(),
            duration_ms: exit.duration.as_millis() as u64,
            log_file: job.log_shown(),
        };
        if let serde_json::Value::String(text) = &mut out.content {
            text.push_str(&format!(
                "\nGate `{name}` recorded: {} (exit code {}, {:.2} s); log: {}",
                if gate.passed { "passed" } else { "failed" },
                gate.exit_code,
                exit.duration.as_secs_f64(),
                gate.log_file
            ));
        }
        out = out.with_meta("gate", gate_json(&gate));
        jobs.record_gate(gate);
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "task_shell_wait_tests.rs"]
mod tests;
