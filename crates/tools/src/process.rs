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

use quiver_engine::permissions::command::{CommandOrigin, CommandRequest, GateVerdict};
use quiver_engine::permissions::exec_policy::Permit;
use quiver_engine::{Mode, ToolContext, ToolError, ToolOutput};
pub use quiver_sandbox::Limits;
use quiver_sandbox::{Containment, EnvPolicy, Sandbox, SandboxError, SandboxOptions, SandboxPolicy};

/// The confinement a process ran under, as recorded in result metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxKind {
    /// Writes only the workspace (minus the protected paths) and a private
    /// temp dir; no network.
    WorkspaceWrite,
    /// The same filesystem sandbox with network access (an approved escalation).
    WorkspaceWriteNetwork,
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
            SandboxKind::WorkspaceWriteNetwork => "workspace-write+network",
            SandboxKind::Full => "full",
            SandboxKind::Unavailable => "unavailable",
        }
    }

    fn confined(self) -> bool {
        matches!(self, SandboxKind::WorkspaceWrite | SandboxKind::WorkspaceWriteNetwork)
    }
}

/// What a model asked for beyond the sandbox, for one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Escalation {
    // Plain comments, not doc comments: doc comments would each become a
    // description in the first-turn schema (a `oneOf` of three), paid every turn.
    // Run inside the sandbox (the default).
    #[default]
    None,
    // Network access; the filesystem stays confined to the workspace.
    Network,
    // No sandbox at all: every file the user can write, and the network.
    Full,
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
        let out = out.with_meta("permission", self.permit.as_str()).with_meta("sandbox", self.sandbox.as_str());
        if self.sandbox.confined() { out.with_meta("sandbox_mechanism", mechanism().as_str()) } else { out }
    }

    /// A line the model can act on when a sandboxed command failed: it may have
    /// needed what the sandbox refuses.
    pub fn failure_hint(&self) -> Option<&'static str> {
        self.sandbox.confined().then_some(
            "[ran in the workspace sandbox: writing outside the workspace, to the protected paths (.git/config, .git/hooks, .quiver/, \
             quiver.toml, .mcp.json, .envrc, .vscode/), reading credentials in your home, and (unless granted) the network are refused. \
             If the command needs one of these, rerun it with escalate: \"network\" or \"full\", which asks the user; do not try to work around the sandbox.]",
        )
    }

    /// What the sandbox most likely refused, read from a failed command's
    /// output, worded for the model; `None` when nothing points at it.
    pub fn blocked_by(&self, output: &str) -> Option<String> {
        if !self.sandbox.confined() {
            return None;
        }
        let network = [
            "Could not resolve host",
            "Temporary failure in name resolution",
            "Network is unreachable",
            "Name or service not known",
            "failed to lookup address",
            "getaddrinfo",
            "nodename nor servname",
        ];
        if self.sandbox == SandboxKind::WorkspaceWrite && network.iter().any(|n| output.contains(n)) {
            return Some(
                "the sandbox has no network: rerun with escalate: \"network\" (the user is asked; files stay confined to the workspace), or work offline".into(),
            );
        }
        // git writes its config by a lock file renamed over it: onto the
        // read-only bind of `.git/config` that rename fails with EBUSY.
        let git_config = output.contains("config")
            && ["Device or resource busy", "could not commit config file", "could not lock config file"]
                .iter()
                .any(|m| output.contains(m));
        if git_config {
            return Some(
                "the sandbox keeps `.git/config` read-only (git runs commands it names on the user's next git command), so `git config`, `git remote add` and the like cannot write it: rerun the same line with escalate: \"full\" so the user decides, naming what it changes".into(),
            );
        }
        if output.contains("Read-only file system") {
            return Some(
                "the sandbox refused a write outside the workspace or to a protected path (\"Read-only file system\"): keep writes in the workspace, or rerun with escalate: \"full\" (the user is asked)".into(),
            );
        }
        None
    }
}

/// The mechanism this machine's sandbox uses: namespaces where they work,
/// else Landlock + seccomp.
pub fn mechanism() -> quiver_sandbox::SandboxMechanism {
    let probe = quiver_sandbox::probe();
    if probe.namespaces.is_ok() && probe.is_complete() {
        quiver_sandbox::SandboxMechanism::Namespaces
    } else if probe.is_complete() {
        quiver_sandbox::SandboxMechanism::Landlock
    } else {
        quiver_sandbox::SandboxMechanism::None
    }
}

/// Whether this kernel can enforce every policy; the first "no" (and a
/// fallback to Landlock, with what it no longer protects) is logged once.
pub fn sandbox_available() -> bool {
    let probe = quiver_sandbox::probe();
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        if !probe.is_complete() {
            tracing::warn!(
                kernel = %probe.describe(),
                "no OS sandbox: every command a model writes is asked for; the tools' own commands run unconfined"
            );
        } else if let Err(why) = &probe.namespaces {
            tracing::warn!(
                %why,
                unprotected = %quiver_sandbox::SandboxMechanism::Landlock.gaps().join("; "),
                "the namespace sandbox is unavailable; commands run under Landlock + seccomp"
            );
        }
    });
    probe.is_complete()
}

/// The command gate, then the sandbox its verdict allows.
pub async fn authorize(ctx: &ToolContext, request: &CommandRequest) -> Result<Grant, ToolError> {
    authorize_with(ctx, request, Escalation::None).await
}

/// The command gate with an escalation the model asked for. Deny rules come
/// first in every mode. In agent mode a model's line runs inside the sandbox
/// without asking wherever the sandbox is enforced; asking is for leaving it
/// (network, or no sandbox), and with nobody to ask leaving is refused.
pub async fn authorize_with(
    ctx: &ToolContext,
    request: &CommandRequest,
    escalation: Escalation,
) -> Result<Grant, ToolError> {
    let verdict = ctx.judge_command(request);
    if let GateVerdict::Deny(message) = &verdict {
        return Err(ToolError::model(message.clone()));
    }
    let model_line = request.origin == CommandOrigin::Model;
    if model_line
        && ctx.mode() == Mode::Agent
        && sandbox_available()
        && let Some((what, files)) = crate::git_settings_write::protected_git_write(&request.line)
    {
        return ask_for_git_settings(ctx, request, &what, files).await;
    }
    if model_line && escalation != Escalation::None {
        return escalate(ctx, request, escalation).await;
    }
    if model_line && ctx.mode() == Mode::Agent && sandbox_available() && matches!(verdict, GateVerdict::Ask { .. }) {
        return Ok(Grant { permit: Permit::Sandboxed, sandbox: SandboxKind::WorkspaceWrite });
    }
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

/// A line that writes git's own settings (`git remote add`, `git config
/// user.email`): asked for by name before it runs, instead of failing on the
/// sandbox's read-only `.git/config`. Approved, it runs outside the sandbox:
/// the file is the one git reads commands from, so making it writable is the
/// whole trust decision, and `git push -u` needs the network besides.
async fn ask_for_git_settings(
    ctx: &ToolContext,
    request: &CommandRequest,
    what: &str,
    files: &str,
) -> Result<Grant, ToolError> {
    let line = request.line.trim();
    let why = "the sandbox keeps git's settings read-only because git runs commands named there on the user's next git command";
    if ctx.approver.is_none() {
        return Err(ToolError::model(format!(
            "not run: `{line}` ({what}) writes {files}; {why}, and this session has nobody to approve that. \
             Leave this step to the user: tell them the exact command."
        )));
    }
    ctx.ask(&format!("run `{line}`? {what} writes {files} ({why}); approved, it runs outside the sandbox")).await?;
    Ok(Grant { permit: Permit::Approved, sandbox: SandboxKind::Full })
}

/// Leaving the sandbox: plan refuses, yolo grants, agent asks (and refuses
/// with a reason the model can act on when nobody can be asked). An
/// approval is as narrow as the need: network keeps the filesystem sandbox.
async fn escalate(ctx: &ToolContext, request: &CommandRequest, escalation: Escalation) -> Result<Grant, ToolError> {
    let line = request.line.trim();
    let (what, sandbox) = match escalation {
        Escalation::Network if sandbox_available() => {
            ("with network access (files stay confined to the workspace)", SandboxKind::WorkspaceWriteNetwork)
        }
        _ => ("outside the sandbox, with full access to your files and the network", SandboxKind::Full),
    };
    match ctx.mode() {
        Mode::Plan => Err(ToolError::model("plan mode runs no commands; switch to agent mode to run it")),
        Mode::Yolo => Ok(Grant { permit: Permit::Yolo, sandbox }),
        Mode::Agent => {
            if ctx.approver.is_none() {
                return Err(ToolError::model(format!(
                    "not run: `{line}` asked to run {what}, and this session has nobody to approve that. \
                     Commands run inside the workspace sandbox without asking; do the work there \
                     (offline builds, files inside the workspace), or report what needs the user's approval."
                )));
            }
            ctx.ask(&format!("run `{line}` {what}?")).await?;
            Ok(Grant { permit: Permit::Approved, sandbox })
        }
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
    /// What the sandbox lets the command write (empty when unconfined).
    writable: Vec<PathBuf>,
    jobs: Arc<SessionJobs>,
}

/// Limits for shell jobs, tests and tools' commands: far above what a build
/// needs (threads count as tasks), low enough that a fork bomb or a runaway
/// allocation stops at the job instead of the machine.
pub const COMMAND_LIMITS: Limits = Limits { processes: Some(4096), memory_bytes: Some(16 << 30) };

impl Launch {
    /// Builds the sandbox `grant` calls for, with the workspace as the writable root.
    pub fn new(ctx: &ToolContext, grant: Grant) -> Result<Launch, ToolError> {
        Launch::with_roots(ctx, grant, vec![ctx.workspace.root().to_path_buf()])
    }

    pub fn with_roots(ctx: &ToolContext, grant: Grant, roots: Vec<PathBuf>) -> Result<Launch, ToolError> {
        Launch::with_limits(ctx, grant, roots, COMMAND_LIMITS)
    }

    /// With limits of the caller's choosing (an RLM interpreter's are lower).
    pub fn with_limits(
        ctx: &ToolContext,
        grant: Grant,
        roots: Vec<PathBuf>,
        limits: Limits,
    ) -> Result<Launch, ToolError> {
        let network = match grant.sandbox {
            SandboxKind::WorkspaceWrite => false,
            SandboxKind::WorkspaceWriteNetwork => true,
            SandboxKind::Full | SandboxKind::Unavailable => {
                return Ok(Launch {
                    grant,
                    sandbox: None,
                    writable: Vec::new(),
                    jobs: ctx.session.state::<SessionJobs>(),
                });
            }
        };
        let policy = SandboxPolicy::WorkspaceWrite { writable_roots: roots };
        Launch::confined(ctx, grant, policy, network, SandboxOptions { limits, ..Default::default() })
    }

    /// The sandbox of `quiver sandbox`: what a model-written line gets (the
    /// same deny rules, limits and environment scrub), with the policy,
    /// network and mechanism chosen on the command line.
    pub fn standalone(
        ctx: &ToolContext,
        read_only: bool,
        network: bool,
        mechanism: Option<quiver_sandbox::SandboxMechanism>,
    ) -> Result<Launch, ToolError> {
        let sandbox = if network { SandboxKind::WorkspaceWriteNetwork } else { SandboxKind::WorkspaceWrite };
        let grant = Grant { permit: Permit::Sandboxed, sandbox };
        let policy = if read_only {
            SandboxPolicy::ReadOnly
        } else {
            SandboxPolicy::WorkspaceWrite { writable_roots: vec![ctx.workspace.root().to_path_buf()] }
        };
        let options = SandboxOptions { limits: COMMAND_LIMITS, mechanism, ..Default::default() };
        Launch::confined(ctx, grant, policy, network, options)
    }

    fn confined(
        ctx: &ToolContext,
        grant: Grant,
        policy: SandboxPolicy,
        network: bool,
        options: SandboxOptions,
    ) -> Result<Launch, ToolError> {
        let options = SandboxOptions { deny_programs: deny_programs(ctx), ..options };
        let policy_roots = match &policy {
            SandboxPolicy::WorkspaceWrite { writable_roots } => Some(writable_roots.clone()),
            _ => None,
        };
        // Never run unconfined what was meant to be confined: a failure
        // here fails the call.
        let sandbox = Sandbox::with_options(policy, network, options).map(Arc::new).map_err(|e| match e {
            SandboxError::Unavailable(why) => {
                ToolError::model(format!("the OS sandbox became unavailable ({why}); the command was not run"))
            }
            SandboxError::Setup(why) => {
                ToolError::model(format!("preparing the OS sandbox failed ({why}); the command was not run"))
            }
        })?;
        let writable = policy_roots.unwrap_or_default();
        Ok(Launch { grant, sandbox: Some(sandbox), writable, jobs: ctx.session.state::<SessionJobs>() })
    }

    /// The sandbox commands of this launch run in (none when unconfined).
    pub fn sandbox(&self) -> Option<Arc<Sandbox>> {
        self.sandbox.clone()
    }

    /// Scrubs the environment, contains `cmd`, arms the parent-death signal
    /// and confines it, in the order the sandbox crate requires (inside the
    /// namespace sandbox, hooks registered after it run in the namespace).
    /// Call after setting the command's own variables and working directory;
    /// spawn, then [`Running::started`].
    pub fn prepare(&self, cmd: &mut tokio::process::Command) -> io::Result<Running> {
        let running = self.prepare_unconfined(cmd)?;
        running.confine(cmd)?;
        Ok(running)
    }

    /// [`prepare`](Self::prepare) without the sandbox, for a caller that
    /// registers hooks of its own (a new session, a terminal): it calls
    /// [`Running::confine`] after them, last.
    pub fn prepare_unconfined(&self, cmd: &mut tokio::process::Command) -> io::Result<Running> {
        scrub_env(cmd, &EnvPolicy::user());
        if self.sandbox.is_some() {
            keep_cargo_target_writable(cmd, &self.writable);
        }
        let containment = self.jobs.containment();
        // Finished jobs' cgroups are removed here, so a long session keeps few.
        containment.reap_finished();
        let job = containment.spawn_hook(cmd)?;
        // The job is killed on cancel, timeout and session end; this covers
        // quiver dying without cleanup (SIGKILL). Every caller spawns from an
        // async task, i.e. a runtime worker thread that outlives the child.
        quiver_sandbox::die_with_parent(cmd);
        Ok(Running { grant: self.grant, job, sandbox: self.sandbox.clone() })
    }
}

/// The programs of single-word deny rules, made unexecutable inside the
/// namespace sandbox so that no spelling of the line reaches them.
fn deny_programs(ctx: &ToolContext) -> Vec<String> {
    ctx.commands
        .policy()
        .deny_prefixes
        .iter()
        .filter(|rule| !rule.trim().contains(char::is_whitespace))
        .map(|rule| rule.trim().to_string())
        .filter(|rule| !rule.is_empty() && !rule.contains('/'))
        .collect()
}

/// A `CARGO_TARGET_DIR` inherited from the user's shell (a shared target dir)
/// lies outside the sandbox's writable roots, where every sandboxed `cargo
/// build` would fail on a read-only file system. Without it cargo builds in
/// the workspace's own `target/`, as it does for anyone who never set it.
pub fn keep_cargo_target_writable(cmd: &mut tokio::process::Command, writable: &[PathBuf]) {
    const VAR: &str = "CARGO_TARGET_DIR";
    let explicit = cmd.as_std().get_envs().find(|(k, _)| *k == VAR).map(|(_, v)| v.map(|v| v.to_os_string()));
    let value = match explicit {
        Some(value) => value,
        None => std::env::var_os(VAR),
    };
    let Some(value) = value else { return };
    let dir = PathBuf::from(&value);
    let dir = if dir.is_absolute() {
        dir
    } else {
        // Relative: cargo takes it from the working directory.
        cmd.as_std().get_current_dir().map(|cwd| cwd.join(&dir)).unwrap_or(dir)
    };
    let dir = quiver_sandbox::normalize(&dir);
    if !writable.iter().any(|root| dir.starts_with(quiver_sandbox::normalize(root))) {
        cmd.env_remove(VAR);
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
    sandbox: Option<Arc<Sandbox>>,
}

impl Running {
    /// Registers the sandbox on `cmd`; the last hook registered (inside the
    /// namespace sandbox, hooks after it would run in the namespace).
    pub fn confine(&self, cmd: &mut tokio::process::Command) -> io::Result<()> {
        match &self.sandbox {
            Some(sandbox) => sandbox.apply_to(cmd).map_err(io::Error::other),
            None => Ok(()),
        }
    }

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
        // A process allowed outside the sandbox (approved, yolo, a tool's
        // own fixed command) may change protected paths on purpose: no guard
        // of a running sandboxed job in the Landlock fallback undoes that.
        if self.sandbox.is_none() {
            quiver_sandbox::refresh_protected_snapshots();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "process_tests.rs"]
mod tests;
