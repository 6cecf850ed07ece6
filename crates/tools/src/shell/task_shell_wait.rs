//! `task_shell_wait`: poll a background job; once it has finished, optionally
//! record its result as a named gate: in the session always, and on the
//! durable task (the active one, or `task_id`) with the same evidence
//! `task_gate_run` keeps: classification, summary, the log as an artifact.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncReadExt;

use quiver_durable::NewGate;
use quiver_engine::{Capabilities, Domain, InputAlias, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::shell::exec_shell::MAX_TIMEOUT_MS;
use crate::shell::shell_jobs::{Exit, Gate, Job, ShellJobs, gate_json, poll_output, timeout_arg};
use crate::work::task_gate_run::{Bounded, log_handle, tree_fingerprint};
use crate::work::{WorkStore, active_task, blocking};

/// Longer than exec_shell_wait's default: these tasks are builds and test suites.
pub const DEFAULT_TASK_WAIT_MS: u64 = 30_000;
const MAX_GATE_NAME: usize = 64;

pub struct TaskShellWait(pub Arc<WorkStore>);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskShellWaitInput {
    /// Job id from task_shell_start or exec_shell.
    pub job_id: String,
    /// Longest wait, in ms (default 30000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Record the finished job's result under this gate name (waits for the exit).
    #[serde(default)]
    pub gate: Option<GateArg>,
    /// Durable task to attach the gate to (default: the task this session runs for).
    #[serde(default)]
    pub task_id: Option<String>,
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
    // A gate on a durable task is kept in quiver's store.
    const CAPABILITIES: Capabilities = Capabilities::PERSISTS;
    // Before one vocabulary, `task_id` named the shell job and `task` the
    // durable task. A call without `job_id` is such a call: its `task_id` is
    // the job; in a call with `job_id`, `task_id` is the durable task.
    const INPUT_ALIASES: &'static [InputAlias] =
        &[InputAlias::rename("task_id", "job_id").unless_given("job_id"), InputAlias::rename("task", "task_id")];

    fn description(&self) -> String {
        "Wait for a background job and return its new output and status; with gate: {name} on a finished job, \
         record command, exit code, duration and log as a named gate (on the durable task too: classification and log artifact)."
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
        let task = input.task_id.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).or_else(active_task);
        let store = match &task {
            Some(t) if gate_name.is_some() => {
                // A wrong task id is the model's error before anything is waited for.
                let store = self.0.get()?;
                let id = t.clone();
                blocking(store.clone(), move |s| s.task(&id)).await?;
                Some(store)
            }
            _ => None,
        };
        let jobs = ctx.session.state::<ShellJobs>();
        let job = jobs.get(&input.job_id)?;
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
            job_id: job.id.clone(),
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
        if let (Some(store), Some(task)) = (store, task) {
            let durable = record_on_task(store, ctx, &job, &exit, &name, task).await?;
            if let serde_json::Value::String(text) = &mut out.content {
                text.push_str(&format!(
                    "\nOn {}: {} {} ({}); log {}",
                    durable["task_id"].as_str().unwrap_or_default(),
                    durable["gate"].as_str().unwrap_or_default(),
                    durable["classification"].as_str().unwrap_or_default(),
                    durable["summary"].as_str().unwrap_or_default(),
                    durable["log"]["handle"].as_str().unwrap_or_default(),
                ));
            }
            out = out.with_meta("task_gate", durable);
        }
        jobs.record_gate(gate);
        Ok(out)
    }
}

/// Keeps the finished job as a gate on the durable task, as `task_gate_run`
/// would have: the log (bounded) becomes an artifact the model reads as a
/// handle, and the tree fingerprint lets a rerun on the same tree be called flaky.
async fn record_on_task(
    store: quiver_durable::Store,
    ctx: &ToolContext,
    job: &Job,
    exit: &Exit,
    name: &str,
    task: String,
) -> Result<serde_json::Value, ToolError> {
    let log = read_log(&job.log_path).await.map_err(|e| {
        ToolError::model(format!("cannot read the log of {} ({}): {e}", job.id, job.log_path.display()))
    })?;
    let (log_bytes, log_lines) = (log.len(), String::from_utf8_lossy(&log).lines().count());
    let cwd = ctx.workspace.resolve(&job.cwd_shown).unwrap_or_else(|_| ctx.workspace.root().to_path_buf());
    let tree = if cwd.is_dir() { tree_fingerprint(ctx, &cwd).await } else { None };
    let gate = NewGate {
        task: Some(task),
        name: name.to_string(),
        command: job.command.clone(),
        cwd: cwd.display().to_string(),
        exit_code: if exit.signal.is_some() { None } else { Some(exit.code) },
        timed_out: job.stopped_because() == Some("timed out"),
        duration_ms: u64::try_from(exit.duration.as_millis()).unwrap_or(u64::MAX),
        log,
        tree,
    };
    let record = blocking(store.clone(), move |s| s.record_gate(&gate)).await?;
    let log = log_handle(store, ctx, TaskShellWait::NAME, record.log_artifact.clone(), log_bytes, log_lines).await?;
    Ok(json!({
        "gate": record.id,
        "task_id": record.task_id,
        "classification": record.classification,
        "summary": record.summary,
        "log": log,
    }))
}

/// The job's whole log, its middle dropped past the gate's bound.
async fn read_log(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut file = tokio::fs::File::open(path).await?;
    let mut bounded = Bounded::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).await?;
        if n == 0 {
            return Ok(bounded.finish());
        }
        bounded.push(&buf[..n]);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "task_shell_wait_tests.rs"]
mod tests;
