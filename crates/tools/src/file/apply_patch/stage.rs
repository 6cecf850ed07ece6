//! Every change of a patch is staged in memory first; only a fully computed patch
//! touches the disk, one atomic rename per file, and a failure partway puts back
//! the files already written from the in-memory originals.

use std::collections::BTreeMap;
use std::fs::Permissions;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use quiver_engine::{ToolError, Workspace};

use crate::util::io_error;

/// Permissions for files the patch creates without a `new file mode` header.
pub const DEFAULT_MODE: u32 = 0o644;

#[derive(Debug, Clone)]
struct Snapshot {
    bytes: Vec<u8>,
    perms: Permissions,
}

#[derive(Debug)]
struct Entry {
    /// The file as it was on disk when first touched (`None`: it did not exist).
    original: Option<Snapshot>,
    /// What the patch leaves there (`None`: no file).
    current: Option<Vec<u8>>,
    /// Permissions to give `current` when it is written.
    perms: Option<Permissions>,
}

impl Entry {
    fn changed(&self) -> bool {
        match (&self.original, &self.current) {
            (None, None) => false,
            (Some(orig), Some(cur)) => {
                orig.bytes != *cur
                    || self.perms.as_ref().is_some_and(|p| p.mode() & 0o7777 != orig.perms.mode() & 0o7777)
            }
            _ => true,
        }
    }
}

/// An overlay of the workspace: reads see earlier staged changes of the same
/// patch (two sections on one file, a rename onto a path deleted before).
#[derive(Debug, Default)]
pub struct Stage {
    entries: BTreeMap<PathBuf, Entry>,
}

enum Done {
    Wrote(PathBuf),
    Removed(PathBuf),
    MadeDir(PathBuf),
}

impl Stage {
    /// The staged content of `path`, reading it from disk on first touch.
    pub fn content(&mut self, path: &Path, shown: &str) -> Result<Option<Vec<u8>>, ToolError> {
        if !self.entries.contains_key(path) {
            let original = read_original(path, shown)?;
            let current = original.as_ref().map(|s| s.bytes.clone());
            self.entries.insert(path.to_path_buf(), Entry { original, current, perms: None });
        }
        Ok(self.entries.get(path).and_then(|e| e.current.clone()))
    }

    /// The permissions `path` has (staged, else on disk), for carrying across a rename.
    pub fn perms(&self, path: &Path) -> Option<Permissions> {
        let entry = self.entries.get(path)?;
        entry.perms.clone().or_else(|| entry.original.as_ref().map(|s| s.perms.clone()))
    }

    /// Stages new content; `perms: None` keeps the file's current permissions.
    /// The entry must have been read with [`Stage::content`] first.
    pub fn put(&mut self, path: &Path, bytes: Vec<u8>, perms: Option<Permissions>) {
        if let Some(entry) = self.entries.get_mut(path) {
            entry.current = Some(bytes);
            if perms.is_some() {
                entry.perms = perms;
            }
        }
    }

    pub fn remove(&mut self, path: &Path) {
        if let Some(entry) = self.entries.get_mut(path) {
            entry.current = None;
            entry.perms = None;
        }
    }

    /// Writes every staged change, or none: on the first failure the changes
    /// already made are undone in reverse order.
    pub fn commit(self, ws: &Workspace) -> Result<(), ToolError> {
        let changed: Vec<(&PathBuf, &Entry)> = self.entries.iter().filter(|(_, e)| e.changed()).collect();
        let mut done = Vec::new();
        // Writes before removals: a rename's new file exists before its old one goes.
        let writes = changed.iter().filter(|(_, e)| e.current.is_some());
        let removals = changed.iter().filter(|(_, e)| e.current.is_none());
        let mut failure = None;
        for (path, entry) in writes.chain(removals) {
            let step = match &entry.current {
                Some(bytes) => {
                    let perms = entry
                        .perms
                        .clone()
                        .or_else(|| entry.original.as_ref().map(|s| s.perms.clone()))
                        .unwrap_or_else(|| Permissions::from_mode(DEFAULT_MODE));
                    make_parents(path, &mut done)
                        .and_then(|()| write_atomic(path, bytes, &perms))
                        .map(|()| done.push(Done::Wrote(path.to_path_buf())))
                        .map_err(|e| (path, "write", e))
                }
                None => std::fs::remove_file(path)
                    .map(|()| done.push(Done::Removed(path.to_path_buf())))
                    .map_err(|e| (path, "delete", e)),
            };
            if let Err(err) = step {
                failure = Some(err);
                break;
            }
        }
        let Some((path, action, err)) = failure else { return Ok(()) };
        let undone = done.iter().filter(|d| !matches!(d, Done::MadeDir(_))).count();
        let broken = self.rollback(done, ws);
        let shown = ws.display(path);
        let cause = match io_error(action, &shown, &err) {
            ToolError::Model(m) => m,
            other => other.to_string(),
        };
        if broken.is_empty() {
            Err(ToolError::model(format!(
                "{cause}. The patch was not applied: the {undone} file change(s) already made were rolled back, so every file is as it was."
            )))
        } else {
            Err(ToolError::model(format!(
                "{cause}. Rolling back the {undone} change(s) already made failed for: {}. Those files may hold patched content; check them before retrying.",
                broken.join("; ")
            )))
        }
    }

    /// Undoes `done` in reverse; returns what could not be undone.
    fn rollback(&self, done: Vec<Done>, ws: &Workspace) -> Vec<String> {
        let mut broken = Vec::new();
        for step in done.into_iter().rev() {
            let (path, result) = match step {
                Done::Wrote(path) => {
                    let result = match self.entries.get(&path).and_then(|e| e.original.as_ref()) {
                        Some(orig) => write_atomic(&path, &orig.bytes, &orig.perms),
                        None => std::fs::remove_file(&path),
                    };
                    (path, result)
                }
                Done::Removed(path) => {
                    let result = match self.entries.get(&path).and_then(|e| e.original.as_ref()) {
                        Some(orig) => write_atomic(&path, &orig.bytes, &orig.perms),
                        None => Ok(()),
                    };
                    (path, result)
                }
                Done::MadeDir(path) => {
                    let result = std::fs::remove_dir(&path);
                    (path, result)
                }
            };
            if let Err(e) = result {
                broken.push(format!("`{}` ({e})", ws.display(&path)));
            }
        }
        broken
    }
}

fn read_original(path: &Path, shown: &str) -> Result<Option<Snapshot>, ToolError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("inspect", shown, &e)),
    };
    if meta.is_dir() {
        return Err(ToolError::model(format!("`{shown}` is a directory; a patch can only change files")));
    }
    if !meta.is_file() {
        return Err(ToolError::model(format!("`{shown}` is not a regular file; apply_patch edits regular files only")));
    }
    let bytes = std::fs::read(path).map_err(|e| io_error("read", shown, &e))?;
    Ok(Some(Snapshot { bytes, perms: meta.permissions() }))
}

/// Creates the missing directories above `path`, top-down, recording each one so
/// a rollback can remove it again.
fn make_parents(path: &Path, done: &mut Vec<Done>) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if std::fs::symlink_metadata(d).is_ok() {
            break;
        }
        missing.push(d.to_path_buf());
        dir = d.parent();
    }
    for d in missing.into_iter().rev() {
        std::fs::create_dir(&d)?;
        done.push(Done::MadeDir(d));
    }
    Ok(())
}

/// Writes a sibling temporary file and renames it over `path`, so a reader (or a
/// crash) sees the old file or the new one, never half of each.
fn write_atomic(path: &Path, bytes: &[u8], perms: &Permissions) -> io::Result<()> {
    let dir = path.parent().ok_or_else(|| io::Error::other("path has no parent directory"))?;
    let mut tmp = tempfile::Builder::new().prefix(".apply_patch.").suffix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().set_permissions(perms.clone())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
