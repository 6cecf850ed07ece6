//! A policy made ready to apply: built once in the parent, applied to any
//! number of commands.

use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::sync::Arc;

use crate::hook::{PreExecTarget, Step};
use crate::policy::{SandboxPolicy, quiver_config_dir};

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce this policy (no Landlock, no seccomp, not
    /// Linux). The caller falls back to asking the user for every command.
    #[error("the OS sandbox is unavailable: {0}")]
    Unavailable(String),
    /// The kernel can, but preparing the rules failed (a temp dir could not be
    /// made, a rule was refused). Not a reason to run unconfined.
    #[error("preparing the OS sandbox failed: {0}")]
    Setup(String),
}

/// A prepared sandbox. Rules are computed from the filesystem as it is when
/// this is built (see the module docs of the Landlock rules): build one per
/// command (it costs a few hundred system calls) and keep it alive while the
/// command runs, since it owns the command's private temp dir.
#[derive(Debug)]
pub struct Sandbox {
    policy: SandboxPolicy,
    network: bool,
    read_only: Vec<PathBuf>,
    tmp: Option<tempfile::TempDir>,
    step: Option<Step>,
}

impl Sandbox {
    /// `policy` for the filesystem, `network` to allow sockets other than Unix ones.
    pub fn new(policy: SandboxPolicy, network: bool) -> Result<Self, SandboxError> {
        Self::with_read_only(policy, network, &[])
    }

    /// Like [`new`](Self::new), with more paths kept read-only inside the
    /// writable roots (for instance files named in the user's config).
    pub fn with_read_only(policy: SandboxPolicy, network: bool, extra: &[PathBuf]) -> Result<Self, SandboxError> {
        let mut read_only: Vec<PathBuf> = Vec::new();
        if let SandboxPolicy::WorkspaceWrite { writable_roots } = &policy {
            for root in writable_roots {
                // `.git/config` (core.fsmonitor, aliases, diff drivers) and
                // `.git/hooks` run code the next time the *user* runs git.
                read_only.push(root.join(".git/config"));
                read_only.push(root.join(".git/hooks"));
            }
        }
        read_only.extend(quiver_config_dir());
        read_only.extend(extra.iter().cloned());
        let mut sandbox = Sandbox { policy, network, read_only, tmp: None, step: None };
        sandbox.prepare()?;
        Ok(sandbox)
    }

    #[cfg(not(target_os = "linux"))]
    fn prepare(&mut self) -> Result<(), SandboxError> {
        if self.policy.restricts_filesystem() || !self.network {
            return Err(SandboxError::Unavailable(format!(
                "no OS sandbox is implemented for {} yet",
                std::env::consts::OS
            )));
        }
        Ok(())
    }

    #[cfg(target_os = "linux")]
    fn prepare(&mut self) -> Result<(), SandboxError> {
        let probe = crate::probe::probe();
        let landlock = if self.policy.restricts_filesystem() {
            if let Err(why) = &probe.landlock {
                return Err(SandboxError::Unavailable(why.clone()));
            }
            let tmp = tempfile::Builder::new()
                .prefix("quiver-sandbox-")
                .tempdir()
                .map_err(|e| SandboxError::Setup(format!("creating the private temp dir: {e}")))?;
            let mut writable = vec![tmp.path().to_path_buf()];
            if let SandboxPolicy::WorkspaceWrite { writable_roots } = &self.policy {
                writable.extend(writable_roots.iter().cloned());
            }
            let rules = crate::landlock_rules::Rules { read_only: self.read_only.clone() };
            let fd = crate::landlock_rules::build(&writable, &rules).map_err(SandboxError::Setup)?;
            self.tmp = Some(tmp);
            Some(Arc::new(fd))
        } else {
            None
        };
        let seccomp = if self.network {
            None
        } else {
            if let Err(why) = &probe.seccomp {
                return Err(SandboxError::Unavailable(why.clone()));
            }
            Some(Arc::new(crate::seccomp::deny_network().map_err(SandboxError::Setup)?))
        };
        if landlock.is_some() || seccomp.is_some() {
            self.step = Some(Step::Confine { landlock, seccomp });
        }
        Ok(())
    }

    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    pub fn network(&self) -> bool {
        self.network
    }

    /// Paths kept read-only even inside a writable root.
    pub fn read_only_paths(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// The command's private temp dir (`TMPDIR`), when the filesystem is restricted.
    pub fn tmp_dir(&self) -> Option<&Path> {
        self.tmp.as_ref().map(tempfile::TempDir::path)
    }

    /// Confines `cmd` when it spawns: sets `TMPDIR`/`TMP`/`TEMP` to the private
    /// temp dir and registers the pre-exec step. Apply the environment policy
    /// first: clearing the environment afterwards would drop `TMPDIR`.
    pub fn apply_to(&self, cmd: &mut impl PreExecTarget) {
        let cmd = cmd.std_command();
        if let Some(tmp) = self.tmp_dir() {
            for var in ["TMPDIR", "TMP", "TEMP"] {
                cmd.env(var, tmp);
            }
        }
        if let Some(step) = &self.step {
            crate::hook::register(cmd, step.clone());
        }
    }
}
