//! A process-count limit that also holds for root: a `pids` cgroup per sandbox.
//!
//! `RLIMIT_NPROC` is not enforced for the host's uid 0, even inside a user
//! namespace that maps it to itself (the kernel exempts the root user), so a
//! fork bomb run by a root quiver would take the machine. Where cgroup v1's
//! `pids` hierarchy is writable (root on a hybrid hierarchy, as on this
//! project's CI machines), the sandbox gets a cgroup of its own there with
//! `pids.max`, which its command joins before exec. On a pure v2 machine the
//! job's cgroup (see `contain`) is where a limit belongs; joining a second
//! v2 cgroup would take the command out of its job, so none is made there
//! yet. Elsewhere the rlimit is what there is (it does hold for other users).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const PREFIX: &str = "quiver-pids-";

/// One sandbox's pids cgroup; removed when dropped (the command's processes
/// are gone by then: their job is killed first).
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
    procs: Arc<OwnedFd>,
}

impl PidsCgroup {
    /// A new cgroup allowing `max` tasks, or why none can be made here.
    pub fn new(max: u64) -> io::Result<PidsCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = pids_base().ok_or_else(|| io::Error::other("no writable pids controller"))?;
        sweep_stale(&base);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{PREFIX}{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let made = (|| {
            OpenOptions::new().write(true).open(dir.join("pids.max"))?.write_all(max.to_string().as_bytes())?;
            OpenOptions::new().write(true).open(dir.join("cgroup.procs"))
        })();
        match made {
            Ok(procs) => Ok(PidsCgroup { dir, procs: Arc::new(OwnedFd::from(procs)) }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// The open `cgroup.procs` a child writes "0" to, to join.
    pub(crate) fn procs(&self) -> Arc<OwnedFd> {
        self.procs.clone()
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// This process's cgroup in cgroup v1's `pids` hierarchy.
fn pids_base() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER`
    let mount = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut right = right.split_whitespace();
        let (fstype, options) = (right.next()?, right.nth(1)?);
        (fstype == "cgroup" && options.split(',').any(|o| o == "pids"))
            .then(|| left.split_whitespace().nth(4).map(PathBuf::from))?
    })?;
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == "pids").then(|| path.to_string())
    })?;
    // A path outside this mount namespace's view shows as `/../…`.
    if own.contains("/..") {
        return None;
    }
    let base = mount.join(own.trim_start_matches('/'));
    base.join("cgroup.procs").exists().then_some(base)
}

/// Removes the empty cgroups of quiver processes that are gone.
fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}
