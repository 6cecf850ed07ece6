//! Where `quiver exec` reads its settings and writes its sessions.
//!
//! Settings: the user's `config.toml` (`$QUIVER_CONFIG_DIR`, else
//! `~/.config/quiver`) is trusted; the workspace's `quiver.toml` is a
//! project layer and may not redirect keys (see [`crate::config`]).
//! Sessions: `$QUIVER_STATE_DIR/sessions/<id>.jsonl`, else the platform's
//! state directory (`~/.local/state/quiver/sessions`).

use std::path::{Path, PathBuf};

use crate::config::{AgentConfig, CliOverrides, ConfigError, ConfigLayer, Trust};

pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|d| d.join("quiver")),
    }
}

pub use crate::state::state_dir;

pub fn sessions_dir() -> Option<PathBuf> {
    state_dir().map(|d| d.join("sessions"))
}

/// A session's transcript path. Ids are quiver's own (`s<hex>-<pid>-<n>`);
/// anything with a path separator is refused so an id cannot point elsewhere.
pub fn session_path(id: &str) -> Result<PathBuf, ConfigError> {
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return Err(ConfigError::Provider(format!("`{id}` is not a session id")));
    }
    let dir = sessions_dir().ok_or_else(|| ConfigError::Provider("no state directory: set QUIVER_STATE_DIR".into()))?;
    Ok(dir.join(format!("{id}.jsonl")))
}

/// The `[model] context_window` override, if a layer sets one (the agent
/// config does not model it: it matters only to exec's compaction).
pub fn context_window_override(texts: &[(Trust, String, String)]) -> Option<u64> {
    texts.iter().rev().find_map(|(_, _, text)| {
        let value: toml::Value = toml::from_str(text).ok()?;
        value.get("model")?.get("context_window")?.as_integer().and_then(|n| u64::try_from(n).ok())
    })
}

/// The layer files that exist, in order (user, then project), as (trust, path, text).
pub fn read_layers(workspace: &Path) -> Result<Vec<(Trust, String, String)>, ConfigError> {
    let mut layers = Vec::new();
    let candidates = [
        (Trust::User, user_config_dir().map(|d| d.join("config.toml"))),
        (Trust::Project, Some(workspace.join("quiver.toml"))),
    ];
    for (trust, path) in candidates {
        let Some(path) = path else { continue };
        match std::fs::read_to_string(&path) {
            Ok(text) => layers.push((trust, path.display().to_string(), text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ConfigError::Parse { path: path.display().to_string(), message: e.to_string() });
            }
        }
    }
    Ok(layers)
}

/// Keeps `[model]` and `[providers]` only: the same files hold other
/// subsystems' tables (MCP servers), and `context_window` is exec's own key.
fn strip_foreign(text: &str) -> String {
    let Ok(value) = toml::from_str::<toml::Table>(text) else { return text.to_string() };
    let mut value: toml::Table = value.into_iter().filter(|(k, _)| k == "model" || k == "providers").collect();
    if let Some(toml::Value::Table(model)) = value.get_mut("model") {
        model.remove("context_window");
    }
    toml::to_string(&value).unwrap_or_default()
}

/// The agent config from the layers and the flags.
pub fn load_config(layers: &[(Trust, String, String)], cli: &CliOverrides) -> Result<AgentConfig, ConfigError> {
    let texts: Vec<String> = layers.iter().map(|(_, _, text)| strip_foreign(text)).collect();
    let layers: Vec<ConfigLayer<'_>> =
        layers.iter().zip(&texts).map(|((trust, path, _), text)| ConfigLayer { trust: *trust, path, text }).collect();
    AgentConfig::load(&layers, cli)
}
