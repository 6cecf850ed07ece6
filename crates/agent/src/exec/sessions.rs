//! The sessions recorded in a workspace, for `--continue`, `quiver resume`'s
//! picker and `quiver relay`.

use std::path::{Path, PathBuf};

/// The recorded top-level sessions that ran in `root`, newest first
/// (sub-agents' sessions are left out: a person resumes their own).
pub fn workspace_sessions(root: &Path) -> Vec<PathBuf> {
    let Some(dir) = super::paths::sessions_dir() else { return Vec::new() };
    let children: Vec<String> = crate::subagent::store::store_path()
        .and_then(|p| crate::subagent::store::load(&p).ok())
        .map(|records| records.into_iter().map(|r| r.session_id).collect())
        .unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(id) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if children.iter().any(|c| c == id) || !started_in(&path, root) {
            continue;
        }
        if let Ok(modified) = entry.metadata().and_then(|m| m.modified()) {
            found.push((modified, path));
        }
    }
    // Newest first; equal times by path, so the order is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    found.into_iter().map(|(_, p)| p).collect()
}

/// Whether the transcript's first line says it ran in `root`.
fn started_in(path: &Path, root: &Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    let Ok(start) = serde_json::from_str::<serde_json::Value>(&first) else { return false };
    start["workspace"].as_str().is_some_and(|w| Path::new(w) == root)
}
