//! cgroup v2: one cgroup per job, killed whole with `cgroup.kill`.
//!
//! A process cannot leave its cgroup without write access to the cgroup
//! hierarchy (which the sandbox never grants), so `setsid`, double forks and
//! reparenting to init change nothing: every process of the job stays in the
//! job's cgroup until it exits.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::procfs;

/// The cgroup v2 directory this process is in, if the v2 hierarchy is mounted.
pub(crate) fn own_cgroup() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER`
    let mount = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        (right.split_whitespace().next()? == "cgroup2").then(|| left.split_whitespace().nth(4).map(PathBuf::from))?
    })?;
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    // A path outside our mount namespace's view shows as `/../...`.
    if own.contains("/..") {
        return None;
    }
    Some(mount.join(own.trim_start_matches('/')))
}

/// Creates `name` under this process's cgroup: the test for "delegated and
/// writable". Fails where the hierarchy is not ours to change.
pub(crate) fn create_parent(name: &str) -> io::Result<PathBuf> {
    let base = own_cgroup().ok_or_else(|| io::Error::other("no cgroup v2 hierarchy is mounted"))?;
    let dir = base.join(name);
    std::fs::create_dir(&dir)?;
    // Moving a process needs write access to `cgroup.procs` of the target
    // (and of the common ancestor, which is ours): check it now, not per job.
    if let Err(e) = OpenOptions::new().write(true).open(dir.join("cgroup.procs")) {
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// A job's cgroup and its open `cgroup.procs` (for the child to join).
pub(crate) fn create_job(parent: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let dir = parent.join(name);
    std::fs::create_dir(&dir)?;
    match OpenOptions::new().write(true).open(dir.join("cgroup.procs")) {
        Ok(procs) => Ok((dir, procs)),
        Err(e) => {
            let _ = std::fs::remove_dir(&dir);
            Err(e)
        }
    }
}

/// The pids in `dir` (not in its children).
pub(crate) fn pids(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Kills every process in `dir` and its descendants, waits (bounded) until
/// they are gone, then removes the directory. `Ok(n)`: processes it held.
pub(crate) fn kill(dir: &Path) -> io::Result<usize> {
    if !dir.exists() {
        return Ok(0);
    }
    let before = pids(dir).len();
    let kill_file = dir.join("cgroup.kill");
    if kill_file.exists() {
        // Linux 5.14+: the kernel kills the whole subtree atomically, new forks included.
        OpenOptions::new().write(true).open(&kill_file)?.write_all(b"1")?;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = pids(dir);
        if left.is_empty() {
            break;
        }
        // Without cgroup.kill (or racing it): signal what is left until empty;
        // a process killed before it forks cannot start new members.
        for pid in left {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        if Instant::now() > deadline {
            return Err(io::Error::other(format!("processes left in {} after SIGKILL", dir.display())));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    remove(dir);
    Ok(before)
}

/// Removes an empty cgroup, retrying briefly: the kernel may still be
/// releasing the last exited task.
pub(crate) fn remove(dir: &Path) {
    for _ in 0..100 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    tracing::debug!(dir = %dir.display(), "could not remove a job cgroup");
}

/// Kills the jobs of quiver processes that died without cleaning up: parent
/// cgroups named `quiver.PID.START.N` whose process is gone.
pub(crate) fn sweep_stale() -> usize {
    let Some(base) = own_cgroup() else { return 0 };
    let Ok(entries) = std::fs::read_dir(&base) else { return 0 };
    let mut killed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, start)) = parse_parent_name(&name) else { continue };
        if procfs::alive(pid, start) {
            continue;
        }
        let parent = entry.path();
        if let Ok(jobs) = std::fs::read_dir(&parent) {
            for job in jobs.flatten() {
                if job.path().is_dir() {
                    killed += kill(&job.path()).unwrap_or(0);
                }
            }
        }
        remove(&parent);
    }
    killed
}

/// `quiver.PID.START.N` → (PID, START).
pub(crate) fn parse_parent_name(name: &str) -> Option<(i32, u64)> {
    let mut parts = name.strip_prefix("quiver.")?.split('.');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    Some((pid, start))
}
