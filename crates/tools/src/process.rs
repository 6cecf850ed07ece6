//! The one way the native tools start a process: the command gate's verdict,
//! then an OS sandbox chosen from it, a scrubbed environment, and a job in the
//! session's [`Containment`] (so `setsid` and double-fork children are found
//! and killed on cancel, timeout and session end).
//!
//! Policy from the verdict (see `docs/architecture.md`): what runs *unasked* (a
//! trusted model line, a tool's own fixed command) runs under
//! `WorkspaceWrite { [workspace] }` without network, because parsing a shell line
//! cannot find every side effect (`BASH_ENV`, `PS4`, git config hooks, ...): the
//! kernel decides what it may touch, not a prefix list. What a person approved
//! (or yolo) runs `Full`. A server from the user's own config runs `Full` as
//! before. Where the kernel offers no sandbox, a model-written line that would
//! have run unasked is asked for instead (said once in the log); a tool's own
//! fixed command runs unconfined and says `sandbox: "unavailable"`.
//!
//! Each step is a separate call on the same `tokio::process::Command`, in the
//! order the sandbox crate requires: [`scrub_env`] (keeping the variables the
//! caller set explicitly), the sandbox (sets `TMPDIR`), then the containment job.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Once, OnceLock};

use quiver_engine::permissions::command::{CommandOrigin, CommandRequest};
use quiver_engine::permissions::exec_policy::Permit;
use quiver_engine::{Mode, ToolContext, ToolError, ToolOutput};
use quiver_sandbox::{Containment, EnvPolicy, Sandbox, SandboxError, SandboxPolicy};

/// The confinement a process ran under, as recorded in result metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxKind {
    /// Writes only the workspace (minus `.git/config`, `.git/hooks`, quiver's
    /// config) and a private temp dir; no network.
    WorkspaceWrite,
    /// Unconfined: approved by a person, yolo, or the user's own config.
    Full,
    /// Would have been sandboxed, but the kernel offers no sandbox (tool's own
    /// fixed commands only; model lines are asked for instead).
    Unavailable,
}

impl SandboxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxKind::WorkspaceWrite => "workspace-write",
            SandboxKind::Full => "full",
            SandboxKind::Unavailable => "unavailable",
        }
    }
}

/// How a process got permission, and what it runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub permit: Permit,
    pub sandbox: SandboxKind,
}

impl Grant {
    /// `permission` and `sandbox` for result metadata.
    pub fn describe(&self, out: ToolOutput) -> ToolOutput {
        out.with_meta("permission", self.permit.as_str()).with_meta("sandbox", self.sandbox.as_str())
    }

    /// A line the model can act on when a sandboxed command failed: it may have
    /// needed what the sandbox refuses.
    pub fn failure_hint(&self) -> Option<&'static str> {
        (self.sandbox == SandboxKind::WorkspaceWrite).then_some(
            "[ran in the workspace-write sandbox without network: writing outside the workspace, to .git/config or .git/hooks, \
             creating new entries directly in the workspace root (subdirectories are fine), and network access are refused. If the command needs any of \
             these, ask the user to approve running it unsandboxed (or to rerun in yolo mode); do not try to work around the sandbox.]",
        )
    }
}

/// Whether this kernel can enforce every policy; the first "no" is logged once.
pub fn sandbox_available() -> bool {
    let probe = quiver_sandbox::probe();
    if !probe.is_complete() {
        static SAID: Once = Once::new();
        SAID.call_once(|| {
            tracing::warn!(
                kernel = %probe.describe(),
                "no OS sandbox: every command a model writes is asked for; the tools' own commands run unconfined"
            );
        });
    }
    probe.is_complete()
}

/// The command gate, then the sandbox its verdict allows.
pub async fn authorize(ctx: &ToolContext, request: &CommandRequest) -> Result<Grant, ToolError> {
    let permit = ctx.authorize_command(request).await?;
    // Only a run nobody was asked about is confined: an approval (or yolo, or
    // the user's own config) is the user taking the decision. In yolo even a
    // line a trusted rule matched runs `full`: the user chose to be asked nothing.
    let unasked = permit == Permit::Trusted
        && ctx.mode() != Mode::Yolo
        && !matches!(request.origin, CommandOrigin::Config { .. });
    if !unasked {
        return Ok(Grant { permit, sandbox: SandboxKind::Full });
    }
    if sandbox_available() {
        return Ok(Grant { permit, sandbox: SandboxKind::WorkspaceWrite });
    }
    match request.origin {
        CommandOrigin::Model => {
            ctx.ask(&format!(
                "run the command `{}`? (no OS sandbox on this machine, so every command is asked for)",
                request.line.trim()
            ))
            .await?;
            Ok(Grant { permit: Permit::Approved, sandbox: SandboxKind::Full })
        }
        _ => Ok(Grant { permit, sandbox: SandboxKind::Unavailable }),
    }
}

/// The session's jobs: created on first use (it sweeps jobs of dead quiver
/// processes, so not for sessions that never start one), killed with the session.
#[derive(Default)]
pub struct SessionJobs(OnceLock<Containment>);

impl SessionJobs {
    pub fn containment(&self) -> &Containment {
        self.0.get_or_init(Containment::new)
    }

    /// Kills every job the session started (cancel of the whole session).
    pub fn kill_all(&self) {
        if let Some(c) = self.0.get()
            && let Err(e) = c.kill_all()
        {
            tracing::warn!(%e, "killing the session's jobs failed");
        }
    }
}

/// A process about to start: the sandbox built for it and its session's jobs.
pub struct Launch {
    pub grant: Grant,
    /// Shared by every process of one call (git runs several).
    sandbox: Option<Arc<Sandbox>>,
    jobs: Arc<SessionJobs>,
}

impl Launch {
    /// Builds the sandbox `grant` calls for, with the workspace as the writable root.
    pub fn new(ctx: &ToolContext, grant: Grant) -> Result<Launch, ToolError> {
        Launch::with_roots(ctx, grant, vec![ctx.workspace.root().to_path_buf()])
    }

    pub fn with_roots(ctx: &ToolContext, grant: Grant, roots: Vec<PathBuf>) -> Result<Launch, ToolError> {
        let sandbox = match grant.sandbox {
            SandboxKind::WorkspaceWrite => {
                let policy = SandboxPolicy::WorkspaceWrite { writable_roots: roots };
                // Never run unconfined what was meant to be confined: a failure
                // here fails the call.
                Some(Sandbox::new(policy, false).map(Arc::new).map_err(|e| match e {
                    SandboxError::Unavailable(why) => {
                        ToolError::model(format!("the OS sandbox became unavailable ({why}); the command was not run"))
                    }
                    SandboxError::Setup(why) => {
                        ToolError::model(format!("preparing the OS sandbox failed ({why}); the command was not run"))
                    }
                })?)
            }
            SandboxKind::Full | SandboxKind::Unavailable => None,
        };
        Ok(Launch { grant, sandbox, jobs: ctx.session.state::<SessionJobs>() })
    }

    /// Scrubs the environment, confines and contains `cmd`. Call after setting
    /// the command's own variables and before any `pre_exec` hook that should
    /// run unconfined (none does today); spawn, then [`Running::started`].
    pub fn prepare(&self, cmd: &mut tokio::process::Command) -> io::Result<Running> {
        scrub_env(cmd, &EnvPolicy::default());
        if let Some(sandbox) = &self.sandbox {
            sandbox.apply_to(cmd);
        }
        let containment = self.jobs.containment();
        // Finished jobs' cgroups are removed here, so a long session keeps few.
        containment.reap_finished();
        let job = containment.spawn_hook(cmd)?;
        Ok(Running { grant: self.grant, job, _sandbox: self.sandbox.clone() })
    }
}

/// Replaces `cmd`'s environment by quiver's own filtered through `policy`
/// (secrets never inherited), then puts back what the caller set on `cmd`
/// explicitly (a server's configured `env`, `PAGER=cat`): a variable named on
/// purpose is not an inherited secret.
pub fn scrub_env(cmd: &mut tokio::process::Command, policy: &EnvPolicy) {
    let explicit: Vec<(OsString, Option<OsString>)> =
        cmd.as_std().get_envs().map(|(k, v)| (k.to_os_string(), v.map(|v| v.to_os_string()))).collect();
    policy.apply_to(cmd);
    for (name, value) in explicit {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
}

/// A started (or starting) process: its containment job and the sandbox whose
/// private temp dir it uses. Dropping it kills whatever the job left running.
pub struct Running {
    pub grant: Grant,
    job: quiver_sandbox::Job,
    _sandbox: Option<Arc<Sandbox>>,
}

impl Running {
    pub fn started(&self, pid: Option<u32>) {
        if let Some(pid) = pid {
            self.job.started(pid);
        }
    }

    /// Kills every process of the job (also those that left its group or
    /// session); whether any was found.
    pub fn kill(&self) -> bool {
        match self.job.kill() {
            Ok(n) => n > 0,
            Err(e) => {
                tracing::warn!(%e, "killing a job's processes failed");
                true
            }
        }
    }

    /// Live processes of the job.
    pub fn pids(&self) -> Vec<i32> {
        self.job.pids()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.job.kill();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "process_tests.rs"]
mod tests;
