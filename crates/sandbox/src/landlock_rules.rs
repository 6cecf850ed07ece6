//! The Landlock ruleset for one policy, built in the parent.
//!
//! Landlock only allows: a rule grants rights on a file hierarchy, and nothing
//! can take a right away beneath it. So a writable root that contains a path
//! that must stay read-only (`.git/config`, `.git/hooks`, quiver's config dir)
//! cannot be granted as a whole. It is *split*: each entry of the root is
//! granted on its own, except the protected one, and a directory on the way to
//! a protected path is split again (`.git` → every entry but `config` and
//! `hooks`). The split directories themselves get only the right to be
//! listed, because any right on a directory is inherited by everything
//! beneath it (a `make_reg` on the root would let a command create
//! `.git/hooks/pre-commit`, a `read_file` read every file beneath). Reads
//! are split the same way where they are an allowlist (the Landlock
//! fallback, [`crate::read_allow`]): a grant is split around the closed
//! paths beneath it (`~/.cargo` around `~/.cargo/credentials.toml`).
//!
//! What the callers split today: the namespace sandbox nothing (its mounts
//! keep the protected paths read-only, and Landlock only repeats the outer
//! boundary); the Landlock fallback only quiver's own config and state
//! directories, where a writable root holds them. The fallback grants the
//! workspace whole, since splitting it around `.git/config` and the like
//! refused every new top-level entry, and its guard puts the protected paths
//! back after the command instead.
//!
//! Limits that follow, on purpose:
//! - a new entry directly in a split directory cannot be created: such a
//!   command needs the `full` policy (with approval). This is why the
//!   fallback no longer splits a workspace around its protected paths (the
//!   guard undoes changes to them instead); what is still split is quiver's
//!   own config and state and, with the home inside a writable root, the
//!   home's configuration (so `mkdir ~/new` is refused there). Rules are
//!   rebuilt for every sandbox, so an entry created by an approved command is
//!   writable by the next sandboxed one.
//! - symlinks among the entries are not followed: a rule on a workspace entry
//!   `evil -> /etc` would grant `/etc`.
//! - entries are opened relative to their parent's descriptor with
//!   `O_NOFOLLOW`, so swapping a directory for a symlink while the rules are
//!   built grants nothing outside.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope,
};
use nix::dir::Dir;

use crate::paths::normalize;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// The newest ABI whose rights this crate asks for; older kernels get the
/// subset they know (best effort), which `probe` reports.
const TARGET_ABI: ABI = ABI::V7;

/// Device files every tool writes or opens read-write, in the namespace
/// sandbox (whose `/dev/pts` is a devpts of its own; the fallback's devices
/// are [`crate::read_allow::DEVICES`]).
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"];

#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    /// Inside the writable roots, what gets no write right (each root is
    /// split around those beneath it).
    pub read_only: Vec<PathBuf>,
    /// What may be read and run; `None`: everything (the namespace sandbox,
    /// whose mounts decide what there is to read).
    pub reads: Option<Reads>,
}

/// The Landlock fallback's read allowlist ([`crate::read_allow`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Reads {
    /// Granted read and execute, each split around `closed`.
    pub roots: Vec<PathBuf>,
    /// Neither readable nor writable beneath any grant. A root lying inside
    /// one is granted all the same: it was given on purpose (a workspace in
    /// quiver's state dir), as the namespace sandbox never masks one.
    pub closed: Vec<PathBuf>,
}

/// Everything but the rights a path needs to be read.
fn write_rights() -> BitFlags<AccessFs> {
    // IoctlDev is not handled at all: terminals and other devices a tool
    // already holds keep working, and device ioctls are no write to a file.
    AccessFs::from_write(TARGET_ABI) & !AccessFs::IoctlDev
}

fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_read(TARGET_ABI) | write_rights()
}

fn file_rights(rights: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
    rights & AccessFs::from_file(TARGET_ABI)
}

/// Read and write on a device file (not on what lies beside it).
fn device_rights() -> BitFlags<AccessFs> {
    file_rights(AccessFs::from_read(TARGET_ABI) | AccessFs::WriteFile | AccessFs::Truncate)
}

/// Builds the ruleset: read and execute where `rules.reads` says (all of
/// `/` when it says nothing), write in `writable` minus `rules.read_only`,
/// signals and abstract sockets only within the same sandbox.
pub(crate) fn build(writable: &[PathBuf], rules: &Rules) -> Result<OwnedFd, String> {
    let err = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    let mut ruleset: RulesetCreated = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled())
        .map_err(|e| err("landlock handle_access", &e))?
        // A sandboxed command must not signal (kill, stop) quiver or anything
        // else outside its own sandbox; its own children it may.
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(|e| err("landlock scope", &e))?
        .create()
        .map_err(|e| err("landlock create", &e))?;
    let mut grants: Vec<(OwnedFd, BitFlags<AccessFs>)> = Vec::new();
    let closed: &[PathBuf] = match &rules.reads {
        None => {
            let root = open_path(Path::new("/")).map_err(|e| err("opening /", &e))?;
            grants.push((root, AccessFs::from_read(TARGET_ABI)));
            for dev in WRITABLE_DEVICES {
                let Ok(fd) = open_path(Path::new(dev)) else { continue };
                let is_dir = File::from(fd.try_clone().map_err(|e| err(dev, &e))?).metadata().is_ok_and(|m| m.is_dir());
                grants.push((fd, if is_dir { handled() } else { device_rights() }));
            }
            &[]
        }
        Some(reads) => {
            for root in &reads.roots {
                grant(root, &reads.closed, AccessFs::from_read(TARGET_ABI), &mut grants);
            }
            // Files, never a directory: a rule on `/dev` or `/dev/pts` would
            // reach every terminal of the host.
            for dev in crate::read_allow::DEVICES {
                let Ok(fd) = open_path(Path::new(dev)) else { continue };
                let meta = File::from(fd.try_clone().map_err(|e| err(dev, &e))?).metadata();
                if meta.is_ok_and(|m| !m.is_dir()) {
                    grants.push((fd, device_rights()));
                }
            }
            &reads.closed
        }
    };
    let mut not_writable: Vec<PathBuf> = rules.read_only.iter().map(|p| normalize(p)).collect();
    not_writable.extend(closed.iter().cloned());
    for root in writable {
        grant(root, &not_writable, handled(), &mut grants);
    }
    for (fd, rights) in grants {
        ruleset = ruleset.add_rule(PathBeneath::new(fd, rights)).map_err(|e| err("landlock rule", &e))?;
    }
    Option::<OwnedFd>::from(ruleset).ok_or_else(|| "Landlock is not supported by this kernel".to_string())
}

/// Grants `rights` on `root` (a directory or a file), split around what of
/// `excluded` lies strictly beneath it; a root that cannot be opened is
/// left out.
fn grant(
    root: &Path,
    excluded: &[PathBuf],
    rights: BitFlags<AccessFs>,
    grants: &mut Vec<(OwnedFd, BitFlags<AccessFs>)>,
) {
    let root = normalize(root);
    let beneath: Vec<PathBuf> = excluded.iter().filter(|e| e.starts_with(&root) && **e != root).cloned().collect();
    match open_dir_at(None, &root) {
        Ok(dir) => split(dir, &root, &beneath, rights, grants),
        Err(nix::Error::ENOTDIR) => match open_path(&root) {
            Ok(fd) => grants.push((fd, file_rights(rights))),
            Err(e) => tracing::debug!(root = %root.display(), %e, "not granted"),
        },
        Err(e) => tracing::debug!(root = %root.display(), %e, "cannot be opened; not granted"),
    }
}

/// Grants `rights` on `dir` (at `path`) whole when no excluded path lies
/// beneath it, otherwise on each of its entries on its own, and on `dir`
/// itself only the listing (which Landlock then allows beneath it too:
/// names, never contents).
fn split(
    dir: OwnedFd,
    path: &Path,
    read_only: &[PathBuf],
    rights: BitFlags<AccessFs>,
    grants: &mut Vec<(OwnedFd, BitFlags<AccessFs>)>,
) {
    if read_only.iter().any(|ro| path.starts_with(ro)) {
        return;
    }
    if !read_only.iter().any(|ro| ro.starts_with(path)) {
        grants.push((dir, rights));
        return;
    }
    let Ok(entries) = list(&dir) else { return };
    if let Ok(listing) = dir.try_clone()
        && rights.contains(AccessFs::ReadDir)
    {
        grants.push((listing, AccessFs::ReadDir.into()));
    }
    for name in entries {
        let child = path.join(&name);
        if read_only.iter().any(|ro| child.starts_with(ro)) {
            continue;
        }
        let Ok(fd) = open_at(&dir, &name) else { continue };
        let Ok(meta) = File::from(match fd.try_clone() {
            Ok(f) => f,
            Err(_) => continue,
        })
        .metadata() else {
            continue;
        };
        // A `.git` *file* (a worktree's pointer to its git dir) or any other
        // non-directory where a read-only path was expected: writing it could
        // point git at a config the command wrote, so it stays read-only.
        let on_the_way = read_only.iter().any(|ro| ro.starts_with(&child));
        if on_the_way && !meta.is_dir() {
            continue;
        }
        if meta.is_dir() {
            match open_dir_at(Some(&dir), Path::new(&name)) {
                Ok(sub) => split(sub, &child, read_only, rights, grants),
                Err(_) => continue,
            }
        } else if meta.is_symlink() {
            // Never follow: the target is governed by its own rules.
            continue;
        } else {
            grants.push((fd, file_rights(rights)));
        }
    }
}

fn list(dir: &OwnedFd) -> nix::Result<Vec<std::ffi::OsString>> {
    use std::os::unix::ffi::OsStrExt;
    let mut d = Dir::from_fd(dir.try_clone().map_err(|_| nix::Error::EBADF)?)?;
    let mut names = Vec::new();
    for entry in d.iter() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_os_string());
        }
    }
    Ok(names)
}

/// `O_PATH` descriptor of `path` (symlinks followed: only used for trusted
/// system paths and the roots the caller gave).
fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    Ok(OwnedFd::from(std::fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH | libc::O_CLOEXEC).open(path)?))
}

/// `O_PATH` descriptor of `name` inside `dir`, never following a symlink.
fn open_at(dir: &OwnedFd, name: &OsStr) -> nix::Result<OwnedFd> {
    nix::fcntl::openat(dir.as_fd(), name, OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC, Mode::empty())
}

/// A readable directory descriptor, relative to `dir` when given; the last
/// component is never a symlink.
fn open_dir_at(dir: Option<&OwnedFd>, path: &Path) -> nix::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match dir {
        Some(dir) => nix::fcntl::openat(dir.as_fd(), path, flags, Mode::empty()),
        None => nix::fcntl::open(path, flags, Mode::empty()),
    }
}

#[cfg(test)]
#[path = "landlock_rules_tests.rs"]
mod tests;
