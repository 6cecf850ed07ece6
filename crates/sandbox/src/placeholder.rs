//! Stand-ins for protected paths that do not exist yet.
//!
//! A read-only bind needs something to cover: `.mcp.json`, `.envrc`,
//! `.git/commondir` or a home's `.profile` that is absent when a command
//! starts could otherwise be created by it, and would run or redirect
//! something the next time the user works there. So the sandbox creates an
//! inert stand-in on the host (an empty file, an empty directory, or for
//! `.git/commondir` a `.` that points git at its own directory), binds it
//! read-only for the command, and removes it when the last sandbox using it
//! is dropped — if it is still the stand-in (same inode, still empty).
//!
//! What the user sees meanwhile: the stand-ins exist on the host while a
//! command runs (an empty `.mcp.json` directory in `ls -a`: in a working
//! tree they are directories, which git never lists; see
//! [`StandIn::for_protected`](crate::protected::StandIn::for_protected)). A
//! quiver killed before it removed them leaves them behind; the next quiver
//! removes them (a journal per process in quiver's state directory).

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use crate::protected::StandIn;

impl StandIn {
    fn bytes(self) -> &'static [u8] {
        match self {
            StandIn::Dir | StandIn::Empty => b"",
            StandIn::CommonDirSelf => COMMONDIR_SELF,
        }
    }
}

/// One stand-in this process made: where, and which inode it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Made {
    kind: StandIn,
    dev: u64,
    ino: u64,
    users: usize,
}

/// Every stand-in of this process, by path: two sandboxes of one workspace
/// share one, and only the last to go removes it (removing a mount point in
/// the other's namespace would detach its bind there).
static MADE: Mutex<BTreeMap<PathBuf, Made>> = Mutex::new(BTreeMap::new());

/// The stand-ins one sandbox holds; dropped with it.
#[derive(Debug, Default)]
pub(crate) struct Placeholders {
    held: Vec<PathBuf>,
}

impl Placeholders {
    /// Makes (or shares) a stand-in at `path` when nothing is there and its
    /// parent directory exists; returns whether `path` is now held.
    #[cfg(test)]
    pub(crate) fn hold(&mut self, path: &Path, kind: StandIn) -> bool {
        self.hold_all(&[(path.to_path_buf(), kind)]) == 1
    }

    /// [`hold`](Self::hold) for many paths, journaled in one write; returns
    /// how many are held.
    pub(crate) fn hold_all(&mut self, wanted: &[(PathBuf, StandIn)]) -> usize {
        let mut made = MADE.lock();
        let mut created = Vec::new();
        let mut held = 0;
        for (path, kind) in wanted {
            if hold_one(&mut made, path, *kind, &mut created) {
                self.held.push(path.clone());
                held += 1;
            }
        }
        journal::record(&created);
        held
    }

    /// The paths held, in the order they were taken.
    pub(crate) fn paths(&self) -> &[PathBuf] {
        &self.held
    }
}

/// Shares the stand-in at `path` or makes one; `created` collects new ones.
fn hold_one(made: &mut BTreeMap<PathBuf, Made>, path: &Path, kind: StandIn, created: &mut Vec<PathBuf>) -> bool {
    if let Some(entry) = made.get_mut(path) {
        if still_ours(path, entry) {
            entry.users += 1;
            return true;
        }
        made.remove(path);
    }
    if path.symlink_metadata().is_ok() || !path.parent().is_some_and(Path::is_dir) {
        return false;
    }
    let Ok(meta) = create(path, kind) else { return false };
    created.push(path.to_path_buf());
    made.insert(path.to_path_buf(), Made { kind, dev: meta.dev(), ino: meta.ino(), users: 1 });
    true
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        let mut made = MADE.lock();
        let mut gone = Vec::new();
        for path in self.held.drain(..) {
            let Some(entry) = made.get_mut(&path) else { continue };
            entry.users -= 1;
            if entry.users == 0 {
                let entry = made.remove(&path).unwrap_or_else(|| unreachable!());
                if still_ours(&path, &entry) {
                    remove(&path, entry.kind);
                }
                gone.push(path);
            }
        }
        journal::forget(&gone);
    }
}

fn create(path: &Path, kind: StandIn) -> std::io::Result<std::fs::Metadata> {
    match kind {
        StandIn::Dir => {
            std::fs::create_dir(path)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555))?;
        }
        StandIn::Empty | StandIn::CommonDirSelf => {
            // Never through a link, never over something that appeared.
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o444)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)?;
            file.write_all(kind.bytes())?;
        }
    }
    path.symlink_metadata()
}

/// Still the stand-in: the same inode, of the same kind, with nothing added.
fn still_ours(path: &Path, made: &Made) -> bool {
    let Ok(meta) = path.symlink_metadata() else { return false };
    if meta.dev() != made.dev || meta.ino() != made.ino {
        return false;
    }
    match made.kind {
        StandIn::Dir => meta.is_dir() && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()),
        StandIn::Empty | StandIn::CommonDirSelf => {
            meta.is_file() && std::fs::read(path).is_ok_and(|b| b == made.kind.bytes())
        }
    }
}

fn remove(path: &Path, kind: StandIn) {
    let result = match kind {
        StandIn::Dir => std::fs::remove_dir(path),
        StandIn::Empty | StandIn::CommonDirSelf => std::fs::remove_file(path),
    };
    if let Err(e) = result {
        tracing::debug!(path = %path.display(), %e, "a sandbox stand-in was not removed");
    }
}

/// The journal of stand-ins per process, so that a quiver killed before it
/// removed its own leaves nothing for good: the next one sweeps them.
mod journal {
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    fn dir() -> Option<PathBuf> {
        crate::policy::quiver_state_dir().map(|d| d.join("sandbox-stand-ins"))
    }

    fn own_file() -> Option<PathBuf> {
        dir().map(|d| d.join(std::process::id().to_string()))
    }

    pub(super) fn record(paths: &[PathBuf]) {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(sweep);
        if paths.is_empty() {
            return;
        }
        let Some(file) = own_file() else { return };
        let _ = std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/")));
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&file) {
            let mut lines = Vec::new();
            for path in paths {
                lines.extend_from_slice(path.as_os_str().as_bytes());
                lines.push(b'\n');
            }
            let _ = f.write_all(&lines);
        }
    }

    pub(super) fn forget(paths: &[PathBuf]) {
        if paths.is_empty() {
            return;
        }
        let Some(file) = own_file() else { return };
        let Ok(text) = std::fs::read(&file) else { return };
        let kept: Vec<&[u8]> = text
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty() && !paths.iter().any(|p| *l == p.as_os_str().as_bytes()))
            .collect();
        let _ = if kept.is_empty() { std::fs::remove_file(&file) } else { std::fs::write(&file, kept.join(&b'\n')) };
    }

    /// Removes what dead processes left: a stand-in is recognised by its
    /// shape (an empty read-only file or directory, or a `.`-only
    /// `commondir`), never anything with content.
    fn sweep() {
        let Some(dir) = dir() else { return };
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            if let Ok(text) = std::fs::read(entry.path()) {
                for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                    let path = Path::new(std::ffi::OsStr::from_bytes(line));
                    left_behind(path);
                }
            }
            let _ = std::fs::remove_file(entry.path());
        }
    }

    fn left_behind(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = path.symlink_metadata() else { return };
        let read_only = meta.permissions().mode() & 0o222 == 0;
        if !read_only {
            return;
        }
        if meta.is_dir() {
            let _ = std::fs::remove_dir(path);
        } else if meta.is_file() && std::fs::read(path).is_ok_and(|b| b.is_empty() || b == super::COMMONDIR_SELF) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A `commondir` that points git at the directory it is in: an empty one
/// makes every git command fail ("failed to read .git/commondir").
const COMMONDIR_SELF: &[u8] = b".\n";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "placeholder_tests.rs"]
mod tests;
