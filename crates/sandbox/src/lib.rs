//! OS-level confinement for the processes quiver starts.
//!
//! Parsing a shell line can never find every side effect of a command
//! (`BASH_ENV`, `PS4`, git config hooks, `--compress-program`, ...), so what a
//! command may touch is decided by the kernel, not by quiver's prefix lists.
//! This crate gives the command gate three independent pieces, each applied to
//! a `std::process::Command` or a `tokio::process::Command` before it spawns:
//!
//! - [`Sandbox`]: Landlock (filesystem) + seccomp (network) under a
//!   [`SandboxPolicy`]; everything that allocates or opens files is done when the
//!   sandbox is built, so the hook that runs between fork and exec only makes
//!   system calls.
//! - [`EnvPolicy`]: which environment variables a child inherits (quiver's own
//!   secrets never).
//! - [`Containment`]: every process a job starts (also after `setsid` or a
//!   double fork) can be found and killed, through a cgroup v2 per job or, where
//!   no cgroup is writable, a child subreaper plus a `/proc` walk.
//!
//! Order on one command: `env.apply_to(cmd)` (it clears the environment), then
//! `sandbox.apply_to(cmd)` (it sets `TMPDIR`), then `job.apply_to(cmd)`, spawn,
//! `job.started(pid)`.

mod env;
mod hook;
mod policy;
mod probe;
mod sandbox;

#[cfg(target_os = "linux")]
mod contain;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(target_os = "linux")]
pub use contain::{Containment, JOB_MARKER, Job, Mechanism, Prefer, sweep_stale};
pub use env::{EnvPolicy, Inherit};
pub use hook::PreExecTarget;
pub use policy::{SandboxPolicy, quiver_config_dir};
pub use probe::{Probe, probe};
pub use sandbox::{Sandbox, SandboxError};
