//! `connect(2)` from the namespace sandbox, decided by who listens.
//!
//! A path Unix socket ignores network namespaces: a host process that binds
//! one inside the workspace (or anywhere the command can see) after the
//! command started was reachable, and no mount plan can cover a socket that
//! does not exist yet. So every `connect` of a sandboxed command goes to a
//! supervisor thread in quiver (a seccomp user notification), which makes
//! the connection itself and lets it through only if the process listening
//! on the other end is inside the command's own PID namespace, the sandbox's
//! (in the Landlock fallback with network granted, where there is no PID
//! namespace: a descendant of the command).
//! Anything the host listens on is refused with `EACCES`, whatever the path,
//! its spelling, its links, or when it was bound.
//!
//! The supervisor never lets the kernel re-read the command's arguments
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE` would: another thread of the command
//! could swap the address or the descriptor between the check and the
//! call). It reads the address once and connects:
//! - a socket of another family (TCP, UDP): the command's own socket
//!   (`pidfd_getfd`), so the call behaves as it would have;
//! - an abstract name in the sandbox's private network namespace: the
//!   command's own socket too (only the sandbox's names exist there);
//! - otherwise a socket of its own, checked (`SO_PEERCRED`) and then put in
//!   place of the command's descriptor (`SECCOMP_IOCTL_NOTIF_ADDFD`).
//!
//! A refused connection was still opened: the host process sees a client
//! that connects and leaves without a byte. Datagram Unix sockets are not
//! made at all in a supervised sandbox (see `seccomp`): a datagram's
//! address travels inside `sendmsg`'s message, where a filter cannot see it.
//!
//! Needs Linux 5.9 (`SECCOMP_IOCTL_NOTIF_ADDFD`); on older kernels the
//! sandbox runs without it and says so once.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// The second seccomp filter: every `connect` is handed to the supervisor.
pub(crate) type NotifyFilter = Vec<libc::sock_filter>;

/// `seccomp_data.nr` and `seccomp_data.arch` offsets.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;
/// x32's `connect` shares x86_64's audit arch.
#[cfg(target_arch = "x86_64")]
const X32_CONNECT: u32 = libc::SYS_connect as u32 | 0x4000_0000;
#[cfg(not(target_arch = "x86_64"))]
const X32_CONNECT: u32 = u32::MAX;

/// Whether this kernel and architecture can supervise `connect`.
pub(crate) fn supported() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) && kernel_at_least(5, 9)
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else { return false };
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit()).filter_map(|p| p.parse::<u32>().ok());
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else { return false };
    (a, b) >= (major, minor)
}

/// The filter: `connect` (x86_64's and x32's number) → user notification,
/// everything else allowed (the first filter refuses what it refuses; a
/// foreign architecture is killed there).
pub(crate) fn filter() -> NotifyFilter {
    let stmt = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
    let jeq = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    vec![
        /* 0 */ stmt(load, ARCH_OFFSET),
        /* 1 */ jeq(AUDIT_ARCH, 0, 3),
        /* 2 */ stmt(load, NR_OFFSET),
        /* 3 */ jeq(libc::SYS_connect as u32, 2, 0),
        /* 4 */ jeq(X32_CONNECT, 1, 0),
        /* 5 */ stmt(ret, libc::SECCOMP_RET_ALLOW),
        /* 6 */ stmt(ret, libc::SECCOMP_RET_USER_NOTIF),
    ]
}

/// Between fork and exec (system calls only, nothing allocated): installs
/// `filter` with a listener and sends the listener to quiver over `send`.
#[allow(unsafe_code)]
pub(crate) fn install(filter: &[libc::sock_filter], send: RawFd) -> io::Result<()> {
    let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr().cast_mut() };
    // SAFETY: seccomp(2) with a program on this stack frame pointing at the
    // filter the closure owns.
    let listener = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        )
    };
    if listener < 0 {
        return Err(io::Error::last_os_error());
    }
    let listener = listener as RawFd;
    // SAFETY: getpid has no arguments.
    let sent = send_fd(send, listener, unsafe { libc::getpid() });
    // SAFETY: closing the descriptor seccomp just returned.
    unsafe { libc::close(listener) };
    sent
}

/// Room for one descriptor's control message (`CMSG_SPACE(4)` is 24 on
/// 64-bit Linux), aligned for `cmsghdr`.
#[repr(C, align(8))]
struct ControlBuffer([u8; 32]);

/// A message of one payload buffer (`iov`: the pid) and
/// `control_len` bytes of `control` for the descriptor. Nothing allocated:
/// the sender runs between fork and exec.
#[allow(unsafe_code)]
fn message(iov: &mut libc::iovec, control: &mut ControlBuffer, control_len: usize) -> libc::msghdr {
    // SAFETY: msghdr is plain data; zero is "no name, no flags".
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control_len as _;
    msg
}

/// Sends `fd` with `pid` (the command's, as it sees itself) as the payload.
#[allow(unsafe_code)]
fn send_fd(socket: RawFd, fd: RawFd, pid: libc::pid_t) -> io::Result<()> {
    let mut payload = pid.to_ne_bytes();
    let mut iov = libc::iovec { iov_base: payload.as_mut_ptr().cast(), iov_len: payload.len() };
    let mut control = ControlBuffer([0; 32]);
    // SAFETY: a msghdr over this frame's buffers, filled through the libc
    // CMSG helpers within the buffer's size.
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let msg = message(&mut iov, &mut control, space);
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The next descriptor sent on `socket`, with the sender's pid; `None` at
/// end of file.
#[allow(unsafe_code)]
fn receive_fd(socket: RawFd) -> io::Result<Option<(OwnedFd, libc::pid_t)>> {
    let mut payload = [0u8; 4];
    let mut iov = libc::iovec { iov_base: payload.as_mut_ptr().cast(), iov_len: payload.len() };
    let mut control = ControlBuffer([0; 32]);
    // SAFETY: as in `send_fd`; the descriptor read from the control message
    // is new in this process and owned from here on.
    unsafe {
        let room = control.0.len();
        let mut msg = message(&mut iov, &mut control, room);
        let n = libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_level != libc::SOL_SOCKET || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return Err(io::Error::from_raw_os_error(libc::EPROTO));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(Some((OwnedFd::from_raw_fd(fd), libc::pid_t::from_ne_bytes(payload))))
    }
}

/// The end a sandboxed command sends its listener on. Each listener that
/// arrives gets a supervisor thread; the receiving thread ends when every
/// copy of the returned end is closed (the command's hook dropped, the
/// children exec'd).
#[allow(unsafe_code)]
pub(crate) fn channel(proxy: Option<SocketAddr>) -> io::Result<Arc<OwnedFd>> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: socketpair filling this frame's two-element array.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned from here on.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    std::thread::Builder::new().name("quiver-connect-rx".into()).stack_size(64 * 1024).spawn(move || {
        loop {
            match receive_fd(ours.as_raw_fd()) {
                Ok(Some((listener, top))) => {
                    let spawned = std::thread::Builder::new()
                        .name("quiver-connect".into())
                        .stack_size(128 * 1024)
                        .spawn(move || supervise(Arc::new(listener), top, proxy));
                    if let Err(e) = spawned {
                        // The listener is dropped with the closure: the
                        // command's connects then fail (ENOSYS), never pass.
                        tracing::warn!(%e, "sandbox: cannot start the connect supervisor");
                    }
                }
                Ok(None) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::warn!(%e, "sandbox: the connect supervisor's channel failed");
                    break;
                }
            }
        }
    })?;
    Ok(Arc::new(theirs))
}

/// Answers the command's `connect` calls until none of its processes is
/// left. Each call is answered on a thread of its own: a TCP connect may
/// take minutes and must not hold up the others.
#[allow(unsafe_code)]
fn supervise(listener: Arc<OwnedFd>, top: libc::pid_t, proxy: Option<SocketAddr>) {
    loop {
        let mut poll = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: poll on one pollfd of this frame.
        let n = unsafe { libc::poll(&mut poll, 1, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if poll.revents & libc::POLLIN == 0 {
            // POLLHUP: the filter has no process left.
            return;
        }
        // SAFETY: the kernel requires a zeroed notification to fill.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the RECV ioctl fills `req`, a struct of the size it expects.
        if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } != 0 {
            match io::Error::last_os_error().raw_os_error() {
                // The caller died or was interrupted before we read it.
                Some(libc::ENOENT | libc::EINTR) => continue,
                _ => return,
            }
        }
        let shared = listener.clone();
        let answered =
            std::thread::Builder::new().name("quiver-connect-call".into()).stack_size(128 * 1024).spawn(move || {
                let answer = decide(&shared, &req, top, proxy);
                respond(&shared, req.id, answer);
            });
        if answered.is_err() {
            respond(&listener, req.id, Err(libc::EAGAIN));
        }
    }
}

/// The call's return value, or the errno it fails with.
type Answer = Result<i64, i32>;

#[allow(unsafe_code)]
fn respond(listener: &OwnedFd, id: u64, answer: Answer) {
    let (val, error) = match answer {
        Ok(v) => (v, 0),
        Err(errno) => (0, -errno),
    };
    let resp = libc::seccomp_notif_resp { id, val, error, flags: 0 };
    // SAFETY: the SEND ioctl reads `resp`; ENOENT (the caller is gone) needs nothing.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Whether the call is still pending: after it, the pid and memory read
/// belong to the process that made it, not to one that reused its pid.
#[allow(unsafe_code)]
fn still_pending(listener: &OwnedFd, id: u64) -> bool {
    // SAFETY: the ID_VALID ioctl reads one u64 of this frame.
    unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

#[allow(unsafe_code)]
fn decide(listener: &OwnedFd, req: &libc::seccomp_notif, top: libc::pid_t, proxy: Option<SocketAddr>) -> Answer {
    let pid = req.pid as libc::pid_t;
    let fd = req.data.args[0] as RawFd;
    let (addr_ptr, addr_len) = (req.data.args[1], req.data.args[2] as usize);
    // The caller is a thread; pidfd_open wants its process (the thread
    // group's leader) before Linux 6.9, and the descriptor table is the
    // process's.
    let process = thread_group(pid).ok_or(libc::ESRCH)?;
    // SAFETY: pidfd_open with integer arguments.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, process, 0) };
    if pidfd < 0 {
        return Err(libc::ESRCH);
    }
    // SAFETY: a new descriptor, owned from here on.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    // SAFETY: pidfd_getfd with integer arguments; the result is new.
    let theirs = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if theirs < 0 {
        return Err(match errno() {
            libc::EBADF => libc::EBADF,
            _ => libc::EACCES,
        });
    }
    // SAFETY: a new descriptor, owned from here on.
    let theirs = unsafe { OwnedFd::from_raw_fd(theirs as RawFd) };
    let mut addr = [0u8; std::mem::size_of::<libc::sockaddr_storage>()];
    let len = addr_len.min(addr.len());
    if len > 0 {
        let local = libc::iovec { iov_base: addr.as_mut_ptr().cast(), iov_len: len };
        let remote = libc::iovec { iov_base: addr_ptr as *mut libc::c_void, iov_len: len };
        // SAFETY: reads `len` bytes of the caller's memory into this frame's buffer.
        if unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) } != len as isize {
            return Err(libc::EFAULT);
        }
    }
    if !still_pending(listener, req.id) {
        return Err(libc::EINTR);
    }
    let addr = &addr[..len];
    let domain = sockopt_int(&theirs, libc::SO_DOMAIN)?;
    // Read only where it decides something (a stat of /proc per use).
    let private_net = || namespace(pid, "net").is_some_and(|theirs| namespace(0, "net") != Some(theirs));
    if domain != libc::AF_UNIX {
        // The sandbox's proxy (`egress`): its advertised address inside the
        // command's own network namespace is quiver's proxy outside.
        if let Some(proxy) = proxy.filter(|p| domain == libc::AF_INET && names(addr, *p) && private_net()) {
            return hand_over_proxy(listener, req, fd, &theirs, proxy);
        }
        return connect(&theirs, addr);
    }
    if len < 2 || u16::from_ne_bytes([addr[0], addr[1]]) != libc::AF_UNIX as u16 {
        return Err(libc::EINVAL);
    }
    let abstract_name = len > 2 && addr[2] == 0;
    if abstract_name && private_net() {
        return connect(&theirs, addr);
    }
    let kind = sockopt_int(&theirs, libc::SO_TYPE)?;
    if kind != libc::SOCK_STREAM && kind != libc::SOCK_SEQPACKET {
        return Err(libc::EACCES);
    }
    // SAFETY: fcntl with integer arguments.
    let nonblocking = unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_GETFL) } & libc::O_NONBLOCK != 0;
    let flags = libc::SOCK_CLOEXEC | if nonblocking { libc::SOCK_NONBLOCK } else { 0 };
    // SAFETY: socket with integer arguments; the result is new.
    let ours = unsafe { libc::socket(libc::AF_UNIX, kind | flags, 0) };
    if ours < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor, owned from here on.
    let ours = unsafe { OwnedFd::from_raw_fd(ours) };
    if abstract_name {
        connect(&ours, addr)?;
    } else {
        let path = &addr[2..];
        let path = &path[..path.iter().position(|&b| b == 0).unwrap_or(path.len())];
        let socket = open_in(pid, path)?;
        let via = format!("/proc/self/fd/{}", socket.as_raw_fd());
        connect(&ours, &sockaddr_un(via.as_bytes())?)?;
    }
    if !listens_inside(&ours, pid, top) {
        tracing::debug!(pid, "sandbox: refused a connection to a Unix socket no process of the sandbox listens on");
        return Err(libc::EACCES);
    }
    put_in_place(listener, req, fd, &ours)
}

/// Installs `ours` at the caller's descriptor `fd`, closing what was there
/// (`SECCOMP_IOCTL_NOTIF_ADDFD`), close-on-exec as the original was.
#[allow(unsafe_code)]
fn put_in_place(listener: &OwnedFd, req: &libc::seccomp_notif, fd: RawFd, ours: &OwnedFd) -> Answer {
    let cloexec = fd_cloexec(req.pid as libc::pid_t, fd);
    let addfd = libc::seccomp_notif_addfd {
        id: req.id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: ours.as_raw_fd() as u32,
        newfd: fd as u32,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: the ADDFD ioctl reads `addfd`; it installs a copy of `ours`
    // at the caller's descriptor number, closing what was there.
    if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) } < 0 {
        return Err(errno());
    }
    Ok(0)
}

/// Whether the IPv4 socket address `addr` (as the caller wrote it) is
/// `127.0.0.1` at `proxy`'s port.
fn names(addr: &[u8], proxy: SocketAddr) -> bool {
    addr.len() >= 8
        && u16::from_ne_bytes([addr[0], addr[1]]) == libc::AF_INET as u16
        && u16::from_be_bytes([addr[2], addr[3]]) == proxy.port()
        && addr[4..8] == [127, 0, 0, 1]
}

/// Connects a TCP socket of quiver's own to the proxy on the host's
/// loopback and puts it in place of the caller's, blocking or not as the
/// caller's was.
#[allow(unsafe_code)]
fn hand_over_proxy(
    listener: &OwnedFd,
    req: &libc::seccomp_notif,
    fd: RawFd,
    theirs: &OwnedFd,
    proxy: SocketAddr,
) -> Answer {
    let stream = std::net::TcpStream::connect_timeout(&proxy, std::time::Duration::from_secs(5))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::ECONNREFUSED))?;
    // SAFETY: fcntl with integer arguments.
    let nonblocking = unsafe { libc::fcntl(theirs.as_raw_fd(), libc::F_GETFL) } & libc::O_NONBLOCK != 0;
    stream.set_nonblocking(nonblocking).map_err(|_| libc::EIO)?;
    let _ = stream.set_nodelay(true);
    put_in_place(listener, req, fd, &OwnedFd::from(stream))
}

#[allow(unsafe_code)]
fn sockopt_int(fd: &OwnedFd, name: libc::c_int) -> Result<i32, i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into an int of this frame.
    let rc =
        unsafe { libc::getsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, name, (&mut value as *mut i32).cast(), &mut len) };
    if rc != 0 { Err(libc::ENOTSOCK) } else { Ok(value) }
}

#[allow(unsafe_code)]
fn connect(fd: &OwnedFd, addr: &[u8]) -> Answer {
    // SAFETY: connect with a buffer of `addr.len()` bytes.
    let rc = unsafe { libc::connect(fd.as_raw_fd(), addr.as_ptr().cast(), addr.len() as libc::socklen_t) };
    if rc != 0 { Err(errno()) } else { Ok(0) }
}

/// A `sockaddr_un` for `path`, as bytes.
fn sockaddr_un(path: &[u8]) -> Result<Vec<u8>, i32> {
    let room = std::mem::size_of::<libc::sockaddr_un>() - 2;
    if path.len() >= room {
        return Err(libc::ENAMETOOLONG);
    }
    let mut addr = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    addr.extend_from_slice(path);
    addr.push(0);
    Ok(addr)
}

/// `path` opened (`O_PATH`) as the caller `pid` would find it, resolved
/// within its root (`RESOLVE_IN_ROOT`: `..` and absolute links stay inside
/// its view). A relative path is joined to its working directory as it
/// names it; a directory another of its threads changes to meanwhile only
/// changes which of its own sockets is found. Resolving from the working
/// directory's descriptor instead would follow an absolute link to the
/// host's file, and connecting there (refused or not) could start a
/// socket-activated host service.
#[allow(unsafe_code)]
fn open_in(pid: libc::pid_t, path: &[u8]) -> Result<OwnedFd, i32> {
    use std::os::unix::ffi::OsStrExt;
    if path.is_empty() {
        return Err(libc::EINVAL);
    }
    let mut name = if path[0] == b'/' {
        Vec::new()
    } else {
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).map_err(|_| libc::ENOENT)?;
        let cwd = cwd.as_os_str().as_bytes();
        // "(unreachable)/..." or "... (deleted)": no path to join to.
        if !cwd.starts_with(b"/") || cwd.ends_with(b" (deleted)") {
            return Err(libc::ENOENT);
        }
        let mut joined = cwd.to_vec();
        joined.push(b'/');
        joined
    };
    name.extend_from_slice(path);
    name.push(0);
    let base = format!("/proc/{pid}/root\0");
    // SAFETY: open of a NUL-terminated path; the result is new.
    let dir = unsafe { libc::open(base.as_ptr().cast(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if dir < 0 {
        return Err(libc::EACCES);
    }
    // SAFETY: a new descriptor, owned from here on.
    let dir = unsafe { OwnedFd::from_raw_fd(dir) };
    // SAFETY: open_how is plain integers; zero is its "nothing asked".
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_MAGICLINKS | libc::RESOLVE_IN_ROOT;
    // SAFETY: openat2 with a NUL-terminated name and an open_how of this frame.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor, owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat into a struct of this frame.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        // What connect(2) says of a path that is not a socket.
        return Err(libc::ECONNREFUSED);
    }
    Ok(fd)
}

/// Whether the process listening on the other end of `socket` belongs to
/// the caller `pid`'s sandbox: in the namespace sandbox, it is in the same
/// PID namespace (not quiver's own); in the Landlock fallback (no PID
/// namespace), it descends from `top`, the command quiver started. An
/// orphan of the command (a double fork) has left that line and is refused.
#[allow(unsafe_code)]
fn listens_inside(socket: &OwnedFd, pid: libc::pid_t, top: libc::pid_t) -> bool {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt into a ucred of this frame.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 || cred.pid <= 0 {
        return false;
    }
    let Some(sandbox) = namespace(pid, "pid") else { return false };
    if namespace(0, "pid") != Some(sandbox) {
        return namespace(cred.pid, "pid") == Some(sandbox);
    }
    descends_from(cred.pid, top)
}

/// Whether `pid` is `top` or below it, by parent links (bounded).
fn descends_from(mut pid: libc::pid_t, top: libc::pid_t) -> bool {
    for _ in 0..4096 {
        if pid == top {
            return true;
        }
        if pid <= 1 {
            return false;
        }
        match parent_of(pid) {
            Some(parent) => pid = parent,
            None => return false,
        }
    }
    false
}

/// A process's parent, from `/proc/<pid>/stat` (after the command's name,
/// which may hold spaces and parentheses: the fields after its last `)`).
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
}

/// The process (thread group) thread `tid` belongs to.
fn thread_group(tid: libc::pid_t) -> Option<libc::pid_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Tgid:"))?.trim().parse().ok()
}

/// The identity of `pid`'s namespace of `kind` (0: quiver's own, read once:
/// quiver never changes namespaces).
fn namespace(pid: libc::pid_t, kind: &str) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    use std::sync::OnceLock;
    let read = |path: String| std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    if pid != 0 {
        return read(format!("/proc/{pid}/ns/{kind}"));
    }
    static OWN_NET: OnceLock<Option<(u64, u64)>> = OnceLock::new();
    static OWN_PID: OnceLock<Option<(u64, u64)>> = OnceLock::new();
    match kind {
        "net" => *OWN_NET.get_or_init(|| read("/proc/self/ns/net".into())),
        "pid" => *OWN_PID.get_or_init(|| read("/proc/self/ns/pid".into())),
        _ => read(format!("/proc/self/ns/{kind}")),
    }
}

/// Whether the caller's descriptor `fd` is close-on-exec (its `fdinfo`
/// flags, octal, hold `O_CLOEXEC`).
fn fd_cloexec(pid: libc::pid_t, fd: RawFd) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
        .ok()
        .and_then(|info| {
            let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
            u64::from_str_radix(flags.trim(), 8).ok()
        })
        .is_some_and(|flags| flags & libc::O_CLOEXEC as u64 != 0)
}

#[cfg(test)]
#[path = "connect_supervisor_tests.rs"]
mod tests;
