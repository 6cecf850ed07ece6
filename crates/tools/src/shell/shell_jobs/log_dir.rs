//! Where a session's command logs live: a private folder under the system's
//! temporary directory, named after the quiver process that owns it.
//!
//! Logs hold whatever a command printed (tokens, paths, test output), so the
//! folder is 0700 and each log 0600. A session removes its folder when it is
//! dropped; a quiver killed with SIGKILL cannot, so the next session sweeps the
//! folders whose owning process is gone.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const PREFIX: &str = "quiver-shell-";

/// Creates this process's log folder, after sweeping those of dead processes.
pub fn create() -> io::Result<tempfile::TempDir> {
    let tmp = std::env::temp_dir();
    sweep_stale(&tmp);
    tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&tmp)
}

/// Creates a log file readable by its owner only; never follows a planted link.
pub fn create_log(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
}

/// Removes `quiver-shell-<pid>-*` folders of ours whose process no longer exists.
/// Folders of other users, of live processes, and of older quivers (no pid in
/// the name) are left alone.
pub fn sweep_stale(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    // The owner of /proc/self is this process's effective uid.
    let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner_pid(&name.to_string_lossy()) else { continue };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // symlink_metadata: a link planted under this name is not followed.
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        if meta.is_dir() && meta.uid() == me {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The pid in `quiver-shell-<pid>-<random>`, if the name has that shape.
pub fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, random) = rest.split_once('-')?;
    if random.is_empty() {
        return None;
    }
    pid.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "log_dir_tests.rs"]
mod tests;
