//! What a command may read in the Landlock fallback: an allowlist, not `/`.
//!
//! Where user namespaces are refused there are no mounts to build a view
//! from, so the fallback's Landlock ruleset grants read (and execute) on a
//! list of places instead, and everything else is closed by default,
//! whatever it is called: a tool's token in the home, a data disk at
//! `/data`, another terminal's `/dev/pts/N`.
//!
//! - **The system's trees**: [`SYSTEM_TREES`], the same top-level list the
//!   namespace sandbox keeps in its root view, but of `/var` only
//!   [`VAR_READ`] (package databases and caches; not its logs, mail, spool,
//!   `backups` with their copies of `/etc/shadow`, or the shared
//!   `/var/tmp`). `/run` is closed: it holds the host's sockets, other
//!   sessions' runtime directories and a container's `/run/secrets`, and
//!   nothing a build reads, except DNS's `resolv.conf` where `/etc`'s links
//!   there (that one file is granted). Reading a directory is not connecting
//!   to a socket in it: Landlock's file rights do not cover `connect(2)`, so
//!   host Unix sockets are closed by seccomp refusing `socket(AF_UNIX)` (no
//!   network) instead.
//! - **`PATH`**: every absolute entry (canonical) but one that contains the
//!   home or lies in a closed or hidden place, as the namespace sandbox keeps
//!   them in sight.
//! - **The home**: the namespace sandbox's [`home`](crate::namespace::home)
//!   view, read-only: its toolchain and cache allowlist
//!   ([`HOME_TOOLCHAIN_ALLOW`](crate::protected::HOME_TOOLCHAIN_ALLOW)) and
//!   the user's `[sandbox] home_allow`. git gets the user's identity through
//!   `GIT_CONFIG_GLOBAL` (a file of the sandbox's own) instead of the real
//!   `~/.gitconfig`, which carries credential helpers and tokens.
//! - **Closed beneath every grant**: quiver's own config and state, and the
//!   home's known credential files inside an allowed entry
//!   (`~/.cargo/credentials.toml`): a grant that holds one is split around it.
//! - **A home inside a writable root** (a workspace at `~`, `/home` or `/`):
//!   its ordinary entries are the work and stay writable; of its dot
//!   entries (its configuration) only `.cache` stays writable, the allowed
//!   ones are read-only and every other one is neither readable nor
//!   writable. Since Landlock cannot take a right away beneath a grant, the
//!   writable root is split around them, which costs a new top-level entry of
//!   the home: `mkdir ~/new` is refused there (the namespace sandbox allows it).
//! - **Devices**: [`DEVICES`] only, as files. Not `/dev/pts`: a terminal the
//!   command was handed keeps working (Landlock checks at `open`), but no
//!   other `/dev/pts/N` opens, and neither does the other end of a new pty
//!   from `/dev/ptmx` (`openpty`, `script`, `expect`, `tmux`): its
//!   `/dev/pts/M` is a host path like the others, even through
//!   `TIOCGPTPEER`. `/dev/fd` and `/dev/std*` resolve through `/proc`.
//! - The writable roots, the private temp dir, and the command's working
//!   directory (read-only, added per command) unless it contains the home.
//!
//! Names still show where a directory on the way to a grant is listed (the
//! home when it is the workspace): Landlock's read-directory right reaches
//! everything beneath, so `ls ~/.ssh` lists names there, never contents.

use std::path::{Path, PathBuf};

use crate::paths::normalize;

/// Top-level directories holding the system's programs, libraries and
/// configuration, readable in both mechanisms (the namespace sandbox adds
/// the places it replaces with its own: `/dev`, `/run`, `/tmp`, `/home`).
pub(crate) const SYSTEM_TREES: &[&str] = &[
    "bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt", "nix", "snap", "gnu", "proc", "sys", "var",
];

/// What the Landlock fallback reads of `/var`: package databases
/// (`lib/dpkg`, `lib/rpm`, `lib/ca-certificates` where `/etc/ssl` links),
/// caches (`cache/fontconfig`) and add-on packages' state.
pub(crate) const VAR_READ: &[&str] = &["/var/lib", "/var/cache", "/var/opt"];

/// The device files of the Landlock fallback, read and write.
pub(crate) const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"];

/// What the fallback's ruleset is built from.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadPlan {
    /// Granted read and execute (each split around `closed`).
    pub roots: Vec<PathBuf>,
    /// Neither readable nor writable beneath a grant: quiver's own config
    /// and state, the home's known credentials, a home outside the work as
    /// a whole, the hidden configuration of a home that is the work. A root
    /// lying inside one is granted all the same (an allowed toolchain, a
    /// workspace in quiver's state dir).
    pub closed: Vec<PathBuf>,
    /// Inside the writable roots, what gets no write right besides `closed`:
    /// with the home in a writable root, its allowed entries (which `roots`
    /// reads).
    pub not_writable: Vec<PathBuf>,
    /// The home (normalized), when its view is restricted.
    pub home: Option<PathBuf>,
    /// The global git config the command gets instead of the home's (its
    /// identity only), when the real one is not in sight.
    pub gitconfig: Option<String>,
}

/// The plan for a command writing `writable` (normalized or not), with the
/// home restricted to its allowlist plus `home_allow`.
pub(crate) fn plan(home: Option<&Path>, home_allow: &[String], writable: &[PathBuf]) -> ReadPlan {
    let writable: Vec<PathBuf> = writable.iter().map(|w| normalize(w)).collect();
    let mut out = ReadPlan::default();
    let own: Vec<PathBuf> = crate::policy::quiver_config_dir()
        .into_iter()
        .chain(crate::policy::quiver_state_dir())
        .map(|p| normalize(&p))
        .collect();
    out.closed.extend(own);
    for top in SYSTEM_TREES.iter().filter(|t| **t != "var") {
        out.roots.push(Path::new("/").join(top));
    }
    out.roots.extend(VAR_READ.iter().map(PathBuf::from));
    // DNS: `/etc/resolv.conf` often links into `/run`, which is closed.
    if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf") {
        out.roots.push(target);
    }
    let view = crate::namespace::home::view(home, &writable, home_allow);
    let mut hidden: Vec<PathBuf> = Vec::new();
    if let Some(v) = &view {
        out.closed.extend(
            crate::protected::HOME_SECRET_DIRS
                .iter()
                .chain(crate::protected::HOME_SECRET_FILES)
                .map(|rel| normalize(&v.home.join(rel))),
        );
        out.roots.extend(v.allowed.iter().cloned());
        if !v.replaced {
            // Closed, not only unwritable: a home beneath a system tree
            // (`/var/lib/jenkins`) would be read through that tree's grant.
            out.closed.extend(v.hidden.iter().cloned());
            out.not_writable.extend(v.allowed.iter().cloned());
            hidden = v.hidden.clone();
        }
        // The user's own git config in sight (allowed, or the work):
        // git reads it as it is, and no identity file is needed.
        let sees_own = [".gitconfig", ".config/git"].iter().any(|rel| {
            let p = v.home.join(rel);
            let granted = v.allowed.iter().chain(&writable).any(|g| p.starts_with(g));
            p.symlink_metadata().is_ok() && granted && !hidden.iter().any(|h| p.starts_with(h))
        });
        if !sees_own {
            out.gitconfig = Some(v.gitconfig.clone().unwrap_or_else(|| {
                "# What quiver's sandbox shows of your git config: identity only (none found).\n".to_string()
            }));
        }
        out.home = Some(v.home.clone());
    }
    for dir in std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default() {
        if !dir.is_absolute() {
            continue;
        }
        let Ok(dir) = std::fs::canonicalize(&dir) else { continue };
        let contains_home = out.home.as_ref().is_some_and(|h| h.starts_with(&dir));
        let shut = out.closed.iter().any(|c| dir.starts_with(c));
        if dir.is_dir() && dir != Path::new("/") && !contains_home && !shut {
            out.roots.push(dir);
        }
    }
    // A home outside the work is closed as a whole beneath every grant (a
    // service account's home in `/var/lib`, an `/opt/app` one): what is
    // read of it is what was granted inside it on its own, above.
    if let Some(v) = view.as_ref().filter(|v| v.replaced) {
        out.closed.push(v.home.clone());
    }
    out.roots.retain(|p| p.symlink_metadata().is_ok());
    out.roots.sort();
    out.roots.dedup();
    out.closed.sort();
    out.closed.dedup();
    out.not_writable.sort();
    out.not_writable.dedup();
    out
}

/// Whether `cwd` is to be granted for reading on top of the plan: not
/// already readable (inside a grant and outside the holes split out of it,
/// as `landlock_rules` grants them), and not `/` nor anything holding the home.
pub(crate) fn cwd_needs_grant(plan: &ReadPlan, writable: &[PathBuf], cwd: &Path) -> bool {
    let cwd = normalize(cwd);
    let reached = |root: &PathBuf, holes: &[&PathBuf]| {
        let root = normalize(root);
        cwd.starts_with(&root) && !holes.iter().any(|h| h.starts_with(&root) && **h != root && cwd.starts_with(h))
    };
    let closed: Vec<&PathBuf> = plan.closed.iter().collect();
    let unwritable: Vec<&PathBuf> = plan.closed.iter().chain(&plan.not_writable).collect();
    let readable = plan.roots.iter().any(|r| reached(r, &closed)) || writable.iter().any(|w| reached(w, &unwritable));
    let holds_home = plan.home.as_ref().is_some_and(|h| h.starts_with(&cwd));
    !readable && !holds_home && cwd != Path::new("/") && cwd.is_dir()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "read_allow_tests.rs"]
mod tests;
