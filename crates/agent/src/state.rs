//! quiver's state directory, apart from the rest of `exec::paths` so that
//! what only needs the directory (the providers-check cache) does not depend
//! on the config layers.

use std::path::PathBuf;

/// `$QUIVER_STATE_DIR`, else the platform's state directory (`~/.local/state/quiver`).
pub fn state_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_STATE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("quiver")),
    }
}
