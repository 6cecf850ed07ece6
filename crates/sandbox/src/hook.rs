//! The one place where this crate runs code in a forked child, before exec.
//!
//! Between `fork` and `exec` of a multi-threaded program only async-signal-safe
//! calls are allowed: another thread may have held the allocator's lock at the
//! fork, so allocating could deadlock. Everything a step needs (the Landlock
//! ruleset fd, the compiled BPF program, the open `cgroup.procs`) is therefore
//! prepared in the parent, and the steps below only make system calls.
//!
//! Hooks compose: `pre_exec` closures run in the order they were registered, so
//! these steps run after (or before) any hook the caller already has (the
//! parent-death signal, `setsid`, claiming a terminal).

#[cfg(target_os = "linux")]
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// A command a hook can be registered on: `std::process::Command`, and
/// `tokio::process::Command` with the `tokio` feature.
pub trait PreExecTarget {
    fn std_command(&mut self) -> &mut std::process::Command;
}

impl PreExecTarget for std::process::Command {
    fn std_command(&mut self) -> &mut std::process::Command {
        self
    }
}

#[cfg(feature = "tokio")]
impl PreExecTarget for tokio::process::Command {
    fn std_command(&mut self) -> &mut std::process::Command {
        self.as_std_mut()
    }
}

/// What the child does before exec.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Move itself into the job's cgroup by writing "0" to that cgroup's open
    /// `cgroup.procs`: done before exec, so nothing the command forks can start
    /// outside the cgroup.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    JoinCgroup(Arc<OwnedFd>),
    /// Become the child subreaper of its own descendants: orphans of the job stay
    /// under the job's leader (hence findable by parent links) while it lives.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Subreaper,
    /// `no_new_privs`, then Landlock, then the seccomp filter. Landlock goes
    /// first so the filter can never get in the way of its system calls.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Confine { landlock: Option<Arc<OwnedFd>>, seccomp: Option<Arc<Bpf>> },
    /// Enter the namespace sandbox (see `namespace::child`): returns only in
    /// the command's process, inside the namespaces.
    #[cfg(target_os = "linux")]
    Namespace(Arc<crate::namespace::NsPlan>),
    /// Hand every `connect` to quiver's supervisor (see `connect_supervisor`):
    /// install the notifying filter and send its listener on `send`. After
    /// `Confine`, whose `no_new_privs` an unprivileged filter needs.
    #[cfg(target_os = "linux")]
    SuperviseConnect { send: Arc<OwnedFd>, filter: Arc<crate::connect_supervisor::NotifyFilter> },
    /// Resource limits (the Landlock fallback; the namespace step sets its own).
    #[cfg(target_os = "linux")]
    Limits(Arc<Vec<(crate::namespace::Resource, u64)>>),
    /// SIGKILL when the spawning thread's process dies (`PR_SET_PDEATHSIG`),
    /// then fail the spawn if that process (this pid) is already gone; and
    /// the interrupting signals at their default disposition.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    DieWithParent(i32),
}

/// Makes `cmd`'s process get SIGKILL when quiver dies, even by SIGKILL (where
/// no cleanup runs). The "parent" the kernel watches is the spawning *thread*:
/// spawn from a long-lived thread (a tokio worker), never from a short-lived
/// `spawn_blocking` thread, or the child dies with that thread.
pub fn die_with_parent(cmd: &mut impl PreExecTarget) {
    let parent = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    register(cmd.std_command(), Step::DieWithParent(parent));
}

/// A compiled seccomp program (opaque outside Linux).
#[cfg(target_os = "linux")]
pub(crate) type Bpf = seccompiler::BpfProgram;
#[cfg(not(target_os = "linux"))]
pub(crate) type Bpf = Vec<u64>;

/// Registers `step` to run in the child between fork and exec.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) fn register(cmd: &mut std::process::Command, step: Step) {
    use std::os::unix::process::CommandExt;
    let hook = move || -> io::Result<()> {
        match &step {
            Step::JoinCgroup(procs) => {
                // SAFETY: `write` on an fd the closure keeps open, from a static buffer.
                let n = unsafe { libc::write(procs.as_raw_fd(), b"0".as_ptr().cast(), 1) };
                if n != 1 {
                    return Err(io::Error::last_os_error());
                }
            }
            Step::Subreaper => {
                // SAFETY: prctl with integer arguments only.
                if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Step::Confine { landlock, seccomp } => {
                // Descriptors quiver inherited from whoever started it (an
                // editor, a script's `exec 3>>file`, a terminal) would reach
                // the command too, and a descriptor is a right the sandbox
                // never checks again: writing an inherited file or socket
                // outside the workspace needs no path. Only stdio survives
                // exec; std's own exec-error pipe is close-on-exec already.
                close_inherited_on_exec()?;
                // A quiver started with SIGINT ignored (a shell's background
                // job, some service managers) passes that on, and an ignored
                // signal stays ignored across exec: Python then never raises
                // KeyboardInterrupt, so an RLM eval past its limit was killed
                // instead of interrupted. The command starts with the default
                // disposition of the signals quiver interrupts it with.
                default_interrupt_signals();
                // Landlock and an unprivileged seccomp filter both require it; it
                // also stops a setuid binary from regaining what was taken.
                // SAFETY: prctl with integer arguments only.
                if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(ruleset) = landlock {
                    // SAFETY: landlock_restrict_self(ruleset_fd, flags = 0) on an fd
                    // the closure keeps open; no memory is passed.
                    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
                    if rc != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(bpf) = seccomp {
                    // Safe wrapper: builds a `sock_fprog` on the stack pointing at
                    // the already compiled program, then prctl + seccomp(2); it
                    // allocates nothing on success, and its errors carry raw errnos.
                    seccompiler::apply_filter(bpf).map_err(|e| match e {
                        seccompiler::Error::Seccomp(err) | seccompiler::Error::Prctl(err) => err,
                        _ => io::Error::from_raw_os_error(libc::EINVAL),
                    })?;
                }
            }
            Step::Namespace(plan) => plan.enter()?,
            Step::SuperviseConnect { send, filter } => crate::connect_supervisor::install(filter, send.as_raw_fd())?,
            Step::Limits(limits) => {
                for (resource, value) in limits.iter() {
                    let lim = libc::rlimit { rlim_cur: *value, rlim_max: *value };
                    // SAFETY: setrlimit with a struct on this stack frame.
                    if unsafe { libc::setrlimit(*resource, &lim) } != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            Step::DieWithParent(parent) => {
                // SAFETY: prctl and getppid with integer arguments only.
                if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                // quiver may have died before the signal was armed.
                if unsafe { libc::getppid() } != *parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                // Every command quiver contains, sandboxed or not (where no
                // sandbox is available), starts with the interrupting
                // signals at their default (see `Step::Confine`).
                default_interrupt_signals();
            }
        }
        Ok(())
    };
    // SAFETY: the hook only makes the system calls above (write, prctl,
    // close_range/fcntl, landlock_restrict_self, seccomp, sendmsg, close, setrlimit, and the namespace
    // sequence's unshare/mount/fork/wait), allocates nothing (everything it uses
    // was built before fork and is owned by the closure; errors carry raw errnos)
    // and takes no lock, so running it between fork and exec cannot deadlock.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Marks every descriptor above stdio close-on-exec: `close_range` with
/// `CLOSE_RANGE_CLOEXEC` (Linux 5.11), else one `fcntl` per possible
/// descriptor up to the soft `RLIMIT_NOFILE`. Only system calls, no
/// allocation (it runs between fork and exec).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn close_inherited_on_exec() -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
    // SAFETY: close_range with integer arguments only.
    if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) } == 0 {
        return Ok(());
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit with a struct on this stack frame.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let top = i32::try_from(lim.rlim_cur).unwrap_or(i32::MAX);
    for fd in 3..top {
        // SAFETY: fcntl with integer arguments; EBADF for a closed one is expected.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Sets SIGINT, SIGTERM, SIGHUP and SIGQUIT to their default disposition.
/// Only `signal` calls (async-signal-safe; it runs between fork and exec).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn default_interrupt_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: signal with integer arguments and SIG_DFL.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn register(_cmd: &mut std::process::Command, _step: Step) {}
