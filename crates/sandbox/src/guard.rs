//! The Landlock fallback's guard over the protected paths.
//!
//! Landlock grants rights on whole hierarchies and nothing beneath a grant
//! can take one back, so a workspace the command may create new top-level
//! entries in (`mkdir build`, `cargo new`, `git commit`'s `index.lock`) is a
//! workspace whose `.git/hooks` it can write too. Splitting the workspace
//! around the protected paths, as the fallback once did, refused every new
//! entry in the workspace root and in `.git/`: no ordinary work ran.
//!
//! So where user namespaces are refused the command gets the whole
//! workspace, and this guard takes the protected paths' state before the
//! command (contents of files, listings of directories, absences) and puts
//! it back when the command has ended: a planted hook, a rewritten
//! `.git/config`, a new `.mcp.json` are undone and named to the model. What
//! remains open is the window while the command runs (a git command the user
//! runs *meanwhile* in that workspace sees the change), which the fallback's
//! gaps say.
//!
//! Changes made on purpose meanwhile, by an approved unsandboxed command,
//! must not be undone: quiver calls [`refresh_all`] after one, and every live
//! guard takes the new state as its own.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// A protected tree bigger than this is recorded as such and not restored
/// (a `.git/modules` with whole repositories in it is guarded by its parts).
const MAX_ENTRIES: usize = 2000;
const MAX_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Absent,
    File {
        bytes: Vec<u8>,
        mode: u32,
    },
    Dir {
        mode: u32,
    },
    Link(PathBuf),
    /// Something else (a socket, a device) or too big to keep: left alone.
    Other,
}

/// The recorded state of every protected path beneath the roots.
#[derive(Debug, Default)]
struct Snapshot {
    states: BTreeMap<PathBuf, State>,
    /// The protected paths themselves (the tops of what was walked).
    tops: Vec<PathBuf>,
}

#[derive(Debug)]
pub(crate) struct Guard {
    roots: Vec<PathBuf>,
    home: Option<PathBuf>,
    snapshot: Mutex<Snapshot>,
}

/// Every live guard, so an approved command's changes can be taken as the
/// new state of each ([`refresh_all`]).
static LIVE: Mutex<Vec<Weak<Guard>>> = Mutex::new(Vec::new());

/// Takes the current state as the one to keep, in every live guard: call
/// after a command that was allowed to change protected paths (an approved
/// unsandboxed one) has ended.
pub fn refresh_all() {
    let live: Vec<Arc<Guard>> = {
        let mut live = LIVE.lock();
        live.retain(|w| w.strong_count() > 0);
        live.iter().filter_map(Weak::upgrade).collect()
    };
    for guard in live {
        guard.refresh();
    }
}

impl Guard {
    pub(crate) fn new(roots: &[PathBuf], home: Option<PathBuf>) -> Arc<Guard> {
        let guard = Arc::new(Guard { roots: roots.to_vec(), home, snapshot: Mutex::new(Snapshot::default()) });
        guard.refresh();
        LIVE.lock().push(Arc::downgrade(&guard));
        guard
    }

    fn refresh(&self) {
        let mut snap = Snapshot::default();
        for root in &self.roots {
            let root = crate::paths::normalize(root);
            let mut tops = crate::protected::existing_protected(&root);
            tops.extend(crate::protected::absent_protected(&root, self.home.as_deref()).into_iter().map(|(p, _)| p));
            for top in tops {
                let mut budget = MAX_ENTRIES;
                let mut bytes = 0u64;
                record(&top, &mut snap.states, &mut budget, &mut bytes);
                snap.tops.push(top);
            }
        }
        *self.snapshot.lock() = snap;
    }

    /// Puts every protected path back as it was; returns what was undone,
    /// one sentence each, for the model.
    pub(crate) fn restore(&self) -> Vec<String> {
        let snap = self.snapshot.lock();
        let mut undone = Vec::new();
        // What appeared beneath a recorded directory, deepest first.
        let mut extra: Vec<PathBuf> = Vec::new();
        for top in &snap.tops {
            if matches!(snap.states.get(top), Some(State::Dir { .. })) {
                list_new(top, &snap.states, &mut extra);
            }
        }
        extra.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for path in extra {
            if self.reachable(&path) && remove_any(&path) {
                undone.push(format!("removed `{}`, which the command created in a protected path", path.display()));
            }
        }
        // Recorded paths, parents before children.
        for (path, want) in snap.states.iter() {
            if *want == State::Other {
                continue;
            }
            let now = current(path);
            if now == *want {
                continue;
            }
            if self.reachable(path) && put_back(path, want, &now) {
                let what = match want {
                    State::Absent => "removed",
                    _ => "restored",
                };
                undone.push(format!("{what} `{}`: a protected path the command changed", path.display()));
            } else {
                tracing::warn!(path = %path.display(), "a protected path the command changed could not be put back");
                undone.push(format!("could NOT put back `{}`, a protected path the command changed", path.display()));
            }
        }
        undone
    }
}

impl Guard {
    /// Whether every directory between a root and `path` is still a real
    /// directory: a `.git` the command swapped for a link to elsewhere must
    /// not make quiver write there.
    fn reachable(&self, path: &Path) -> bool {
        let Some(root) = self.roots.iter().map(|r| crate::paths::normalize(r)).find(|r| path.starts_with(r)) else {
            return false;
        };
        path.ancestors()
            .skip(1)
            .take_while(|a| a.starts_with(&root) && *a != root)
            .all(|a| a.symlink_metadata().is_ok_and(|m| m.is_dir()))
    }
}

fn record(path: &Path, states: &mut BTreeMap<PathBuf, State>, budget: &mut usize, bytes: &mut u64) {
    if *budget == 0 {
        states.insert(path.to_path_buf(), State::Other);
        return;
    }
    *budget -= 1;
    let state = current_bounded(path, bytes);
    let is_dir = matches!(state, State::Dir { .. });
    states.insert(path.to_path_buf(), state);
    if is_dir && let Ok(entries) = std::fs::read_dir(path) {
        let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for child in names {
            record(&child, states, budget, bytes);
        }
    }
}

fn current(path: &Path) -> State {
    let mut unlimited = 0;
    current_bounded(path, &mut unlimited)
}

fn current_bounded(path: &Path, bytes: &mut u64) -> State {
    let Ok(meta) = path.symlink_metadata() else { return State::Absent };
    let mode = meta.permissions().mode() & 0o7777;
    if meta.file_type().is_symlink() {
        return std::fs::read_link(path).map(State::Link).unwrap_or(State::Other);
    }
    if meta.is_dir() {
        return State::Dir { mode };
    }
    if meta.is_file() && *bytes + meta.size() <= MAX_BYTES {
        *bytes += meta.size();
        return std::fs::read(path).map(|b| State::File { bytes: b, mode }).unwrap_or(State::Other);
    }
    State::Other
}

/// Entries beneath `dir` (recursively) that the snapshot does not know.
fn list_new(dir: &Path, states: &BTreeMap<PathBuf, State>, out: &mut Vec<PathBuf>) {
    let Ok(meta) = dir.symlink_metadata() else { return };
    if !meta.is_dir() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match states.get(&path) {
            None => out.push(path),
            Some(State::Other) => {}
            Some(_) => list_new(&path, states, out),
        }
    }
}

/// Removes whatever is at `path` without following a link.
fn remove_any(path: &Path) -> bool {
    match path.symlink_metadata() {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).is_ok(),
        Ok(_) => std::fs::remove_file(path).is_ok(),
        Err(_) => false,
    }
}

fn put_back(path: &Path, want: &State, now: &State) -> bool {
    // Whatever is there now goes first, unless it is the directory wanted
    // (then only its mode differs; its entries are handled one by one).
    let keep_dir = matches!((want, now), (State::Dir { .. }, State::Dir { .. }));
    if !keep_dir && *now != State::Absent && !remove_any(path) {
        return false;
    }
    match want {
        State::Absent | State::Other => true,
        State::Dir { mode } => {
            (keep_dir || std::fs::create_dir(path).is_ok())
                && std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)).is_ok()
        }
        State::File { bytes, mode } => {
            std::fs::write(path, bytes).is_ok()
                && std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)).is_ok()
        }
        State::Link(target) => std::os::unix::fs::symlink(target, path).is_ok(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "guard_tests.rs"]
mod tests;
