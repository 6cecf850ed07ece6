//! The namespace sandbox's code between fork and exec: system calls only,
//! on data the parent prepared (see [`super::NsPlan`]). Nothing here
//! allocates or takes a lock (the hook module's rule).
//!
//! Three processes, because a new PID namespace applies to the children of
//! the process that makes it, and its first process is its init:
//!
//! - **P0**, the child std forked: makes the user (not as root: see
//!   [`super::idmap`]), mount, PID, IPC, UTS and (without network) network
//!   namespaces, maps its own uid and gid, builds
//!   the mount tree, forks P1, closes every descriptor (so `spawn` returns as
//!   soon as P2 execs) and waits; it exits with P1's status. It is the pid
//!   quiver sees, in quiver's cgroup job and process group.
//! - **P1**, pid 1 of the new namespace: dies with P0 (`PR_SET_PDEATHSIG`),
//!   mounts a fresh `/proc` (only the sandbox's processes, so no other
//!   process's environment), brings up loopback, forks P2, closes every
//!   descriptor, reaps orphans and exits with P2's status. When it exits the
//!   kernel kills everything left in the namespace: a `setsid` or
//!   double-forked leftover never outlives the command, and never holds its
//!   output pipe open.
//! - P0 and P1 pass interrupting signals (SIGINT, SIGTERM, ...) on to their
//!   child, so the command is interrupted, not its sandbox torn down.
//! - **P2** re-enters its working directory on the new mounts, sets the
//!   limits, drops every capability (as root, becomes the unprivileged user
//!   too) and returns to std, which runs the later
//!   hooks (Landlock, seccomp) and execs the command.

use std::io;
use std::os::raw::{c_char, c_int, c_ulong};
use std::sync::atomic::{AtomicI32, Ordering};

use super::idmap::MountAttr;
use super::{MountOp, NsPlan};

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: c_int = super::idmap::AT_RECURSIVE as c_int;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

fn check(rc: c_int) -> io::Result<()> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

fn check_long(rc: libc::c_long) -> io::Result<()> {
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Runs the whole sequence; returns only in P2 (or with an error in P0/P1,
/// which std reports as the spawn's error).
#[allow(unsafe_code)]
pub(super) fn enter(plan: &NsPlan) -> io::Result<()> {
    // SAFETY (whole function): plain system calls on NUL-terminated buffers
    // and repr(C) structs owned by the plan or this stack frame.
    unsafe {
        // quiver keeps itself non-dumpable, and a fork inherits that until
        // exec: the child's own /proc/self/uid_map would then be root's and
        // a user who is not root could not map itself.
        // Root makes no user namespace (see `idmap`): it builds the mounts
        // as root and P2 becomes the unprivileged user before exec.
        if plan.root_map.is_none() {
            check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
        }
        check(libc::unshare(plan.flags))?;
        if plan.root_map.is_none() {
            write_file(c"/proc/self/setgroups".as_ptr(), b"deny")?;
            write_file(c"/proc/self/uid_map".as_ptr(), &plan.uid_map)?;
            write_file(c"/proc/self/gid_map".as_ptr(), &plan.gid_map)?;
        }
        // Non-dumpable again: P0 and P1 never exec, so they hold a copy of
        // quiver's memory (its keys) while the command runs, and P1 is pid 1
        // in the command's own `/proc`. Dumpable, a process of the same uid
        // could read that memory through /proc/<pid>/mem. The command
        // itself is dumpable again after its exec.
        check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))?;
        // Nothing done here may propagate back to quiver's namespace.
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        for op in &plan.ops {
            if let Err(e) = run_op(op)
                && !op.tolerates(e.raw_os_error())
            {
                return Err(e);
            }
        }
        // A command started from quiver's own session would share its
        // controlling terminal (`/dev/tty` is the person's terminal): P1
        // starts a session of its own then. One already given its own
        // session and terminal (a job's pty) keeps it.
        let own_session = libc::getsid(0) == libc::getpid();
        let p1 = libc::fork();
        if p1 < 0 {
            return Err(io::Error::last_os_error());
        }
        if p1 > 0 {
            forward_signals_to(p1);
            close_all();
            // P1 is P0's only child, so waiting for any child waits for it.
            libc::_exit(reap_until(p1));
        }
        // P1: init of the new PID namespace.
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        if !own_session {
            check(libc::setsid())?;
        }
        check(libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ))?;
        if plan.loopback_up {
            loopback_up()?;
        }
        let p2 = libc::fork();
        if p2 < 0 {
            return Err(io::Error::last_os_error());
        }
        if p2 > 0 {
            forward_signals_to(p2);
            close_all();
            libc::_exit(reap_until(p2));
        }
        // P2: the command.
        check(libc::chdir(plan.cwd.as_ptr()))?;
        for (resource, value) in &plan.rlimits {
            let lim = libc::rlimit { rlim_cur: *value, rlim_max: *value };
            check(libc::setrlimit(*resource, &lim))?;
        }
        drop_capabilities(plan.root_map.map(|m| (m.uid, m.gid)))
    }
}

#[allow(unsafe_code)]
unsafe fn run_op(op: &MountOp) -> io::Result<()> {
    // SAFETY: see `enter`.
    unsafe {
        match op {
            MountOp::Bind { src, dst, .. } => check(libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            )),
            MountOp::Idmapped { src, dst, userns } => {
                let fd = super::idmap::open_tree(src.as_ptr(), *userns)?;
                let rc = libc::syscall(
                    libc::SYS_move_mount,
                    fd,
                    c"".as_ptr(),
                    libc::AT_FDCWD,
                    dst.as_ptr(),
                    super::idmap::MOVE_MOUNT_F_EMPTY_PATH,
                );
                let err = io::Error::last_os_error();
                libc::close(fd);
                if rc < 0 { Err(err) } else { Ok(()) }
            }
            MountOp::Devpts { dst } => check(libc::mount(
                c"devpts".as_ptr(),
                dst.as_ptr(),
                c"devpts".as_ptr(),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
            )),
            MountOp::Tmpfs { dst, data, .. } => check(libc::mount(
                c"tmpfs".as_ptr(),
                dst.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr().cast(),
            )),
            MountOp::ReadOnly { path, read_only, recursive, .. } => {
                let attr = MountAttr {
                    attr_set: if *read_only { MOUNT_ATTR_RDONLY } else { 0 },
                    attr_clr: if *read_only { 0 } else { MOUNT_ATTR_RDONLY },
                    propagation: 0,
                    userns_fd: 0,
                };
                check_long(libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    if *recursive { AT_RECURSIVE as libc::c_uint } else { 0 },
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                ))
            }
        }
    }
}

#[allow(unsafe_code)]
unsafe fn write_file(path: *const c_char, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: see `enter`.
    unsafe {
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(err);
        }
        Ok(())
    }
}

/// Closes every descriptor of this process (P0 and P1 hold copies of the
/// command's stdio and of std's exec-error pipe; the command's own copies
/// are its business).
#[allow(unsafe_code)]
unsafe fn close_all() {
    // SAFETY: close_range with integer arguments.
    unsafe {
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
    }
}

/// The child a relaying process (P0, P1) passes signals on to; each process
/// has its own copy after fork.
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

/// Signals a person or quiver sends to stop or interrupt a command (an RLM
/// eval's SIGINT, a timeout's SIGTERM): P0 would die of them and P1, the
/// namespace's init, would ignore them, so both pass them on instead and
/// the command sees them as if it had been signalled itself.
const FORWARDED: [c_int; 6] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];

extern "C" fn forward(sig: c_int) {
    let pid = FORWARD_TO.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

#[allow(unsafe_code)]
unsafe fn forward_signals_to(pid: libc::pid_t) {
    FORWARD_TO.store(pid, Ordering::Relaxed);
    // SAFETY: sigaction with a zeroed struct on this stack frame and a
    // handler that only calls kill.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = forward as extern "C" fn(c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for sig in FORWARDED {
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// The exit status a shell would report for `status`.
fn code(status: c_int) -> c_int {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// Reaps children until `main` exits and returns its status as a shell
/// would report it. As init (P1) this also reaps the namespace's orphans,
/// and exiting afterwards kills the rest of the namespace.
#[allow(unsafe_code)]
unsafe fn reap_until(main: libc::pid_t) -> c_int {
    let mut status: c_int = 0;
    loop {
        // SAFETY: waitpid(-1) with a stack out-pointer.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == main {
            return code(status);
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 1;
        }
    }
}

/// `ip link set lo up` by ioctl: a new network namespace starts with its
/// loopback down, and local servers in tests need it.
#[allow(unsafe_code)]
unsafe fn loopback_up() -> io::Result<()> {
    // SAFETY: socket/ioctl/close on a zeroed `ifreq` on this stack frame.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as c_char;
        req.ifr_name[1] = b'o' as c_char;
        let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req);
        if rc == 0 {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            rc = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &req);
        }
        let err = io::Error::last_os_error();
        libc::close(fd);
        if rc != 0 { Err(err) } else { Ok(()) }
    }
}

/// Empties the bounding, ambient and process capability sets: root inside
/// the namespace could otherwise unmount the read-only binds (they were made
/// in its own user namespace) or exec with full capabilities. `as_user`:
/// the uid and gid a root command becomes (no supplementary groups either),
/// after the bounding set is dropped (which needs `CAP_SETPCAP`) and before
/// the last capabilities go.
#[allow(unsafe_code)]
unsafe fn drop_capabilities(as_user: Option<(libc::uid_t, libc::gid_t)>) -> io::Result<()> {
    // SAFETY: prctl with integers; capset with repr(C) structs on this frame.
    unsafe {
        for cap in 0..64 as c_ulong {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                // EINVAL: past the kernel's last capability.
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(io::Error::last_os_error());
            }
        }
        check(libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))?;
        if let Some((uid, gid)) = as_user {
            check(libc::setgroups(0, std::ptr::null()))?;
            check(libc::setresgid(gid, gid, gid))?;
            check(libc::setresuid(uid, uid, uid))?;
        }
        let header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
        let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
        check_long(libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()))
    }
}
