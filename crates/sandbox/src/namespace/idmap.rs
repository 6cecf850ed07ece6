//! Root never stays root in the namespace sandbox.
//!
//! A user namespace mapping uid 0 to itself leaves a root command the owner
//! of every root-owned file: capabilities gone or not, `/etc/shadow`
//! (`root:shadow 0640`) and `/var/lib`'s service state stay readable by
//! their owner. So when quiver runs as root, the command runs as the
//! unprivileged [`UNPRIVILEGED`] uid and gid instead, and the writable roots
//! are mounted *idmapped*: on them, a file root owns on disk is seen as
//! owned by the command (it can write its workspace, git finds the
//! repository its own), and what the command creates is owned by root on
//! disk, as before. Everywhere else the command is that unprivileged user.
//!
//! An idmapped mount needs `CAP_SYS_ADMIN` over the file system's own user
//! namespace (the host's, for a disk): only real root can make one, so for
//! root the sandbox makes no user namespace at all. P0 builds the mount tree
//! as root in its new mount namespace, and P2 drops every capability and
//! becomes the unprivileged user before exec (see `child`). The idmapping
//! itself is a user namespace made once per process ([`RootMap::get`]),
//! mapping 0 inside to [`UNPRIVILEGED`] outside; nothing runs in it.
//!
//! Where a writable root's file system cannot be idmapped (some network
//! and FUSE file systems, kernels before 5.12), or a directory above it
//! only root may cross (the command would reach its workspace by a relative
//! path only), the command stays root mapped to root, as the log says once.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::raw::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The uid and gid a root command runs as: `nobody`/`nogroup`, the id every
/// system reserves for "no one" (and the one a container's user namespace
/// most surely maps).
pub(crate) const UNPRIVILEGED: (libc::uid_t, libc::gid_t) = (65534, 65534);

pub(super) const OPEN_TREE_CLONE: libc::c_uint = 1;
pub(super) const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;
pub(super) const AT_RECURSIVE: libc::c_uint = 0x8000;
pub(super) const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;
pub(super) const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// `struct mount_attr` of `mount_setattr(2)` (here, not in `child`, which
/// uses both: this module is the leaf).
#[repr(C)]
pub(super) struct MountAttr {
    pub(super) attr_set: u64,
    pub(super) attr_clr: u64,
    pub(super) propagation: u64,
    pub(super) userns_fd: u64,
}

/// How a root command is mapped: to whom, and through which idmapping.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RootMap {
    pub(crate) uid: libc::uid_t,
    pub(crate) gid: libc::gid_t,
    /// The idmapping's user namespace, open for the life of the process.
    pub(crate) userns: RawFd,
}

/// The idmapping user namespace of this process, made on first use.
static USERNS: OnceLock<Result<OwnedFd, String>> = OnceLock::new();

impl RootMap {
    /// The mapping for a command whose writable roots are `writable`:
    /// `Ok(None)` when quiver is not root (nothing to map), `Err(why)`
    /// when root cannot be mapped here (the command then stays root).
    pub(crate) fn get(writable: &[PathBuf], replaced: &[PathBuf]) -> Result<Option<RootMap>, String> {
        if !running_as_root() {
            return Ok(None);
        }
        for root in writable {
            if let Some(closed) = closed_ancestor(root, replaced) {
                return Err(format!(
                    "{} lies in {}, which only root may cross (the command would not reach its workspace)",
                    root.display(),
                    closed.display()
                ));
            }
        }
        let userns = match USERNS.get_or_init(|| make_userns(UNPRIVILEGED).map_err(|e| e.to_string())) {
            Ok(fd) => fd.as_raw_fd(),
            Err(why) => return Err(format!("no user namespace for the idmapping: {why}")),
        };
        for root in writable.iter().filter(|r| r.exists()) {
            // Made and dropped: the child makes its own for each command.
            idmapped_tree(root, userns).map_err(|e| format!("{} cannot be idmapped: {e}", root.display()))?;
        }
        Ok(Some(RootMap { uid: UNPRIVILEGED.0, gid: UNPRIVILEGED.1, userns }))
    }
}

/// A directory above `root` that the unprivileged user cannot cross (no
/// search bit for others), outside the places the sandbox rebuilds with
/// open directories (`replaced`: its private `/tmp`, a replaced home):
/// there the command would reach its workspace by a relative path only, and
/// git, or anything that resolves an absolute path, would fail.
fn closed_ancestor(root: &Path, replaced: &[PathBuf]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    root.ancestors()
        .skip(1)
        .filter(|a| a.parent().is_some())
        .filter(|a| !replaced.iter().any(|r| a.starts_with(r)))
        .find(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 == 0))
        .map(Path::to_path_buf)
}

/// [`RootMap::get`], falling back to no mapping with a warning logged once.
pub(crate) fn root_map_or_warn(writable: &[PathBuf], replaced: &[PathBuf]) -> Option<RootMap> {
    static WARNED: std::sync::Once = std::sync::Once::new();
    match RootMap::get(writable, replaced) {
        Ok(map) => map,
        Err(why) => {
            WARNED.call_once(|| {
                tracing::warn!(%why, "sandboxed commands run as root, which can read root-only files outside the workspace");
            });
            None
        }
    }
}

fn running_as_root() -> bool {
    // SAFETY: geteuid/getuid take nothing and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid() == 0 && libc::getuid() == 0
    }
}

/// A detached copy of the mount tree at `path` (submounts included), idmapped
/// through `userns`: what the child moves onto a writable root.
pub(crate) fn idmapped_tree(path: &Path, userns: RawFd) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: system calls on a NUL-terminated path and a repr(C) struct on
    // this frame; the returned descriptor is owned here.
    #[allow(unsafe_code)]
    unsafe {
        let fd = open_tree(c.as_ptr(), userns)?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// `open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)` then `mount_setattr` with
/// `MOUNT_ATTR_IDMAP`. System calls only, no allocation: the namespace
/// child calls this between fork and exec too.
///
/// # Safety
/// `path` must be NUL-terminated.
#[allow(unsafe_code)]
pub(super) unsafe fn open_tree(path: *const libc::c_char, userns: RawFd) -> io::Result<c_int> {
    // SAFETY: see the function's contract.
    unsafe {
        let fd = libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path,
            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE,
        ) as c_int;
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let attr = MountAttr { attr_set: MOUNT_ATTR_IDMAP, attr_clr: 0, propagation: 0, userns_fd: userns as u64 };
        let rc = libc::syscall(
            libc::SYS_mount_setattr,
            fd,
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        );
        if rc < 0 {
            let err = io::Error::last_os_error();
            libc::close(fd);
            return Err(err);
        }
        Ok(fd)
    }
}

/// A user namespace mapping uid and gid 0 inside to `to` outside, held open
/// by descriptor. A forked helper makes it (a namespace needs a process to
/// be born in) and waits while quiver, root in the parent namespace, writes
/// its maps and opens it; then the helper exits and the descriptor keeps the
/// namespace alive.
fn make_userns(to: (libc::uid_t, libc::gid_t)) -> io::Result<OwnedFd> {
    let uid_map = format!("0 {} 1\n", to.0);
    let gid_map = format!("0 {} 1\n", to.1);
    let (ready_r, ready_w) = pipe()?;
    let (go_r, go_w) = pipe()?;
    // SAFETY: the child only makes system calls (unshare, write, read,
    // _exit) on descriptors and a stack byte: async-signal-safe after fork.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        #[allow(unsafe_code)]
        unsafe {
            // The parent's ends: the helper must see the go pipe close.
            libc::close(go_w.as_raw_fd());
            libc::close(ready_r.as_raw_fd());
            let ok: u8 = if libc::unshare(libc::CLONE_NEWUSER) == 0 { b'1' } else { b'0' };
            libc::write(ready_w.as_raw_fd(), (&ok as *const u8).cast(), 1);
            let mut byte = 0u8;
            libc::read(go_r.as_raw_fd(), (&mut byte as *mut u8).cast(), 1);
            libc::_exit(0);
        }
    }
    drop(ready_w);
    drop(go_r);
    let result = (|| {
        let mut byte = [0u8; 1];
        let n = nix_read(&ready_r, &mut byte)?;
        if n != 1 || byte[0] != b'1' {
            return Err(io::Error::other("the helper could not make a user namespace"));
        }
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        std::fs::write(proc_dir.join("uid_map"), &uid_map)?;
        std::fs::write(proc_dir.join("gid_map"), &gid_map)?;
        std::fs::File::open(proc_dir.join("ns/user")).map(OwnedFd::from)
    })();
    // SAFETY: a one-byte write from a stack byte.
    #[allow(unsafe_code)]
    unsafe {
        libc::write(go_w.as_raw_fd(), b"g".as_ptr().cast(), 1);
    }
    drop(go_w);
    let mut status = 0;
    // SAFETY: waitpid on our own child with a stack out-pointer.
    #[allow(unsafe_code)]
    unsafe {
        libc::waitpid(pid, &mut status, 0);
    }
    result
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: pipe2 fills the two-element array on this frame.
    #[allow(unsafe_code)]
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

fn nix_read(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: read into a live buffer of the given length.
        #[allow(unsafe_code)]
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
