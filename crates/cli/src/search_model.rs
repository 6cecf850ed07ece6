//! Where tool search's sentence-embedding model comes from, and where tool
//! vectors are cached. Only the user's own settings choose a model (it is
//! read from disk and run), never a project's.
//!
//! The model directory, first found wins:
//! 1. `QUIVER_SEARCH_MODEL=DIR` (`off` or empty: no model);
//! 2. `[search] model = "DIR"` in the user's `config.toml` (`"off"`: no model);
//! 3. the default install, `~/.cache/quiver/models/all-minilm-l6-v2`
//!    (`quiver models pull`), when it exists.
//!
//! With none, search is lexical: nothing has to be downloaded.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The model `quiver models pull` installs when no name is given, and the
/// default location's directory name.
pub const DEFAULT_MODEL: &str = "all-minilm-l6-v2";

fn cache_base() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("quiver"))
}

/// Where `quiver models pull` puts models: `QUIVER_MODELS_DIR`, else `~/.cache/quiver/models`.
pub fn models_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_MODELS_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => cache_base().map(|d| d.join("models")),
    }
}

/// Where tool vectors are cached (one `.qvec` store per model, a vector per tool text):
/// `QUIVER_SEARCH_CACHE`, else `~/.cache/quiver/vectors`.
pub fn vectors_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_SEARCH_CACHE").filter(|v| !v.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => cache_base().map(|d| d.join("vectors")),
    }
}

fn user_config_file() -> Option<PathBuf> {
    let dir = match std::env::var_os("QUIVER_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => dirs::config_dir()?.join("quiver"),
    };
    Some(dir.join("config.toml"))
}

/// `[search] model` from a config file: `Some(None)` for `"off"`.
fn configured(file: Option<&Path>) -> anyhow::Result<Option<Option<PathBuf>>> {
    let Some(file) = file.filter(|f| f.is_file()) else { return Ok(None) };
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let value: toml::Value = toml::from_str(&text).with_context(|| format!("{} is not TOML", file.display()))?;
    let Some(search) = value.get("search") else { return Ok(None) };
    let Some(model) = search.get("model") else { return Ok(None) };
    let model = model
        .as_str()
        .with_context(|| format!("{}: [search] model must be a directory path or \"off\"", file.display()))?;
    Ok(Some(match model.trim() {
        "" | "off" => None,
        dir => Some(expand_home(dir)),
    }))
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The model directory to rank with, if any (see the module docs). A
/// configured directory is returned even when it is broken: loading it then
/// says what is wrong, and search stays lexical.
pub fn model_dir() -> anyhow::Result<Option<PathBuf>> {
    let env = std::env::var_os("QUIVER_SEARCH_MODEL").map(|v| v.to_string_lossy().into_owned());
    resolve(env.as_deref(), user_config_file().as_deref(), models_dir().as_deref())
}

/// [`model_dir`] from its inputs: the environment variable's value, the
/// user's config file, the models directory.
fn resolve(env: Option<&str>, config: Option<&Path>, models: Option<&Path>) -> anyhow::Result<Option<PathBuf>> {
    if let Some(v) = env.map(str::trim) {
        return Ok(if v.is_empty() || v == "off" { None } else { Some(expand_home(v)) });
    }
    if let Some(choice) = configured(config)? {
        return Ok(choice);
    }
    Ok(models.map(|d| d.join(DEFAULT_MODEL)).filter(|d| d.join("config.json").is_file()))
}

/// Lets `host` rank by meaning when a model is configured: vectors build in
/// the background and searches stay lexical until they are ready (or for
/// good, with the reason logged, if the model is broken).
#[cfg(feature = "semantic")]
pub fn attach(host: &quiver_engine::EngineHost) -> anyhow::Result<()> {
    if let Some(dir) = model_dir()? {
        let model = quiver_search::semantic::BackgroundModel::new(&dir, vectors_dir().as_deref());
        host.set_meaning(std::sync::Arc::new(model));
    }
    Ok(())
}

/// Built without the `semantic` feature: a configured model is reported once,
/// and search stays lexical.
#[cfg(not(feature = "semantic"))]
pub fn attach(_host: &quiver_engine::EngineHost) -> anyhow::Result<()> {
    if let Some(dir) = model_dir()? {
        tracing::warn!(model = %dir.display(), "this quiver was built without the `semantic` feature; search stays lexical");
    }
    Ok(())
}

#[cfg(test)]
#[path = "search_model_tests.rs"]
mod tests;
