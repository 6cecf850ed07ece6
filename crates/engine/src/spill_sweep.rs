//! Retention for spill files: session folders left by earlier processes are
//! removed once nothing in them changed for [`SPILL_RETENTION`].
//!
//! Spilled outputs are evidence for the session that made them (and for a replay
//! soon after); without a sweep the temp dir grows with every long shell output
//! ever seen. The sweep runs once per spill root per process, on the first spill,
//! off the async runtime. It removes only folders that look like quiver's own:
//! every entry a file named `out_<n>.txt` (or `out_<n>-<k>.txt`, or a binary `blob_<n>.<ext>`), so pointing
//! `QUIVER_SPILL_DIR` at a folder with anything else in it deletes nothing else.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;

/// How long a session folder is kept after its last write.
pub const SPILL_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// Sweeps `root` in the background unless this process already did.
pub(super) fn sweep_once(root: &Path, keep: &Path) {
    {
        let mut swept = SWEPT.lock();
        if !swept.get_or_insert_with(HashSet::new).insert(root.to_path_buf()) {
            return;
        }
    }
    let (root, keep) = (root.to_path_buf(), keep.to_path_buf());
    let sweep = move || {
        let removed = sweep(&root, &keep, SystemTime::now(), SPILL_RETENTION);
        if removed > 0 {
            tracing::debug!(root = %root.display(), removed, "swept old spill folders");
        }
    };
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => drop(handle.spawn_blocking(sweep)),
        Err(_) => sweep(),
    }
}

/// Removes session folders under `root` (other than `keep`) whose newest entry
/// is older than `retention` at `now`. Returns how many were removed.
pub fn sweep(root: &Path, keep: &Path, now: SystemTime, retention: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let dir = entry.path();
        if dir == keep || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let expired = newest_spill_write(&dir).is_some_and(|t| now.duration_since(t).is_ok_and(|age| age > retention));
        if expired && std::fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Removes `dir` when it holds nothing but spill files.
pub(super) fn remove_spill_folder(dir: &Path) -> bool {
    newest_spill_write(dir).is_some() && std::fs::remove_dir_all(dir).is_ok()
}

/// The newest modification time in a folder of spill files, or None when the
/// folder holds anything that is not a spill file (then it is not ours to remove).
fn newest_spill_write(dir: &Path) -> Option<SystemTime> {
    let mut newest = std::fs::metadata(dir).and_then(|m| m.modified()).ok()?;
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let meta = entry.metadata().ok()?;
        let name = entry.file_name();
        if !meta.is_file() || !is_spill_file_name(name.to_str()?) {
            return None;
        }
        newest = newest.max(meta.modified().ok()?);
    }
    Some(newest)
}

/// `out_<n>.txt` or `out_<n>-<k>.txt`, or a binary spill `blob_<n>.<ext>`
/// (`blob_<n>-<k>.<ext>`) with a short alphanumeric extension.
fn is_spill_file_name(name: &str) -> bool {
    let stem = match name.strip_prefix("out_").and_then(|s| s.strip_suffix(".txt")) {
        Some(stem) => stem,
        None => {
            let Some((stem, ext)) = name.strip_prefix("blob_").and_then(|s| s.rsplit_once('.')) else { return false };
            if ext.is_empty() || ext.len() > 5 || !ext.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return false;
            }
            stem
        }
    };
    let (n, k) = stem.split_once('-').unwrap_or((stem, "0"));
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn age(path: &Path, days: u64) {
        let when = SystemTime::now() - Duration::from_secs(days * 24 * 3600);
        std::fs::File::open(path).unwrap().set_modified(when).unwrap();
    }

    #[test]
    fn removes_only_old_folders_of_spill_files() {
        let root = tempfile::tempdir().unwrap();
        let make = |name: &str, files: &[&str], days: u64| {
            let dir = root.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            for f in files {
                std::fs::write(dir.join(f), "x").unwrap();
                age(&dir.join(f), days);
            }
            age(&dir, days);
            dir
        };
        let old = make("old-session", &["out_1.txt", "out_2-1.txt"], 30);
        let recent = make("recent-session", &["out_1.txt"], 1);
        let current = make("current", &["out_1.txt"], 30);
        let foreign = make("photos", &["out_1.txt", "holiday.jpg"], 30);
        let empty_old = make("empty", &[], 30);
        // an old folder with one fresh file is in use
        let touched = make("touched", &["out_1.txt", "out_2.txt"], 30);
        std::fs::write(touched.join("out_2.txt"), "new").unwrap();

        let removed = sweep(root.path(), &current, SystemTime::now(), SPILL_RETENTION);
        assert_eq!(removed, 2);
        assert!(!old.exists() && !empty_old.exists());
        assert!(recent.exists() && current.exists() && foreign.exists() && touched.exists());
        assert!(foreign.join("holiday.jpg").exists());
        // a missing root is no error
        assert_eq!(sweep(&root.path().join("nope"), &current, SystemTime::now(), SPILL_RETENTION), 0);
    }

    #[test]
    fn spill_file_names() {
        for ok in ["out_1.txt", "out_12-3.txt"] {
            assert!(is_spill_file_name(ok), "{ok}");
        }
        for bad in ["out_.txt", "out_1", "out_a.txt", "out_1-.txt", "var_1.txt", "out_1.txt.bak"] {
            assert!(!is_spill_file_name(bad), "{bad}");
        }
    }
}
