//! OS-level confinement for the processes quiver starts.
//!
//! Parsing a shell line can never find every side effect of a command
//! (`BASH_ENV`, `PS4`, git config hooks, `--compress-program`, ...), so what a
//! command may touch is decided by the kernel, not by quiver's prefix lists.
//! This crate gives the command gate three independent pieces, each applied to
//! a `std::process::Command` or a `tokio::process::Command` before it spawns:
//!
//! - [`Sandbox`]: a [`SandboxPolicy`] enforced by one of two mechanisms
//!   ([`SandboxMechanism`], the best the kernel offers unless forced):
//!   - **namespaces**, the primary one wherever unprivileged user namespaces
//!     work: the command runs in its own user, mount, PID, IPC and UTS
//!     namespaces, and without network in its own network namespace with
//!     loopback only. What it sees is built from allowlists: the filesystem
//!     read-only but the writable roots and a private `/tmp`, the protected
//!     paths bound read-only on top, the home reduced to toolchains and
//!     caches, a `/dev` and a fresh `/proc` of its own, no capabilities (see
//!     the `namespace` module); started by root, the command runs as `nobody`
//!     with its writable roots idmapped (the `namespace::idmap` module), so
//!     root-only files stay closed to it. Landlock and seccomp are applied inside it
//!     too (Landlock repeats the outer boundary; seccomp refuses the kernel
//!     keyring, io_uring and terminal injection).
//!   - **Landlock + seccomp alone**, the fallback where user namespaces are
//!     refused (AppArmor's restriction, many containers,
//!     `QUIVER_SANDBOX_NO_USERNS=1`): Landlock grants the writable roots
//!     whole, a guard puts the protected paths back when the command ends,
//!     and seccomp also refuses `socket(2)` without network.
//!
//!   Everything that allocates or opens files is done when the sandbox is
//!   built, so the code that runs between fork and exec only makes system
//!   calls.
//! - [`EnvPolicy`]: which environment variables a child inherits (quiver's own
//!   secrets never). The same secrets leave quiver's own environment at start
//!   ([`withhold_own_secrets`]); quiver reads them through [`secret_env`].
//! - [`Containment`]: every process a job starts (also after `setsid` or a
//!   double fork) can be found and killed, through a cgroup v2 per job or, where
//!   no cgroup is writable, a child subreaper plus a `/proc` walk.
//!
//! [`own_pid_namespace`] gives a process started outside the sandbox (a stdio
//! MCP server from the user's config) a PID namespace of its own, so it can
//! neither see nor signal quiver.
//!
//! What stays unprotected (by mechanism and platform):
//! - Namespaces: `/sys` is the host's; a socket a host process binds inside
//!   the workspace after the command started is reachable (and one under
//!   `/var` whose mode lets the command's user write it: Landlock's
//!   `RESOLVE_UNIX` right, kernels after 7.0, would close both; this kernel
//!   generation has no way to scope a path socket's `connect(2)`); a
//!   workspace without `.git` may get one whose config the command wrote
//!   (`git init` must work), and so may a repository it creates below the
//!   root. Root's commands all run as `nobody`, whose `RLIMIT_NPROC` counts
//!   them together, so the process limit for root is a `pids` cgroup where
//!   one is writable; where a writable root cannot be idmapped (some network
//!   and FUSE file systems), root's command stays root, and the log says so.
//! - The Landlock fallback ([`SandboxMechanism::gaps`] lists what it lacks
//!   against the namespaces, and `quiver sandbox --check` prints it): a
//!   protected path is put back after the command, not refused while it
//!   runs; metadata changes are not file writes to Landlock (`chmod`,
//!   `chown`, `touch -d`, xattrs still work on files outside the writable
//!   roots); other processes' `/proc` entries stay readable (reads are
//!   otherwise an allowlist, `read_allow`, which costs new ptys: their
//!   other end is refused like a host terminal); root-only files in the
//!   system trees stay readable to a root command; `connect(2)` to a path
//!   Unix socket is no file access to Landlock, so with network granted
//!   host sockets are reachable; leftover background processes live until the
//!   job is killed; denied programs are refused by the parse of the line
//!   only. ABI < 3 cannot refuse `truncate(2)` outside the writable roots;
//!   ABI < 6 cannot stop a command signalling quiver or reaching abstract
//!   sockets.
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
//! Order on one command: `env.apply_to(cmd)` (it clears the environment),
//! then the containment job's hook and [`die_with_parent`], then
//! `sandbox.apply_to(cmd)` last (it sets `TMPDIR`; in the namespace sandbox a
//! hook registered after it would run inside the namespaces), spawn,
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
mod connect_supervisor;
#[cfg(target_os = "linux")]
mod contain;
#[cfg(target_os = "linux")]
mod egress;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod namespace;
#[cfg(target_os = "linux")]
mod paths;
pub mod protected;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(target_os = "linux")]
pub use contain::{
    Containment, JOB_MARKER, Job, Mechanism, Prefer, REAPER_ARG, enable_reaper, reap_if_asked, sweep_stale,
};
pub use env::{EnvPolicy, Inherit, user_scrub_list};
pub use hook::{PreExecTarget, die_with_parent};
pub use own_env::{Withheld, WithholdError, secret_env, secret_env_os, withheld_env, withhold_own_secrets};
#[cfg(target_os = "linux")]
pub use paths::normalize;
pub use pid_namespace::own_pid_namespace;
pub use policy::{SandboxPolicy, quiver_config_dir, quiver_state_dir, user_config_file, user_home_allow};
pub use probe::{NO_USERNS_VAR, Probe, ProbeError, probe};
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
