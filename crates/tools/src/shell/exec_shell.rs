//! `exec_shell`: run a shell command in the foreground (bounded by a timeout) or
//! start it in the background and get a task id.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::process::{Escalation, Launch};
use crate::shell::shell_jobs::{JobSpec, ShellJobs, timeout_arg};

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// A timed-out command gets this long to exit on SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(500);

pub struct ExecShell;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecShellInput {
    /// Command line, run with bash -c.
    pub command: String,
    /// Working directory relative to the workspace root (default: the root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Foreground time limit in ms (default 120000, max 600000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Start in the background and return a job_id at once.
    #[serde(default)]
    pub background: Option<bool>,
    /// Give the command a terminal (PTY), for programs that need one.
    #[serde(default)]
    pub tty: Option<bool>,
    /// Leave the workspace sandbox: network (files stay confined) or full. Asks the user; only after a run the sandbox blocked.
    #[serde(default)]
    pub escalate: Option<Escalation>,
}

impl Tool for ExecShell {
    type Input = ExecShellInput;
    const NAME: &'static str = "exec_shell";
    const DOMAIN: Domain = Domain::Shell;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS
        .union(Capabilities::WRITES_FILES)
        .union(Capabilities::NETWORK)
        .union(Capabilities::GATES_ITSELF);

    fn description(&self) -> String {
        "Run a shell command; output is stdout+stderr. Foreground waits up to timeout_ms; background: true returns a job_id for exec_shell_wait.".into()
    }

    async fn run(&self, input: ExecShellInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = checked_command(&input.command)?;
        let background = input.background.unwrap_or(false);
        // A background job runs until it exits or is cancelled; a timeout given
        // with it is a foreground habit, not a mistake worth a failed call.
        let timeout = timeout_arg(input.timeout_ms, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)?;
        let (cwd, cwd_shown) = resolve_cwd(ctx, input.cwd.as_deref())?;
        let request = CommandRequest::model(command);
        let grant = crate::process::authorize_with(ctx, &request, input.escalate.unwrap_or_default()).await?;
        let spec = JobSpec { command, cwd: &cwd, cwd_shown, background, tty: input.tty.unwrap_or(false), grant };
        if background {
            return start_background(ctx, &spec);
        }

        let jobs = ctx.session.state::<ShellJobs>();
        let launch = Launch::new(ctx, grant)?;
        let sandbox = launch.sandbox();
        let job = jobs.start(&spec, launch)?;
        // If this call is dropped midway (the host cancelled it), the command must
        // not run on unobserved: the guard stops it.
        let guard = StopOnDrop(Some(job.clone()));
        job.wait_exit(timeout).await;
        let timed_out = job.exit().is_none();
        if timed_out {
            job.stop("timed out", STOP_GRACE).await;
        }
        drop(guard);
        jobs.forget(&job);

        let (text, truncated, bytes) = job.whole_output();
        if timed_out {
            let shown = if bytes == 0 { "(no output)\n".to_string() } else { text };
            let message = format!(
                "`{command}` timed out after {} ms and was stopped with its whole process group.\n\
                 Output so far:\n{shown}{}\n\
                 Full log: {}\n\
                 To let it run longer, rerun it with `background: true` (you get a job_id at once) and poll it with \
                 exec_shell_wait {{\"job_id\": ...}}; or raise `timeout_ms` (max {MAX_TIMEOUT_MS}).",
                timeout.as_millis(),
                if shown.ends_with('\n') { "" } else { "\n" },
                job.log_shown(),
            );
            return Err(ToolError::Report(
                job.metadata(ToolOutput::text(message)).with_meta("timed_out", true).with_meta("output_bytes", bytes),
            ));
        }
        let mut content = if bytes == 0 { "(no output)\n".to_string() } else { text };
        if !content.ends_with('\n') {
            content.push('\n');
        }
        content.push_str(&job.status_line());
        // The Landlock fallback cannot refuse a write to a protected path
        // inside the workspace: what the command changed there is put back
        // now, and the model is told (the namespace sandbox refuses them).
        let undone = sandbox.as_ref().map(|s| s.restore_protected()).unwrap_or_default();
        if !undone.is_empty() {
            content.push_str(&format!(
                "\n[the sandbox undid what the command did to protected paths (they plant code that runs later; \
                 rerun with escalate: \"full\" if the user should decide): {}]",
                undone.join("; ")
            ));
        }
        if job.exit().is_some_and(|e| e.code != 0) {
            // Say what the sandbox most likely refused, when the output shows
            // it, so the model can ask to leave it instead of guessing.
            if let Some(blocked) = grant.blocked_by(&content) {
                content.push_str(&format!("\n[blocked by the sandbox: {blocked}]"));
            } else if let Some(hint) = grant.failure_hint() {
                content.push('\n');
                content.push_str(hint);
            }
        }
        Ok(job
            .metadata(ToolOutput::text(content))
            .with_meta("timed_out", false)
            .with_meta("truncated", truncated)
            .with_meta("output_bytes", bytes)
            .with_meta("cwd", job.cwd_shown.clone())
            .with_meta("permission", grant.permit.as_str()))
    }
}

struct StopOnDrop(Option<std::sync::Arc<crate::shell::shell_jobs::Job>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(job) = self.0.take().filter(|j| j.exit().is_none()) {
            // No await in Drop: hand the stop to the runtime when there is one.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move { job.stop("cancelled", STOP_GRACE).await });
            }
        }
    }
}

/// The command, refused when blank.
pub(crate) fn checked_command(command: &str) -> Result<&str, ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::model("`command` is empty; give the shell command line to run"));
    }
    if command.contains('\0') {
        return Err(ToolError::model("`command` contains a NUL byte"));
    }
    Ok(command)
}

/// The working directory inside the workspace, and how to show it.
pub(crate) fn resolve_cwd(ctx: &ToolContext, cwd: Option<&str>) -> Result<(PathBuf, String), ToolError> {
    let Some(raw) = cwd else {
        return Ok((ctx.workspace.root().to_path_buf(), ".".into()));
    };
    let path = ctx.workspace.resolve(raw)?;
    let shown = ctx.workspace.display(&path);
    if !path.is_dir() {
        let what = if path.exists() { "is not a directory" } else { "does not exist" };
        return Err(ToolError::model(format!("`cwd` `{shown}` {what}; give a directory inside the workspace")));
    }
    Ok((path, shown))
}

/// Starts a background job and says how to follow it.
pub(crate) fn start_background(ctx: &ToolContext, spec: &JobSpec<'_>) -> Result<ToolOutput, ToolError> {
    let job = ctx.session.state::<ShellJobs>().start(spec, Launch::new(ctx, spec.grant)?)?;
    let id = &job.id;
    let text = format!(
        "Started {id} in the background{}: {}\nPoll its output with exec_shell_wait {{\"job_id\": \"{id}\"}}, send input with \
         exec_shell_interact, stop it with exec_shell_cancel.",
        if job.tty { " with a terminal" } else { "" },
        spec.command,
    );
    // Describe the start only: whether a quick command has already exited by
    // now is a race, and the same call must give the same result every time
    // (replay depends on it). exec_shell_wait reports status and exit code.
    Ok(ToolOutput::text(text)
        .with_meta("job_id", id.clone())
        .with_meta("status", "started")
        .with_meta("log_file", job.log_shown())
        .with_meta("pid", job.pid)
        .with_meta("timed_out", false)
        .with_meta("background", true)
        .with_meta("cwd", job.cwd_shown.clone())
        .with_meta("permission", spec.grant.permit.as_str())
        .with_meta("sandbox", spec.grant.sandbox.as_str()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "exec_shell_tests.rs"]
mod tests;
