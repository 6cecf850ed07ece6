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
//!   secrets never). The same secrets leave quiver's own environment at start
//!   ([`withhold_own_secrets`]); quiver reads them through [`secret_env`].
//! - [`Containment`]: every process a job starts (also after `setsid` or a
//!   double fork) can be found and killed, through a cgroup v2 per job or, where
//!   no cgroup is writable, a child subreaper plus a `/proc` walk.
//!
//! What stays unprotected (by platform):
//! - Linux, Landlock: metadata changes are not file writes to Landlock:
//!   `chmod`, `chown`, `touch -d` (utimes) and xattrs still work on files
//!   outside the writable roots (refusing them by seccomp would also refuse
//!   `chmod +x` inside the workspace). ABI < 3 cannot refuse `truncate(2)`
//!   outside; ABI < 6 cannot stop a command signalling quiver. Connecting to
//!   an existing *path* Unix socket (a docker or ssh-agent socket) is not
//!   filtered by Landlock (seccomp refuses `socket(AF_UNIX)` without
//!   network). Reads are an allowlist (`read_allow`), which costs new ptys;
//!   new top-level entries of a directory split around a closed path (the
//!   home, when a workspace holds it) need `full` (see `landlock_rules`).
//! - Linux, seccomp: `AF_UNIX` is allowed, so a local proxy listening on a
//!   Unix socket could relay traffic out.
//! - Containment: a `full`-policy command running as root can move itself out
//!   of its cgroup; in the subreaper fallback, a process that leaves the
//!   leader's tree after the leader exits *and* clears its environment is not
//!   found; after quiver is SIGKILLed, escaped processes are swept by its
//!   reaper ([`reap_if_asked`]) once it is gone, or where no reaper could
//!   start, by the next `Containment::new`.
//! - macOS and others: no OS sandbox yet: [`Sandbox::new`] returns
//!   [`SandboxError::Unavailable`] for anything but `Full` + network, and
//!   the caller asks for every command.
//!
//! Order on one command: `env.apply_to(cmd)` (it clears the environment), then
//! `sandbox.apply_to(cmd)` (it sets `TMPDIR`), then `job.apply_to(cmd)`, spawn,
//! `job.started(pid)`.

mod env;
mod gitpaths;
#[cfg(target_os = "linux")]
mod guard;
mod hook;
mod own_env;
mod pid_namespace;
#[cfg(target_os = "linux")]
mod placeholder;
mod policy;
mod probe;
#[cfg(target_os = "linux")]
mod read_allow;
mod sandbox;

#[cfg(target_os = "linux")]
mod contain;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod namespace;
pub mod protected;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(target_os = "linux")]
pub use contain::{
    Containment, JOB_MARKER, Job, Mechanism, Prefer, REAPER_ARG, enable_reaper, reap_if_asked, sweep_stale,
};
pub use env::{EnvPolicy, Inherit, user_scrub_list};
pub use hook::{PreExecTarget, die_with_parent};
#[cfg(target_os = "linux")]
pub use landlock_rules::normalize;
pub use own_env::{Withheld, secret_env, secret_env_os, withheld_env, withhold_own_secrets};
pub use pid_namespace::own_pid_namespace;
pub use policy::{SandboxPolicy, quiver_config_dir, quiver_state_dir, user_config_file, user_home_allow};
pub use probe::{NO_USERNS_VAR, Probe, probe};
pub use sandbox::{Limits, Sandbox, SandboxError, SandboxMechanism, SandboxOptions};

/// After a command that was allowed to change protected paths (one run
/// outside the sandbox, approved or in yolo): every live Landlock-fallback
/// guard takes their new state as the one to keep, so it is not undone.
pub fn refresh_protected_snapshots() {
    #[cfg(target_os = "linux")]
    guard::refresh_all();
}

/// Makes this process non-dumpable: its `/proc/<pid>/environ`, `mem` and
/// `maps` become root's, so no process of the user's (a yolo shell line, an
/// MCP server quiver started, anything the user runs) can read the provider
/// keys and tokens in quiver's environment or memory, nor attach a debugger.
/// Children are not affected (exec resets it). Returns whether it took.
pub fn keep_own_memory_private() -> bool {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_dumpable(false).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}
