//! Opening paths beneath the workspace root with the kernel's help.
//!
//! [`Workspace::resolve`] checks a path string, but between that check and the
//! use of the path another process can swap a directory on the way for a
//! symlink pointing outside. So every file tool opens what it reads, writes or
//! lists relative to a descriptor of the root, never by path string:
//!
//! - Linux ≥ 5.6: `openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`;
//!   the kernel refuses (EXDEV) any resolution that leaves the root, whatever
//!   symlink appears mid-call. `..` and symlinks that stay inside still work.
//! - elsewhere (older kernels, openat2 filtered by a container's seccomp,
//!   non-Linux): a component-by-component walk from the root descriptor with
//!   `O_NOFOLLOW`, following symlinks by hand (at most 40, never an absolute
//!   one, never `..` above the root). A swap between one step's `lstat` and its
//!   `openat` makes that `openat` fail (`O_NOFOLLOW`), never escape.
//!
//! Writes go to a temporary file created inside the target's directory
//! descriptor and renamed within it (`renameat`), so even the rename cannot be
//! redirected. Files are opened `O_NONBLOCK`, so a FIFO swapped in is reported,
//! not waited on.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::workspace::Workspace;

/// Symlinks followed in one resolution before it counts as a loop (Linux's limit).
const MAX_HOPS: usize = 40;
/// `openat2` answers EAGAIN when a rename raced a `..` lookup; it is safe to retry.
const MAX_RETRIES: usize = 16;

/// How the components of a path may be resolved.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Links {
    /// Symlinks are followed as long as they stay beneath the root.
    Beneath,
    /// No symlink anywhere: for entries a directory walk found, whose path
    /// therefore held only real directories when it was read.
    None,
}

fn is_path(flags: OFlags) -> bool {
    #[cfg(target_os = "linux")]
    return flags.contains(OFlags::PATH);
    #[cfg(not(target_os = "linux"))]
    return {
        let _ = flags;
        false
    };
}

fn dir_flags() -> OFlags {
    #[cfg(target_os = "linux")]
    return OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    return OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
}

/// Whether `openat2` works here (checked once, on the first open).
fn have_openat2(root: BorrowedFd<'_>) -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    *HAVE.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            let probe = rustix::fs::openat2(
                root,
                ".",
                OFlags::PATH | OFlags::CLOEXEC,
                Mode::empty(),
                rustix::fs::ResolveFlags::BENEATH,
            );
            match probe {
                Err(Errno::NOSYS | Errno::PERM) => {
                    tracing::info!("openat2 is unavailable; file tools resolve paths component by component");
                    false
                }
                _ => true,
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = root;
            false
        }
    })
}

/// The error every escape attempt gets, in words a model can act on.
fn escape() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the path leaves the workspace root through a symlink (or changed to one during the call)",
    )
}

fn changed() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the path changed while it was being opened; try again")
}

fn loop_error() -> io::Error {
    io::Error::other("too many levels of symbolic links (a symlink loop)")
}

fn map_errno(e: Errno) -> io::Error {
    match e {
        Errno::XDEV => escape(),
        Errno::LOOP => loop_error(),
        other => other.into(),
    }
}

impl Workspace {
    /// `path` (absolute inside the root, or relative to it) as a path relative
    /// to the root; `.` for the root itself.
    fn beneath<'a>(&self, path: &'a Path) -> io::Result<&'a Path> {
        let rel = if path.is_absolute() { path.strip_prefix(self.root()).map_err(|_| escape())? } else { path };
        Ok(if rel.as_os_str().is_empty() { Path::new(".") } else { rel })
    }

    fn open_rel(&self, rel: &Path, flags: OFlags, mode: Mode, links: Links) -> io::Result<OwnedFd> {
        let root = self.root_fd();
        // openat2 is strict: O_PATH admits only O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC.
        let flags = if is_path(flags) { flags | OFlags::CLOEXEC } else { flags | OFlags::CLOEXEC | OFlags::NOCTTY };
        #[cfg(target_os = "linux")]
        if have_openat2(root) {
            use rustix::fs::ResolveFlags;
            let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            if links == Links::None {
                resolve |= ResolveFlags::NO_SYMLINKS;
            }
            for _ in 0..MAX_RETRIES {
                match rustix::fs::openat2(root, rel, flags, mode, resolve) {
                    Err(Errno::AGAIN) => continue,
                    other => return other.map_err(map_errno),
                }
            }
            return Err(changed());
        }
        walk_open(root, rel, flags, mode, links)
    }

    /// Opens an existing file for reading beneath the root, following symlinks
    /// that stay inside. `O_NONBLOCK`: a FIFO opens at once; check the kind with
    /// `metadata()` before reading (see [`Workspace::read_regular`]).
    pub fn open_read(&self, path: &Path) -> io::Result<File> {
        let fd =
            self.open_rel(self.beneath(path)?, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty(), Links::Beneath)?;
        Ok(File::from(fd))
    }

    /// Reads a whole regular file beneath the root. A directory, FIFO, socket or
    /// device is refused at once (never waited on); so is a file over `max_bytes`.
    pub fn read_regular(&self, path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
        let file = self.open_read(path).map_err(ReadError::Io)?;
        let meta = file.metadata().map_err(ReadError::Io)?;
        if meta.is_dir() {
            return Err(ReadError::Directory);
        }
        if !meta.is_file() {
            return Err(ReadError::NotRegular);
        }
        if meta.len() > max_bytes {
            return Err(ReadError::TooLarge(meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        io::Read::read_to_end(&mut &file, &mut bytes).map_err(ReadError::Io)?;
        Ok(bytes)
    }

    /// Opens an entry a directory walk found, refusing a symlink anywhere on its
    /// path: the walk never follows links, so a link here means the tree changed
    /// under the walk and the entry may lie outside. `read: false` opens it
    /// `O_PATH` (for `metadata()` only; a symlink entry itself is opened, not
    /// followed); `read: true` for reading (a symlink is refused, a FIFO opens
    /// without blocking).
    pub fn open_walked(&self, path: &Path, read: bool) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        let meta_only = OFlags::PATH;
        #[cfg(not(target_os = "linux"))]
        let meta_only = OFlags::RDONLY | OFlags::NONBLOCK;
        let flags = if read { OFlags::RDONLY | OFlags::NONBLOCK } else { meta_only };
        let fd = self.open_rel(self.beneath(path)?, flags | OFlags::NOFOLLOW, Mode::empty(), Links::None)?;
        Ok(File::from(fd))
    }

    /// `lstat` beneath the root: symlinks on the way are followed (inside), the
    /// last component is not.
    pub fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        let (dir, name) = self.parent_of(path)?;
        let Some(name) = name else {
            return File::from(self.open_rel(Path::new("."), dir_flags(), Mode::empty(), Links::Beneath)?).metadata();
        };
        #[cfg(target_os = "linux")]
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        #[cfg(not(target_os = "linux"))]
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&dir, name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => File::from(fd).metadata(),
            // Without O_PATH a symlink cannot be opened; stat it through the dir fd.
            Err(Errno::LOOP) => std::fs::symlink_metadata(fd_path(&dir)?.join(&name)),
            Err(e) => Err(map_errno(e)),
        }
    }

    /// The target of a symlink beneath the root (its parent resolved beneath).
    pub fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        let (dir, name) = self.parent_of(path)?;
        let name = name.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the root is not a symlink"))?;
        let target = rustix::fs::readlinkat(&dir, name.as_os_str(), Vec::new()).map_err(map_errno)?;
        Ok(PathBuf::from(OsStr::from_bytes(target.as_bytes())))
    }

    /// Creates one directory beneath the root (its parent must exist).
    pub fn create_dir(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent_of(path)?;
        let name = name.ok_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists))?;
        rustix::fs::mkdirat(&dir, name.as_os_str(), Mode::from_bits_truncate(0o777)).map_err(map_errno)
    }

    /// Creates `path` and every missing directory above it, beneath the root.
    pub fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let rel = self.beneath(path)?;
        let mut prefix = PathBuf::new();
        for comp in rel.components() {
            prefix.push(comp);
            if matches!(comp, Component::CurDir) {
                continue;
            }
            match self.open_rel(&prefix, dir_flags(), Mode::empty(), Links::Beneath) {
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            match self.create_dir(&prefix) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Removes a file (or symlink, not followed) beneath the root.
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent_of(path)?;
        let name = name.ok_or_else(|| io::Error::from(io::ErrorKind::IsADirectory))?;
        rustix::fs::unlinkat(&dir, name.as_os_str(), AtFlags::empty()).map_err(map_errno)
    }

    /// Removes an empty directory beneath the root.
    pub fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent_of(path)?;
        let name = name.ok_or_else(|| io::Error::from(io::ErrorKind::PermissionDenied))?;
        rustix::fs::unlinkat(&dir, name.as_os_str(), AtFlags::REMOVEDIR).map_err(map_errno)
    }

    /// Replaces `path` with `bytes` atomically: a temporary file in the target's
    /// directory (opened beneath the root, missing parents created), flushed,
    /// then renamed over the target within that directory. `mode: None` keeps
    /// an existing file's permission bits (and refuses a read-only file, as an
    /// ordinary write would) or creates with 0666 minus the umask.
    pub fn write_atomic(&self, path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        let rel = self.beneath(path)?;
        if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_dir_all(parent)?;
        }
        let (dir, name) = self.parent_of(rel)?;
        let name = name.ok_or_else(|| io::Error::from(io::ErrorKind::IsADirectory))?;
        let existing = match rustix::fs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Some(st),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(map_errno(e)),
        };
        let keep = existing.as_ref().map(|st| st.st_mode & 0o7777);
        if let Some(st) = &existing {
            let kind = rustix::fs::FileType::from_raw_mode(st.st_mode as _);
            if kind == rustix::fs::FileType::Directory {
                return Err(io::Error::from(io::ErrorKind::IsADirectory));
            }
            if mode.is_none() && kind == rustix::fs::FileType::RegularFile && keep.is_some_and(|m| m & 0o222 == 0) {
                return Err(io::Error::new(io::ErrorKind::PermissionDenied, "read-only file"));
            }
        }
        let (tmp_name, tmp) = create_temp(&dir)?;
        let result = (|| {
            let mut file = File::from(tmp);
            file.write_all(bytes)?;
            if let Some(bits) = mode.or(keep.filter(|_| existing.is_some())) {
                rustix::fs::fchmod(&file, Mode::from_bits_truncate(bits as _))?;
            }
            file.sync_all()?;
            rustix::fs::renameat(&dir, tmp_name.as_os_str(), &dir, name.as_os_str()).map_err(map_errno)
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&dir, tmp_name.as_os_str(), AtFlags::empty());
            return result;
        }
        // Makes the rename durable; best effort (some file systems refuse it).
        #[cfg(target_os = "linux")]
        if let Ok(d) =
            rustix::fs::openat(&dir, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        {
            let _ = rustix::fs::fsync(d);
        }
        Ok(())
    }

    /// The directory holding `path` (opened beneath the root) and the last
    /// component's name; `None` for the root itself.
    fn parent_of(&self, path: &Path) -> io::Result<(OwnedFd, Option<OsString>)> {
        let rel = self.beneath(path)?;
        let mut comps: Vec<Component<'_>> = rel.components().filter(|c| !matches!(c, Component::CurDir)).collect();
        match comps.pop() {
            None => Ok((self.open_rel(Path::new("."), dir_flags(), Mode::empty(), Links::Beneath)?, None)),
            Some(Component::Normal(name)) => {
                let parent: PathBuf = comps.iter().collect();
                let parent = if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent };
                Ok((self.open_rel(&parent, dir_flags(), Mode::empty(), Links::Beneath)?, Some(name.to_os_string())))
            }
            Some(_) => Err(io::Error::new(io::ErrorKind::InvalidInput, "the path must end in a file name")),
        }
    }
}

/// Why [`Workspace::read_regular`] refused.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    Directory,
    /// A FIFO, socket or device: reading could block or never end.
    NotRegular,
    TooLarge(u64),
}

/// A fresh temporary file in `dir`, created `O_EXCL | O_NOFOLLOW`.
fn create_temp(dir: &OwnedFd) -> io::Result<(OsString, OwnedFd)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    for _ in 0..32 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = OsString::from(format!(".quiver-write-{}-{n}-{nanos:x}.tmp", std::process::id()));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(dir, name.as_os_str(), flags, Mode::from_bits_truncate(0o666)) {
            Ok(fd) => return Ok((name, fd)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(map_errno(e)),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "could not create a unique temporary file"))
}

/// `/proc/self/fd/N` (or `/dev/fd/N`) for a directory descriptor.
fn fd_path(fd: &OwnedFd) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    #[cfg(target_os = "linux")]
    return Ok(PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())));
    #[cfg(not(target_os = "linux"))]
    return Ok(PathBuf::from(format!("/dev/fd/{}", fd.as_raw_fd())));
}

/// The fallback resolver: walks `rel` one component at a time from `root`,
/// never letting the kernel follow a symlink (`O_NOFOLLOW` on every step).
pub(crate) fn walk_open(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
    links: Links,
) -> io::Result<OwnedFd> {
    let mut stack: Vec<OwnedFd> = Vec::new();
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_components(&mut queue, rel, false)?;
    let mut hops = 0;
    let nofollow_last = flags.contains(OFlags::NOFOLLOW);
    while let Some(name) = queue.pop_front() {
        let dir = stack.last().map(|d| d.as_fd()).unwrap_or(root);
        if name == ".." {
            if stack.pop().is_none() {
                return Err(escape());
            }
            continue;
        }
        let last = queue.is_empty();
        let st = match rustix::fs::statat(dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) if last => {
                return rustix::fs::openat(dir, name.as_os_str(), flags | OFlags::NOFOLLOW, mode).map_err(map_errno);
            }
            Err(e) => return Err(map_errno(e)),
        };
        let kind = rustix::fs::FileType::from_raw_mode(st.st_mode as _);
        if kind == rustix::fs::FileType::Symlink {
            if last && nofollow_last {
                return rustix::fs::openat(dir, name.as_os_str(), flags, mode).map_err(map_errno);
            }
            if links == Links::None {
                return Err(loop_error());
            }
            hops += 1;
            if hops > MAX_HOPS {
                return Err(loop_error());
            }
            let target = rustix::fs::readlinkat(dir, name.as_os_str(), Vec::new()).map_err(|e| match e {
                // No longer a symlink: it was swapped since the lstat above.
                Errno::INVAL => changed(),
                other => map_errno(other),
            })?;
            let target = PathBuf::from(OsStr::from_bytes(target.as_bytes()));
            push_components(&mut queue, &target, true)?;
            continue;
        }
        if last {
            return rustix::fs::openat(dir, name.as_os_str(), flags | OFlags::NOFOLLOW, mode).map_err(map_errno);
        }
        if kind != rustix::fs::FileType::Directory {
            return Err(Errno::NOTDIR.into());
        }
        let next = rustix::fs::openat(dir, name.as_os_str(), dir_flags() | OFlags::NOFOLLOW, Mode::empty())
            .map_err(map_errno)?;
        stack.push(next);
    }
    let dir = stack.last().map(|d| d.as_fd()).unwrap_or(root);
    rustix::fs::openat(dir, ".", flags & !OFlags::NOFOLLOW, mode).map_err(map_errno)
}

/// Queues the components of `path` (at the front when it is a symlink's target).
/// An absolute target leaves the root: refused, as `RESOLVE_BENEATH` does.
fn push_components(queue: &mut VecDeque<OsString>, path: &Path, front: bool) -> io::Result<()> {
    let mut parts = Vec::new();
    for comp in path.components() {
        match comp {
            Component::RootDir | Component::Prefix(_) => return Err(escape()),
            Component::CurDir => {}
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::Normal(n) => parts.push(n.to_os_string()),
        }
    }
    if front {
        for part in parts.into_iter().rev() {
            queue.push_front(part);
        }
    } else {
        queue.extend(parts);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) fn walk_open_for_test(ws: &Workspace, rel: &Path, read: bool) -> io::Result<File> {
    let flags = if read { OFlags::RDONLY | OFlags::NONBLOCK } else { OFlags::PATH | OFlags::NOFOLLOW };
    walk_open(ws.root_fd(), rel, flags | OFlags::CLOEXEC, Mode::empty(), Links::Beneath).map(File::from)
}

#[cfg(test)]
#[path = "workspace_open_tests.rs"]
mod tests;
