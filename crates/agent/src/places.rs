//! quiver's own directories, from the environment or the platform's
//! defaults (a leaf: the config, the transcripts and the provider checks'
//! cache all sit on it).

use std::path::PathBuf;

/// `$QUIVER_CONFIG_DIR`, else the platform's config directory + `quiver`.
pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|d| d.join("quiver")),
    }
}

/// `$QUIVER_STATE_DIR`, else the platform's state directory + `quiver`.
pub fn state_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_STATE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("quiver")),
    }
}
