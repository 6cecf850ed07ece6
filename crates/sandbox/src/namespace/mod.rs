//! The namespace sandbox (Linux, unprivileged user namespaces): the primary
//! mechanism wherever the kernel allows them.
//!
//! What a command sees:
//! - its own user, mount, PID, IPC and UTS namespaces, and without network
//!   its own network namespace with only loopback (up);
//! - a fresh `/proc` showing only its own processes;
//! - the whole filesystem read-only (and `nosuid`), except the writable
//!   roots (the workspace) and a private `/tmp` and `/dev/shm`;
//! - the protected paths of each writable root ([`crate::protected`])
//!   bound read-only on top, and the home's dot entries too when a writable
//!   root contains `$HOME`;
//! - the home's credential directories and files, and quiver's own config
//!   and state, masked by empty read-only mounts;
//! - an empty `/run` (and `/var/run`) and a private `/tmp`: no host socket
//!   is reachable by path (docker, ssh-agent, tmux, X11, D-Bus), and the
//!   network namespace leaves no abstract socket either; every `connect`
//!   goes through quiver's supervisor, which refuses a listener outside the
//!   sandbox (`crate::connect_supervisor`);
//! - a `/dev` with only `null`, `zero`, `full`, `random`, `urandom`, `tty`,
//!   `pts`, `ptmx`, `shm` and the `fd` links (no disks, no other terminals);
//! - the programs of single-word deny rules (`sudo`, `su`, `mkfs*`, ...)
//!   bound over by an empty, unexecutable file, whatever spelling runs them;
//! - no capabilities at all, in any namespace.
//!
//! Paths under `/tmp` that the command needs (a workspace there, its working
//! directory, `PATH` entries) are bound into the private `/tmp` first, at the
//! same path. The mount sequence itself runs in [`child`].

mod child;
pub(crate) mod home;
pub(crate) mod idmap;

use std::ffi::CString;
use std::io;
use std::os::raw::c_int;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use crate::paths::normalize;
use crate::protected;

#[cfg(target_env = "gnu")]
pub(crate) type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
pub(crate) type Resource = c_int;

/// One step of the mount sequence.
#[derive(Debug, Clone)]
pub(crate) enum MountOp {
    /// A recursive bind of `src` onto `dst`.
    /// `best_effort`: any failure skips it (what only adds visibility: a
    /// toolchain in the home, a `PATH` entry; never a boundary).
    Bind { src: CString, dst: CString, optional: bool, best_effort: bool },
    /// An empty tmpfs on `dst`.
    Tmpfs { dst: CString, data: CString, optional: bool },
    /// A fresh devpts instance on `dst` (its own terminals and `ptmx`).
    Devpts { dst: CString },
    /// `src`'s mount tree, idmapped through the user namespace `userns`,
    /// onto `dst`: a writable root of a command that root started
    /// ([`idmap`]).
    Idmapped { src: CString, dst: CString, userns: std::os::fd::RawFd },
    /// Sets (or clears) read-only on the mount at `path` (and, `recursive`,
    /// every mount beneath).
    ReadOnly { path: CString, read_only: bool, optional: bool, recursive: bool },
}

impl MountOp {
    /// A step whose target may not exist inside the sandbox (it lay under a
    /// directory that is replaced): skipped on `ENOENT`.
    pub(crate) fn optional(&self) -> bool {
        match self {
            MountOp::Bind { optional, .. } | MountOp::Tmpfs { optional, .. } | MountOp::ReadOnly { optional, .. } => {
                *optional
            }
            MountOp::Idmapped { .. } => false,
            // A kernel that refuses a devpts instance in a user namespace
            // leaves `/dev/pts` empty: no terminal at all, never the host's.
            MountOp::Devpts { .. } => true,
        }
    }

    /// Whether failing with `errno` skips this step instead of failing the
    /// spawn.
    pub(crate) fn tolerates(&self, errno: Option<i32>) -> bool {
        match self {
            MountOp::Devpts { .. } | MountOp::Bind { best_effort: true, .. } => true,
            _ => self.optional() && matches!(errno, Some(libc::ENOENT) | Some(libc::ENOTDIR)),
        }
    }
}

/// Everything the child needs, prepared in the parent.
#[derive(Debug, Clone)]
pub(crate) struct NsPlan {
    pub(crate) flags: c_int,
    pub(crate) uid_map: Vec<u8>,
    pub(crate) gid_map: Vec<u8>,
    pub(crate) ops: Vec<MountOp>,
    pub(crate) loopback_up: bool,
    pub(crate) cwd: CString,
    pub(crate) rlimits: Vec<(Resource, u64)>,
    /// Set when root started the command: no user namespace, the writable
    /// roots idmapped, and the command run as this unprivileged user.
    pub(crate) root_map: Option<idmap::RootMap>,
}

impl NsPlan {
    pub(crate) fn enter(&self) -> io::Result<()> {
        child::enter(self)
    }
}

/// The private directories one sandbox mounts (its `/tmp`, `/dev/shm`, the
/// skeleton of its `/dev` and `/run`), kept alive with the sandbox.
#[derive(Debug)]
pub(crate) struct Private {
    dir: tempfile::TempDir,
}

impl Private {
    pub(crate) fn new() -> io::Result<Private> {
        let dir = tempfile::Builder::new().prefix("quiver-sandbox-").tempdir()?;
        let root = dir.path();
        for sub in ["tmp", "shm", "dev", "dev/pts", "dev/shm", "run", "stage", "home"] {
            std::fs::create_dir_all(root.join(sub))?;
        }
        for dev in DEVICES {
            std::fs::write(root.join("dev").join(dev), b"")?;
        }
        // The private devpts's own multiplexer: a terminal a command opens
        // is one of its own, never one of the host's.
        symlink("pts/ptmx", root.join("dev/ptmx"))?;
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            symlink(target, root.join("dev").join(name))?;
        }
        std::fs::write(root.join("empty"), b"")?;
        std::fs::set_permissions(root.join("empty"), std::fs::Permissions::from_mode(0o444))?;
        let denied = root.join("denied");
        std::fs::write(&denied, b"")?;
        std::fs::set_permissions(&denied, std::fs::Permissions::from_mode(0o000))?;
        // Sticky and open to all, like the host's: a root command runs as
        // another user than the one that made them ([`idmap`]).
        for shared in ["tmp", "shm"] {
            std::fs::set_permissions(root.join(shared), std::fs::Permissions::from_mode(0o1777))?;
        }
        Ok(Private { dir })
    }

    /// The host path of the command's `/tmp`.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// The host path of the command's `/dev/shm`.
    pub(crate) fn shm(&self) -> PathBuf {
        self.dir.path().join("shm")
    }

    /// The host path of the command's `/dev` skeleton. Landlock walks up
    /// from a file through the mounts above it but skips the directory a
    /// mount covers, so a rule on `/dev` itself, not on `/dev/pts`, reaches
    /// the devpts instance made later inside the namespace. (The skeleton
    /// is mounted read-only: the rule lets nothing new be made in it.)
    pub(crate) fn dev_dir(&self) -> PathBuf {
        self.dir.path().join("dev")
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }
}

/// Device nodes bound into the private `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// What the plan is built from.
pub(crate) struct Inputs<'a> {
    pub writable: &'a [PathBuf],
    pub network: bool,
    pub extra_read_only: &'a [PathBuf],
    pub deny_programs: &'a [String],
    pub rlimits: Vec<(Resource, u64)>,
    /// The home whose view is restricted ([`home`]); `None`: no home.
    pub home: Option<&'a Path>,
    /// The user's additions to the home's allowlist, relative to the home.
    pub home_allow: &'a [String],
    /// The stand-ins the sandbox holds for absent protected paths: git
    /// inside the sandbox is told to ignore those in a working tree.
    pub stand_ins: &'a [PathBuf],
    /// How a command root started is mapped ([`idmap::RootMap::get`]).
    pub root_map: Option<idmap::RootMap>,
}

fn c(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("a NUL byte in {}", path.display())))
}

fn bind(src: &Path, dst: &Path, optional: bool) -> io::Result<MountOp> {
    Ok(MountOp::Bind { src: c(src)?, dst: c(dst)?, optional, best_effort: false })
}

fn idmapped(src: &Path, dst: &Path, map: &idmap::RootMap) -> io::Result<MountOp> {
    Ok(MountOp::Idmapped { src: c(src)?, dst: c(dst)?, userns: map.userns })
}

fn read_only(path: &Path, ro: bool, optional: bool, recursive: bool) -> io::Result<MountOp> {
    Ok(MountOp::ReadOnly { path: c(path)?, read_only: ro, optional, recursive })
}

fn tmpfs(dst: &Path) -> io::Result<MountOp> {
    Ok(MountOp::Tmpfs { dst: c(dst)?, data: CString::from(c"mode=0755,size=64k"), optional: true })
}

/// Writes a file of the plan's own, readable by its owner only: the command
/// runs as the same uid (or, started by root, is made the owner), and a
/// home's name and email are nobody else's business on the host while the
/// file exists.
fn write_private_file(path: &Path, text: &str, root_map: Option<&idmap::RootMap>) -> io::Result<()> {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    if let Some(map) = root_map {
        std::os::unix::fs::chown(path, Some(map.uid), Some(map.gid))?;
    }
    Ok(())
}

/// The canonical `/tmp`, or `None` when it is missing.
fn host_tmp() -> Option<PathBuf> {
    std::fs::canonicalize("/tmp").ok()
}

/// Builds the plan for a command whose working directory is `cwd`.
///
/// Order matters: the private directory lives in the host's `/tmp`, so
/// every mount that takes something from it comes before `/tmp` is replaced,
/// which is the last step; a target under `/tmp` (a workspace there) is
/// addressed where it was staged, inside the private `/tmp`, and moves to
/// its place with it (a bind copies the mounts beneath and their flags).
pub(crate) fn plan(private: &Private, inputs: &Inputs<'_>, cwd: &Path) -> io::Result<NsPlan> {
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    if !inputs.network {
        flags |= libc::CLONE_NEWNET;
    }
    if inputs.root_map.is_some() {
        flags &= !libc::CLONE_NEWUSER;
    }
    let (uid, gid) = ids();
    let writable: Vec<PathBuf> = inputs.writable.iter().map(|p| normalize(p)).collect();
    let cwd = normalize(cwd);
    let tmp = host_tmp();
    let home = home::view(inputs.home, &writable, inputs.home_allow);
    let home_skeleton = home.as_ref().filter(|h| h.replaced).map(|h| h.home.clone());
    // Where a final path under /tmp is while the sequence runs.
    let staged_in_tmp = |path: &Path| -> PathBuf {
        match &tmp {
            Some(tmp) if path.starts_with(tmp) && path != tmp => match path.strip_prefix(tmp) {
                Ok(rel) => private.tmp().join(rel),
                Err(_) => path.to_path_buf(),
            },
            _ => path.to_path_buf(),
        }
    };
    // Where a final path is while the sequence runs: beneath a replaced
    // home, in the home's skeleton (bound onto the home near the end).
    let staged_at = |path: &Path| -> PathBuf {
        match &home_skeleton {
            Some(h) if path.starts_with(h) && path != h => match path.strip_prefix(h) {
                Ok(rel) => private.path("home").join(rel),
                Err(_) => path.to_path_buf(),
            },
            _ => staged_in_tmp(path),
        }
    };
    let mut ops = Vec::new();

    // 1. What must stay visible under the private /tmp is bound into it; a
    // writable root elsewhere is bound onto itself, which makes it a mount of
    // its own whose read-only flag can differ from `/`'s.
    // A workspace inside a repository under /tmp needs the repository's root
    // (its `.git`) visible, read-only, under the workspace's own mount.
    let mut wanted: Vec<PathBuf> = writable.iter().filter_map(|w| repository_above(w)).collect();
    wanted.extend(writable.iter().cloned());
    wanted.push(cwd.clone());
    let mut path_dirs: Vec<PathBuf> = Vec::new();
    for dir in std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default() {
        if dir.is_absolute() && dir.is_dir() {
            path_dirs.push(normalize(&dir));
        }
    }
    wanted.extend(path_dirs.iter().cloned());
    if let Some(h) = &home {
        wanted.extend(h.allowed.iter().cloned());
    }
    // Nothing that contains the home is kept through the skeleton (`PATH`
    // holding `~`, a working directory at `~`): that would keep it whole.
    if let Some(h) = &home_skeleton {
        wanted.retain(|p| !h.starts_with(p) || writable.contains(p));
    }
    // Outer paths first: a path bound later hides what was bound beneath
    // it before (a working directory that is the workspace's parent hid the
    // workspace's own mount, and `mount_setattr` on it failed with EINVAL).
    wanted.sort_by_key(|p| p.components().count());
    // Everything asked for keeps its top-level directory visible.
    let mut needed: Vec<PathBuf> = wanted.clone();
    // Kept for sight only: a home toolchain or a `PATH` entry that cannot be
    // bound (a home on a file system that refuses it) is left out rather
    // than failing every command.
    let mut sight_only: Vec<PathBuf> = home.as_ref().map(|h| h.allowed.clone()).unwrap_or_default();
    sight_only.extend(path_dirs.iter().cloned());
    let mut seen: Vec<PathBuf> = Vec::new();
    for path in wanted {
        // A writable root gets a mount of its own even inside something staged.
        let covered = seen.iter().any(|s| path.starts_with(s));
        if covered && (!writable.contains(&path) || seen.contains(&path)) {
            continue;
        }
        let at = staged_at(&path);
        if at != path {
            if path.is_dir() {
                std::fs::create_dir_all(&at)?;
            } else {
                if let Some(parent) = at.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&at, b"")?;
            }
            let op = match &inputs.root_map {
                Some(map) if writable.contains(&path) => idmapped(&path, &at, map)?,
                _ => {
                    let mut op = bind(&path, &at, false)?;
                    if let MountOp::Bind { best_effort, .. } = &mut op {
                        *best_effort = sight_only.contains(&path) && !writable.contains(&path) && path != cwd;
                    }
                    op
                }
            };
            ops.push(op);
        } else if writable.contains(&path) && path.exists() && path != Path::new("/") {
            ops.push(match &inputs.root_map {
                Some(map) => idmapped(&path, &path, map)?,
                None => bind(&path, &path, false)?,
            });
        } else {
            continue;
        }
        seen.push(path);
    }
    // The replaced home's skeleton: what was bound into it above, and the
    // identity-only `.gitconfig` (unless the user allowed the real one).
    let mut identity: Option<PathBuf> = None;
    if let Some(h) = &home
        && let Some(text) = &h.gitconfig
    {
        let file = private.path("gitconfig");
        write_private_file(&file, text, inputs.root_map.as_ref())?;
        if h.replaced && !h.allowed.contains(&h.home.join(".gitconfig")) {
            write_private_file(&private.path("home/.gitconfig"), text, inputs.root_map.as_ref())?;
        }
        identity = Some(file);
    }
    // Top-level directories nobody asked for are covered (read-only after
    // the read-only pass, like every mask).
    needed.extend(home.as_ref().map(|h| h.home.clone()));
    needed.extend(inputs.extra_read_only.iter().map(|p| normalize(p)));
    let hidden_tops = hidden_top_levels(&needed);
    for top in &hidden_tops {
        ops.push(tmpfs(top)?);
    }
    // 2. /dev and /run from the private skeletons (a devpts of its own is
    // mounted on /dev/pts after the read-only pass).
    for dev in DEVICES {
        ops.push(bind(&Path::new("/dev").join(dev), &private.path("dev").join(dev), true)?);
    }
    ops.push(bind(&private.shm(), &private.path("dev/shm"), false)?);
    if inputs.network {
        // DNS: /etc/resolv.conf often links into /run, which is replaced.
        if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf")
            && let Ok(rel) = target.strip_prefix("/run")
        {
            let at = private.path("run").join(rel);
            if let Some(parent) = at.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&at, b"")?;
            ops.push(bind(&target, &at, true)?);
        }
    }
    ops.push(bind(&private.path("dev"), Path::new("/dev"), false)?);
    for run in ["/run", "/var/run"] {
        let p = Path::new(run);
        if p.is_dir() && !p.is_symlink() {
            ops.push(bind(&private.path("run"), p, true)?);
        }
    }
    // 3. Masks: credentials, and quiver's own config and state. A mask never
    // hides what the command was given (an RLM scratch dir in quiver's
    // state dir, a workspace inside ~/.ssh).
    let mut mask_dirs: Vec<PathBuf> = Vec::new();
    let mut mask_files: Vec<PathBuf> = Vec::new();
    if let Some(home) = inputs.home {
        mask_dirs.extend(protected::HOME_SECRET_DIRS.iter().map(|d| home.join(d)));
        mask_files.extend(protected::HOME_SECRET_FILES.iter().map(|f| home.join(f)));
    }
    mask_dirs.extend(crate::policy::quiver_config_dir());
    mask_dirs.extend(crate::policy::quiver_state_dir());
    // A home inside a writable root: its configuration is hidden but for
    // the allowlist; its `.gitconfig` shows the user's identity only.
    let mut identity_mask: Option<PathBuf> = None;
    if let Some(h) = home.as_ref().filter(|h| !h.replaced) {
        for path in &h.hidden {
            if path.is_dir() && !path.is_symlink() {
                mask_dirs.push(path.clone());
            } else if *path == h.home.join(".gitconfig") && identity.is_some() {
                identity_mask = Some(path.clone());
            } else {
                mask_files.push(path.clone());
            }
        }
    }
    // Beneath a replaced home only what was kept is there to mask.
    let in_skeleton_but_not_kept =
        |p: &Path| home_skeleton.as_ref().is_some_and(|h| p.starts_with(h)) && !seen.iter().any(|s| p.starts_with(s));
    let mask_dirs: Vec<PathBuf> = mask_dirs
        .into_iter()
        .filter(|d| d.is_dir())
        .map(|d| normalize(&d))
        .filter(|d| !writable.iter().chain(std::iter::once(&cwd)).any(|w| w.starts_with(d)))
        .filter(|d| !in_skeleton_but_not_kept(d))
        .map(|d| staged_at(&d))
        .collect();
    let mut mask_files: Vec<PathBuf> = mask_files
        .into_iter()
        .filter(|f| f.symlink_metadata().is_ok() && !f.is_dir())
        .map(|f| normalize(&f))
        .filter(|f| f.is_file() && !in_skeleton_but_not_kept(f))
        .map(|f| staged_at(&f))
        .collect();
    for dir in &mask_dirs {
        ops.push(tmpfs(dir)?);
    }
    // An empty read-only file, not /dev/null: writing a device succeeds
    // on a read-only mount, so a "masked" `.bashrc` would take writes.
    for file in &mask_files {
        ops.push(bind(&private.path("empty"), file, true)?);
    }
    if let (Some(target), Some(file)) = (&identity_mask, &identity) {
        let target = staged_at(target);
        ops.push(bind(file, &target, true)?);
        mask_files.push(target);
    }
    // Host Unix sockets outside what is replaced anyway (/tmp, /run): a
    // read-only mount does not stop connect(2), so each is covered by
    // /dev/null (connect then fails, "Connection refused"). Optional: a
    // socket gone by the time the namespace is built needs no cover.
    let replaced: Vec<PathBuf> = tmp
        .iter()
        .cloned()
        .chain(["/run", "/var/run", "/dev"].map(PathBuf::from))
        .chain(home_skeleton.iter().cloned())
        .collect();
    for socket in host_sockets() {
        let hidden = replaced.iter().chain(&mask_dirs).any(|d| socket.starts_with(d));
        if !hidden {
            ops.push(bind(Path::new("/dev/null"), &staged_at(&socket), true)?);
        }
    }
    // 4. Denied programs, whatever name or path reaches them.
    let denied: Vec<PathBuf> = denied_paths(inputs.deny_programs).iter().map(|p| staged_at(p)).collect();
    for program in &denied {
        ops.push(bind(&private.path("denied"), program, true)?);
    }
    // 5. Protected paths in the writable roots, and a home's dot entries.
    let mut kept: Vec<PathBuf> = Vec::new();
    for root in &writable {
        kept.extend(protected::existing_protected(root));
        kept.extend(inputs.extra_read_only.iter().map(|p| normalize(p)).filter(|p| p.starts_with(root) && p.exists()));
        // A home inside the workspace: the allowed toolchains are seen,
        // not changed (the rest of its configuration is masked above).
        if let Some(h) = home.as_ref().filter(|h| !h.replaced && h.home.starts_with(root)) {
            kept.extend(h.allowed.iter().cloned());
        }
    }
    kept.sort();
    kept.dedup();
    let kept: Vec<PathBuf> = kept.iter().map(|p| staged_at(p)).collect();
    // `.git` is pinned by a (writable) bind onto itself: a mount point
    // cannot be renamed or removed, so `mv .git x` followed by a new `.git`
    // with a config of the command's choosing fails with EBUSY.
    for root in &writable {
        let git = root.join(".git");
        if git.is_dir() && !git.is_symlink() {
            let at = staged_at(&git);
            ops.push(bind(&at, &at, true)?);
        }
    }
    for path in &kept {
        ops.push(bind(path, path, true)?);
    }
    // Inside the sandbox git ignores the stand-ins in a working tree, so a
    // `git add -A` of the command's does not commit an empty `.mcp.json`.
    for (n, root) in writable.iter().enumerate() {
        let exclude = root.join(".git/info/exclude");
        let ours: Vec<String> = inputs
            .stand_ins
            .iter()
            .filter(|p| p.starts_with(root) && !p.starts_with(root.join(".git")))
            .filter_map(|p| p.strip_prefix(root).ok())
            .map(|rel| format!("/{}", rel.display()))
            .collect();
        if ours.is_empty() || !exclude.is_file() {
            continue;
        }
        let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# quiver's sandbox: stand-ins for protected paths, while a command runs\n");
        for line in ours {
            text.push_str(&line);
            text.push('\n');
        }
        let file = private.path(&format!("exclude-{n}"));
        write_private_file(&file, &text, inputs.root_map.as_ref())?;
        let at = staged_at(&exclude);
        ops.push(bind(&file, &at, true)?);
        mask_files.push(at);
    }
    // 6. Read-only everywhere, then writable where granted, then read-only
    // again on what lies inside a writable root.
    ops.push(read_only(Path::new("/"), true, false, true)?);
    for root in &writable {
        ops.push(read_only(&staged_at(root), false, true, true)?);
    }
    ops.push(read_only(Path::new("/dev/shm"), false, false, true)?);
    // A fresh devpts instance, writable (a new terminal is a new entry in
    // it): the command's terminals are its own, and no `/dev/pts/N` of the
    // host is there to open.
    ops.push(MountOp::Devpts { dst: CString::from(c"/dev/pts") });
    for path in kept.iter().chain(&mask_dirs).chain(&mask_files).chain(&denied).chain(&hidden_tops) {
        ops.push(read_only(path, true, true, true)?);
    }
    // 7. The home's skeleton replaces the home (read-only, as `/` is now,
    // with the writable roots beneath it writable: a bind copies the mounts
    // beneath and their flags); last, the private /tmp replaces the host's,
    // carrying what was staged in it; only its own top mount is made
    // writable again.
    if let Some(h) = &home_skeleton {
        let at = staged_in_tmp(h);
        if at != *h {
            std::fs::create_dir_all(&at)?;
        }
        ops.push(bind(&private.path("home"), &at, false)?);
    }
    if let Some(tmp) = &tmp {
        ops.push(bind(&private.tmp(), tmp, false)?);
        ops.push(read_only(tmp, false, false, false)?);
    }
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    Ok(NsPlan {
        flags,
        uid_map,
        gid_map,
        ops,
        loopback_up: !inputs.network,
        cwd: c(&cwd)?,
        rlimits: inputs.rlimits.clone(),
        root_map: inputs.root_map,
    })
}

/// The plan for a process that gets a PID namespace and nothing else of the
/// sandbox ([`crate::own_pid_namespace`]): its own user namespace (which the
/// PID namespace needs without privileges) mapping only the user's own ids,
/// and its own mount namespace, where the one change is P1's fresh `/proc`.
/// Filesystem, network, IPC and host name stay the host's. P2 still drops
/// every capability: root of the new user namespace could otherwise unmount
/// that `/proc` and find the host's beneath.
pub(crate) fn pids_only(cwd: &Path) -> io::Result<NsPlan> {
    let (uid, gid) = ids();
    Ok(NsPlan {
        flags: libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID,
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        ops: Vec::new(),
        loopback_up: false,
        cwd: c(cwd)?,
        rlimits: Vec::new(),
        root_map: None,
    })
}

/// The pathname Unix sockets bound in this network namespace (the host's),
/// from `/proc/net/unix`, where they are now: a socket bound through a
/// symlinked directory is listed under that spelling, so it is covered at
/// its canonical path (a bind follows links; it must cover the socket
/// itself), and one no longer a socket there needs no cover.
fn host_sockets() -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else { return Vec::new() };
    let mut found: Vec<PathBuf> = table
        .lines()
        .skip(1)
        .filter_map(socket_path)
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.file_type().is_socket()))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Top-level directories a command sees: the system's programs, libraries
/// and configuration ([`SYSTEM_TREES`](crate::read_allow::SYSTEM_TREES),
/// the list the Landlock fallback reads too), and the places the sandbox
/// replaces with its own (these). Any other (`/srv`, `/mnt`, `/media`, a
/// `/data` disk) is covered by an empty read-only directory unless the
/// command was given something inside it: a socket bound there later, by
/// any spelling, is not reachable.
const REPLACED_TOPS: &[&str] = &["dev", "run", "tmp", "home"];

/// The top-level directories to cover: not allowed, not a link, and not
/// holding anything in `needed`.
fn hidden_top_levels(needed: &[PathBuf]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/") else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| {
            !crate::read_allow::SYSTEM_TREES.iter().chain(REPLACED_TOPS).any(|a| p.file_name().is_some_and(|n| n == *a))
        })
        .filter(|p| !needed.iter().any(|n| n.starts_with(p)))
        .collect();
    out.sort();
    out
}

/// The path of one `/proc/net/unix` line (`Num RefCount Protocol Flags Type
/// St Inode Path`): what follows the seventh field, if it is absolute
/// (abstract sockets start with `@`, unbound ones have none).
fn socket_path(line: &str) -> Option<PathBuf> {
    let mut rest = line.trim_start();
    for _ in 0..7 {
        let end = rest.find(' ')?;
        rest = rest[end..].trim_start_matches(' ');
    }
    rest.starts_with('/').then(|| PathBuf::from(rest))
}

/// This process's real uid and gid.
#[allow(unsafe_code)]
fn ids() -> (libc::uid_t, libc::gid_t) {
    // SAFETY: getuid and getgid take nothing and cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// Under an existing `.git` directory, creates the directories git keeps
/// there and `info/exclude` (as `git init` would) so that they can be bound read-only: a
/// missing `hooks` would otherwise be created by the command.
pub(crate) fn prepare_git(root: &Path) {
    let git = root.join(".git");
    if git.is_dir() && !git.is_symlink() {
        for sub in ["hooks", "info"] {
            let _ = std::fs::create_dir(git.join(sub));
        }
        // Where git inside the sandbox learns to ignore the stand-ins.
        if !git.join("info/exclude").exists() {
            let _ = std::fs::write(git.join("info/exclude"), b"");
        }
    }
}

/// The nearest strict ancestor of `dir` that holds a `.git`, when `dir` lies
/// in a repository it is not the root of.
fn repository_above(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().skip(1).find(|a| a.join(".git").exists()).map(Path::to_path_buf)
}

/// Every file on `PATH` (and the system's sbin/bin directories) whose name a
/// single-word deny rule names (`mkfs*` matches by prefix), canonicalized
/// and without duplicates.
pub(crate) fn denied_paths(programs: &[String]) -> Vec<PathBuf> {
    if programs.is_empty() {
        return Vec::new();
    }
    // Listing the PATH directories costs thousands of entries; every
    // sandboxed command asks with the same rules and PATH, so the last answer
    // is kept for that pair.
    type Key = (Vec<String>, Option<std::ffi::OsString>);
    static LAST: parking_lot::Mutex<Option<(Key, Vec<PathBuf>)>> = parking_lot::Mutex::new(None);
    let key = (programs.to_vec(), std::env::var_os("PATH"));
    let mut last = LAST.lock();
    if let Some((k, found)) = last.as_ref()
        && *k == key
    {
        return found.clone();
    }
    let found = scan_for_programs(programs);
    *last = Some((key, found.clone()));
    found
}

/// Multi-call binaries that ordinary work runs under many names: a deny
/// rule that reaches one through a link (`sh -> dash`) is left to the
/// line's parse, since binding over it would deny every name at once.
const MULTI_CALL: &[&str] = &["busybox", "toybox", "coreutils", "bash", "dash", "sh", "zsh", "ksh", "mksh"];

/// Directories searched for denied programs besides `PATH`: the system's,
/// and where programs keep the helpers they run by another name (`git-core`).
const PROGRAM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/usr/lib/git-core",
    "/usr/libexec/git-core",
    "/usr/libexec",
];

/// The programs a deny rule names, by what runs rather than by name: the
/// file each matching name resolves to (`mkfs.ext4 -> mke2fs` denies
/// `mke2fs`, so no spelling of it runs), and every other file in the
/// program directories with the same contents (git's own copy of itself in
/// `git-core`). A copy the command makes itself is not found: deny rules
/// guard against accidents, the sandbox is the boundary.
fn scan_for_programs(programs: &[String]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(PROGRAM_DIRS.iter().map(PathBuf::from));
    let named = |name: &str| {
        programs.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p.as_str(),
        })
    };
    let mut out = Vec::new();
    let mut files: Vec<(PathBuf, u64)> = Vec::new();
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let Ok(real) = std::fs::canonicalize(entry.path()) else { continue };
            let Ok(meta) = real.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            files.push((real.clone(), meta.size()));
            if !named(&entry.file_name().to_string_lossy()) {
                continue;
            }
            let multi_call = real.file_name().is_some_and(|n| MULTI_CALL.iter().any(|m| n == *m));
            if !multi_call {
                out.push(real);
            }
        }
    }
    out.sort();
    out.dedup();
    // Same contents under another name: compared by size first, so only a
    // few files are ever read.
    let denied: Vec<(u64, Vec<u8>)> =
        out.iter().filter_map(|p| Some((p.metadata().ok()?.size(), std::fs::read(p).ok()?))).collect();
    files.sort();
    files.dedup();
    for (path, size) in files {
        if out.contains(&path) || !denied.iter().any(|(s, _)| *s == size) {
            continue;
        }
        if let Ok(bytes) = std::fs::read(&path)
            && denied.iter().any(|(_, d)| *d == bytes)
        {
            out.push(path);
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "namespace_tests.rs"]
mod tests;
