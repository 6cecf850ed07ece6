//! What a job leaves behind when quiver itself is killed.
//!
//! A job's leader dies with quiver (its parent-death signal), but what it
//! started in a session of its own (`setsid`, a double-forked daemon) does
//! not, and quiver's cleanup never runs after a `kill -9`. The next
//! [`Containment::new`](super::Containment::new) sweeps such leftovers, but
//! that may be hours away. So quiver starts a reaper: itself again (so no
//! second program ships), with [`REAPER_ARG`], holding the read end of a pipe
//! whose write end only quiver holds (close-on-exec: no child inherits it).
//! The read sees end-of-file when quiver is gone, however it died; the reaper
//! then waits until the kernel shows quiver dead and runs [`sweep_stale`].
//!
//! Not the alternative of a PID namespace per yolo job (its init's death
//! kills the tree): yolo runs unconfined by design, and a PID namespace
//! hides the host's processes (`ps`, killing a dev server started elsewhere,
//! `gdb -p`) and, through the user namespace it needs, costs root every
//! capability (`apt-get install` as root fails to chown).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::{procfs, sweep_stale};

/// The hidden first argument that starts a program as its own reaper.
pub const REAPER_ARG: &str = "__quiver-reaper";

/// Set by a program whose `main` runs [`reap_if_asked`] first: only such a
/// program can be started again as a reaper (a test binary cannot).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// The reaper and the write end of its pipe, held for the process's life:
/// dropping the write end would tell the reaper quiver died.
static REAPER: OnceLock<Mutex<Option<(Child, ChildStdin)>>> = OnceLock::new();

/// Lets [`Containment`](super::Containment)s of this process start a reaper.
/// Call from `main` after [`reap_if_asked`].
pub fn enable_reaper() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Starts this process's reaper unless it runs already (or is not enabled).
/// A reaper that cannot start leaves leftovers to the next sweep, as before.
pub(super) fn ensure() {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    REAPER.get_or_init(|| {
        let me = std::process::id();
        let started = Command::new("/proc/self/exe")
            .arg(REAPER_ARG)
            .arg(me.to_string())
            .arg(procfs::self_start().to_string())
            // Nothing of quiver's environment (its keys included) is needed.
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of quiver's process group: a Ctrl-C at the terminal, or a
            // kill of quiver's group, must not take the reaper with it.
            .process_group(0)
            .spawn();
        match started {
            Ok(mut child) => Mutex::new(child.stdin.take().map(|pipe| (child, pipe))),
            Err(e) => {
                tracing::debug!(%e, "no reaper: after a kill -9, leftovers live until the next quiver starts");
                Mutex::new(None)
            }
        }
    });
}

/// When this process was started as a reaper ([`REAPER_ARG`] first), reaps
/// and returns the exit code; else `None`. The first statement of `main`.
pub fn reap_if_asked() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != REAPER_ARG {
        return None;
    }
    let owner: Option<i32> = args.next().and_then(|a| a.to_str()?.parse().ok());
    let start: Option<u64> = args.next().and_then(|a| a.to_str()?.parse().ok());
    let (Some(owner), Some(start)) = (owner, start) else { return Some(2) };
    close_inherited();
    // Blocks until every write end is closed: only quiver holds one.
    let mut buf = [0u8; 64];
    loop {
        match std::io::stdin().lock().read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // Its files close before the kernel shows it dead (a zombie or gone),
    // and the sweep spares jobs of a quiver that still looks alive.
    let deadline = Instant::now() + Duration::from_secs(10);
    while procfs::alive(owner, start) {
        if Instant::now() > deadline {
            return Some(1);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    sweep_stale();
    Some(0)
}

/// Closes every descriptor but stdio that the reaper inherited from
/// whoever started quiver (std marks quiver's own close-on-exec): a pipe
/// held open by a reaper that outlives quiver would keep its reader waiting.
fn close_inherited() {
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|dir| dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    for fd in fds.into_iter().filter(|fd| *fd > 2) {
        // The directory's own descriptor is closed already: EBADF.
        let _ = nix::unistd::close(fd);
    }
}
