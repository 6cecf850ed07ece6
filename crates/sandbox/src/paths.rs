//! Path comparison shared by the Landlock rules, the read allowlist, the
//! namespace sandbox and the guard: a leaf, so each of them can use it without
//! importing another.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// `path` with its longest existing prefix canonicalized, so that paths given
/// through a symlink (`/tmp` → `/private/tmp`, a workspace reached by a link)
/// compare equal to the ones found by walking.
pub fn normalize(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = path.to_path_buf();
    loop {
        if let Ok(canon) = std::fs::canonicalize(&cur) {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.file_name().map(OsStr::to_os_string), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cur = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
