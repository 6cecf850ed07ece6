//! Finding and killing everything a job started.
//!
//! A process group is not enough: `setsid` leaves it, and a double fork
//! reparents the daemon to init, where no parent link leads back to the job.
//! Two mechanisms, chosen once per [`Containment`]:
//!
//! - [`Mechanism::Cgroup`]: where this process's cgroup v2 is writable
//!   (root, or a delegated systemd scope), each job gets a child cgroup that
//!   the child joins before exec; `cgroup.kill` ends every member at once.
//! - [`Mechanism::Subreaper`]: otherwise quiver becomes a child subreaper
//!   (orphans of its jobs are reparented to quiver, not to init), each job's
//!   leader is one too, and each job carries a marker variable
//!   (`QUIVER_JOB`). Killing walks `/proc`: descendants of the leader, and
//!   quiver's descendants that carry the job's marker, until none is left.
//!   Limit: a process that both leaves the leader's tree (after the leader
//!   exited) and clears its environment (`env -i`) is not attributed.
//!
//! Quiver's own death: its cleanup cannot run. The leader dies with quiver
//! (the callers' parent-death signal); the rest of its jobs (their cgroups,
//! or processes whose marker names a dead quiver) are swept by quiver's
//! reaper ([`reaper`], in a program that enabled it) as soon as quiver is
//! gone, and in any case by the next [`Containment::new`].

mod cgroup;
pub(crate) mod pids;
mod procfs;
mod reaper;

pub use reaper::{REAPER_ARG, enable_reaper, reap_if_asked};

use std::collections::HashSet;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use crate::hook::{PreExecTarget, Step};

/// The variable naming a job in the subreaper fallback.
pub const JOB_MARKER: &str = "QUIVER_JOB";

/// How jobs are contained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// One cgroup v2 per job, under this directory.
    Cgroup { parent: PathBuf },
    /// quiver is a child subreaper; jobs are found through `/proc`.
    Subreaper,
}

/// Which mechanism to use; `Auto` is what [`Containment::new`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    Auto,
    Subreaper,
}

/// The jobs of one session (or of the whole process): each started through
/// [`spawn_hook`](Self::spawn_hook), all killed by [`kill_all`](Self::kill_all)
/// and on drop.
#[derive(Debug)]
pub struct Containment {
    mechanism: Mechanism,
    tag: String,
    jobs: Mutex<Vec<Job>>,
    next: AtomicU64,
}

/// One job: a command and everything it starts.
#[derive(Debug, Clone)]
pub struct Job {
    inner: Arc<JobInner>,
}

#[derive(Debug)]
struct JobInner {
    marker: String,
    cgroup: Option<(PathBuf, Arc<OwnedFd>)>,
    leader: Mutex<Option<i32>>,
}

static CONTAINMENTS: AtomicU64 = AtomicU64::new(0);

impl Default for Containment {
    fn default() -> Self {
        Self::new()
    }
}

impl Containment {
    /// A cgroup per job where possible, else the subreaper fallback. Also
    /// sweeps the jobs of quiver processes that died (see the module docs).
    pub fn new() -> Self {
        Self::with(Prefer::Auto)
    }

    pub fn with(prefer: Prefer) -> Self {
        sweep_stale();
        reaper::ensure();
        let n = CONTAINMENTS.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{}.{}.{n}", std::process::id(), procfs::self_start());
        let cgroup = match prefer {
            Prefer::Auto => cgroup::create_parent(&format!("quiver.{tag}"))
                .inspect_err(|e| tracing::debug!(%e, "no writable cgroup v2; using a child subreaper"))
                .ok(),
            Prefer::Subreaper => None,
        };
        let mechanism = match cgroup {
            Some(parent) => Mechanism::Cgroup { parent },
            None => {
                if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
                    tracing::warn!(%e, "cannot become a child subreaper: orphaned job processes may escape");
                }
                Mechanism::Subreaper
            }
        };
        Containment { mechanism, tag, jobs: Mutex::new(Vec::new()), next: AtomicU64::new(0) }
    }

    pub fn mechanism(&self) -> &Mechanism {
        &self.mechanism
    }

    /// A new job, registered on `cmd` (call before spawning it, after the
    /// environment policy). Call [`Job::started`] with the pid once spawned.
    pub fn spawn_hook(&self, cmd: &mut impl PreExecTarget) -> io::Result<Job> {
        let job = self.new_job()?;
        job.apply_to(cmd);
        Ok(job)
    }

    /// A new job not yet registered on any command.
    pub fn new_job(&self) -> io::Result<Job> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let cgroup = match &self.mechanism {
            Mechanism::Cgroup { parent } => {
                let (dir, procs) = cgroup::create_job(parent, &format!("job-{n}"))?;
                Some((dir, Arc::new(OwnedFd::from(procs))))
            }
            Mechanism::Subreaper => None,
        };
        let job =
            Job { inner: Arc::new(JobInner { marker: format!("{}.{n}", self.tag), cgroup, leader: Mutex::new(None) }) };
        self.jobs.lock().push(job.clone());
        Ok(job)
    }

    /// Kills every process of every job. `Ok(n)`: processes found.
    pub fn kill_all(&self) -> io::Result<usize> {
        let jobs: Vec<Job> = std::mem::take(&mut *self.jobs.lock());
        let mut total = 0;
        let mut first_err = None;
        for job in jobs {
            match job.kill() {
                Ok(n) => total += n,
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        first_err.map_or(Ok(total), Err)
    }

    /// Forgets jobs that have no process left (their cgroups are removed).
    pub fn reap_finished(&self) {
        let mut jobs = self.jobs.lock();
        jobs.retain(|job| {
            // A job between creation and spawn is empty too, and removing its
            // cgroup then makes the child's join fail (ENODEV): only a job whose
            // leader started, or that nobody holds any more (its spawn failed),
            // is finished when empty.
            let started = job.inner.leader.lock().is_some();
            let abandoned = Arc::strong_count(&job.inner) == 1;
            let done = (started || abandoned) && job.pids().is_empty();
            if done && let Some((dir, _)) = &job.inner.cgroup {
                cgroup::remove(dir);
            }
            !done
        });
    }
}

impl Drop for Containment {
    fn drop(&mut self) {
        if let Err(e) = self.kill_all() {
            tracing::warn!(%e, "killing the remaining jobs failed");
        }
        if let Mechanism::Cgroup { parent } = &self.mechanism {
            cgroup::remove(parent);
        }
    }
}

impl Job {
    /// Registers the job on `cmd`: joins the job's cgroup before exec, or (in
    /// the fallback) makes the leader a subreaper and sets the marker.
    pub fn apply_to(&self, cmd: &mut impl PreExecTarget) {
        let cmd = cmd.std_command();
        match &self.inner.cgroup {
            Some((_, procs)) => crate::hook::register(cmd, Step::JoinCgroup(procs.clone())),
            None => {
                cmd.env(JOB_MARKER, &self.inner.marker);
                crate::hook::register(cmd, Step::Subreaper);
            }
        }
    }

    /// Records the leader's pid (from `Child::id()`).
    pub fn started(&self, pid: u32) {
        let pid = i32::try_from(pid).ok();
        *self.inner.leader.lock() = pid;
        if let Some(pid) = pid {
            let mut leaders = LEADERS.lock();
            // Only recent leaders matter (a pid is reused after its owner reaped it).
            if leaders.len() > 4096 {
                leaders.drain(..2048);
            }
            leaders.push(pid);
        }
    }

    /// The job's cgroup, in the cgroup mechanism.
    pub fn cgroup(&self) -> Option<&Path> {
        self.inner.cgroup.as_ref().map(|(dir, _)| dir.as_path())
    }

    /// The live processes of the job.
    pub fn pids(&self) -> Vec<i32> {
        match &self.inner.cgroup {
            Some((dir, _)) => cgroup::pids(dir),
            None => self.members(&procfs::table()),
        }
    }

    /// Kills every process of the job and waits (bounded) until they are gone.
    /// `Ok(n)`: processes it found.
    pub fn kill(&self) -> io::Result<usize> {
        match &self.inner.cgroup {
            Some((dir, _)) => cgroup::kill(dir),
            None => self.kill_by_walk(),
        }
    }

    fn leader(&self) -> Option<i32> {
        *self.inner.leader.lock()
    }

    /// Live members in `table`: descendants of the leader, and descendants of
    /// quiver carrying this job's marker (orphans reparented to quiver).
    fn members(&self, table: &std::collections::HashMap<i32, procfs::Proc>) -> Vec<i32> {
        self.walk(table).0
    }

    /// [`Self::members`], and how many of quiver's other live descendants
    /// had an environment that could not be read (one may be a member
    /// caught mid-`execve`).
    fn walk(&self, table: &std::collections::HashMap<i32, procfs::Proc>) -> (Vec<i32>, usize) {
        let me = std::process::id() as i32;
        let leader = self.leader();
        let mut unsure = 0;
        let mut members = Vec::new();
        for (&pid, p) in table {
            if pid == me || p.zombie {
                continue;
            }
            if leader.is_some_and(|l| procfs::descends_from(table, pid, l)) {
                members.push(pid);
            } else if procfs::descends_from(table, pid, me) {
                match procfs::environ_lookup(pid, JOB_MARKER) {
                    procfs::Environ::Set(marker) if marker == self.inner.marker => members.push(pid),
                    procfs::Environ::Unreadable => unsure += 1,
                    _ => {}
                }
            }
        }
        (members, unsure)
    }

    fn kill_by_walk(&self) -> io::Result<usize> {
        let mut seen = HashSet::new();
        let mut unsure_rounds = 0;
        // Each round kills what it finds; a process killed cannot fork again,
        // so only children forked during the round remain for the next one.
        for _ in 0..200 {
            let table = procfs::table();
            let (members, unsure) = self.walk(&table);
            // An orphan caught mid-exec shows no environment, so no marker:
            // look again a few times before calling the job empty (bounded,
            // as a process that cleared its environment never shows one).
            if members.is_empty() && unsure > 0 && unsure_rounds < UNSURE_ROUNDS {
                unsure_rounds += 1;
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            if members.is_empty() {
                reap(&seen);
                return Ok(seen.len());
            }
            for pid in members {
                seen.insert(pid);
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            reap(&seen);
            std::thread::sleep(Duration::from_millis(2));
        }
        Err(io::Error::other("job processes kept appearing after 200 rounds of SIGKILL"))
    }
}

/// How many more rounds (2 ms apart) a kill looks when only processes with
/// an unreadable environment are left: an `execve` takes well under that.
const UNSURE_ROUNDS: usize = 25;

/// Reaps those of `pids` that became zombie children of quiver (orphans
/// reparented to the subreaper). The leader is left to its `Child` owner.
fn reap(pids: &HashSet<i32>) {
    let me = std::process::id() as i32;
    for &pid in pids {
        if procfs::stat(pid).is_some_and(|p| p.zombie && p.ppid == me) && !is_spawned_child(pid) {
            let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Whether `pid` is a leader this program spawned: its exit status belongs to
/// its `Child` (tokio or std wait for it), so reaping it here would break them.
fn is_spawned_child(pid: i32) -> bool {
    LEADERS.lock().contains(&pid)
}

/// Leaders spawned by this process (all containments).
static LEADERS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Sweeps the jobs of dead quiver processes: their cgroups, and in the
/// fallback the processes whose marker names them.
pub fn sweep_stale() -> usize {
    let mut killed = cgroup::sweep_stale();
    let table = procfs::table();
    for pid in table.keys() {
        let Some(marker) = procfs::environ_var(*pid, JOB_MARKER) else { continue };
        let mut parts = marker.split('.');
        let (Some(Ok(owner)), Some(Ok(start))) =
            (parts.next().map(str::parse::<i32>), parts.next().map(str::parse::<u64>))
        else {
            continue;
        };
        if !procfs::alive(owner, start) && kill(Pid::from_raw(*pid), Signal::SIGKILL).is_ok() {
            killed += 1;
        }
    }
    killed
}

#[cfg(test)]
#[path = "contain_tests.rs"]
mod tests;
