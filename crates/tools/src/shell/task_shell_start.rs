//! `task_shell_start`: the long-running variant of `exec_shell`: always in the
//! background, for builds, test suites and servers; follow it with `task_shell_wait`.

use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::shell::exec_shell::{checked_command, resolve_cwd, start_background};
use crate::shell::shell_jobs::JobSpec;

pub struct TaskShellStart;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskShellStartInput {
    /// Command line, run with bash -c.
    pub command: String,
    /// Working directory relative to the workspace root (default: the root).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Give the command a terminal (PTY), for programs that need one.
    #[serde(default)]
    pub tty: Option<bool>,
}

impl Tool for TaskShellStart {
    type Input = TaskShellStartInput;
    const NAME: &'static str = "task_shell_start";
    const DOMAIN: Domain = Domain::Shell;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = Capabilities::RUNS_COMMANDS
        .union(Capabilities::WRITES_FILES)
        .union(Capabilities::NETWORK)
        .union(Capabilities::GATES_ITSELF);

    fn description(&self) -> String {
        "Start a long-running command (build, test suite, server) in the background and return a job_id at once; \
         follow it with task_shell_wait, which can record the result as a named gate."
            .into()
    }

    async fn run(&self, input: TaskShellStartInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = checked_command(&input.command)?;
        let (cwd, cwd_shown) = resolve_cwd(ctx, input.cwd.as_deref())?;
        let grant = crate::process::authorize(ctx, &CommandRequest::model(command)).await?;
        let spec = JobSpec { command, cwd: &cwd, cwd_shown, background: true, tty: input.tty.unwrap_or(false), grant };
        start_background(ctx, &spec)
    }
}
