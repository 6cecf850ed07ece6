//! Where tool search's sentence-embedding model comes from, and where tool
//! vectors are cached. Only the user's own settings choose a model (it is
//! read from disk and run), never a project's.
//!
//! The model, first found wins:
//! 1. `QUIVER_SEARCH_MODEL=DIR` (`off` or empty: words alone; `embedded`:
//!    the static model in the binary);
//! 2. `[search] model = "DIR"` in the user's `config.toml` (`"off"`,
//!    `"embedded"` as above);
//! 3. the default install, `~/.cache/quiver/models/all-minilm-l6-v2`
//!    (`quiver models pull`), when it exists;
//! 4. the static embedding compiled into the binary: search ranks by
//!    meaning with nothing downloaded.

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
#[cfg_attr(not(feature = "semantic"), allow(dead_code))]
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

/// Which sentence model tool search ranks with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// Words alone (BM25F with quiver's expansion rules).
    Off,
    /// The static embedding compiled into the binary.
    Embedded,
    /// A model directory (a sentence-transformers transformer, or a static one).
    Dir(PathBuf),
}

impl ModelChoice {
    /// The word a setting spells this choice with, else the directory.
    fn parse(value: &str) -> ModelChoice {
        match value.trim() {
            "" | "off" => ModelChoice::Off,
            "embedded" => ModelChoice::Embedded,
            dir => ModelChoice::Dir(expand_home(dir)),
        }
    }

    /// For a script: `off`, `embedded` or the directory.
    pub fn label(&self) -> String {
        match self {
            ModelChoice::Off => "off".into(),
            ModelChoice::Embedded => "embedded".into(),
            ModelChoice::Dir(d) => d.display().to_string(),
        }
    }

    /// For a person: what ranks searches.
    pub fn describe(&self) -> String {
        match self {
            ModelChoice::Off => "none (words alone: lexical ranking)".into(),
            ModelChoice::Embedded => {
                "embedded (the static model in this binary, distilled from all-MiniLM-L6-v2)".into()
            }
            ModelChoice::Dir(d) => d.display().to_string(),
        }
    }
}

/// `[search] model` from a config file.
fn configured(file: Option<&Path>) -> anyhow::Result<Option<ModelChoice>> {
    let Some(file) = file.filter(|f| f.is_file()) else { return Ok(None) };
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let value: toml::Value = toml::from_str(&text).with_context(|| format!("{} is not TOML", file.display()))?;
    let Some(search) = value.get("search") else { return Ok(None) };
    let Some(model) = search.get("model") else { return Ok(None) };
    let model = model.as_str().with_context(|| {
        format!("{}: [search] model must be a directory path, \"embedded\" or \"off\"", file.display())
    })?;
    Ok(Some(ModelChoice::parse(model)))
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The model to rank with (see the module docs). A configured directory is
/// returned even when it is broken: loading it then says what is wrong, and
/// search stays lexical.
pub fn model_choice() -> anyhow::Result<ModelChoice> {
    let env = std::env::var_os("QUIVER_SEARCH_MODEL").map(|v| v.to_string_lossy().into_owned());
    resolve(env.as_deref(), user_config_file().as_deref(), models_dir().as_deref())
}

/// [`model_choice`] from its inputs: the environment variable's value, the
/// user's config file, the models directory.
fn resolve(env: Option<&str>, config: Option<&Path>, models: Option<&Path>) -> anyhow::Result<ModelChoice> {
    if let Some(v) = env {
        return Ok(ModelChoice::parse(v));
    }
    if let Some(choice) = configured(config)? {
        return Ok(choice);
    }
    let pulled = models.map(|d| d.join(DEFAULT_MODEL)).filter(|d| d.join("config.json").is_file());
    Ok(pulled.map_or(ModelChoice::Embedded, ModelChoice::Dir))
}

/// The meaning model for `choice`: the embedded one indexes each catalog at
/// once; a directory loads and builds its vectors in the background
/// (searches stay lexical until they are ready, or for good, with the reason
/// logged, if the model is broken).
#[cfg(feature = "semantic")]
pub fn meaning(choice: &ModelChoice) -> Option<std::sync::Arc<dyn quiver_search::MeaningModel>> {
    use quiver_search::semantic::{BackgroundModel, EmbeddedModel};
    match choice {
        ModelChoice::Off => None,
        ModelChoice::Embedded => Some(std::sync::Arc::new(EmbeddedModel)),
        ModelChoice::Dir(dir) => Some(std::sync::Arc::new(BackgroundModel::new(dir, vectors_dir().as_deref()))),
    }
}

/// Built without the `semantic` feature: a configured model is reported once,
/// and search stays lexical.
#[cfg(not(feature = "semantic"))]
pub fn meaning(choice: &ModelChoice) -> Option<std::sync::Arc<dyn quiver_search::MeaningModel>> {
    if let ModelChoice::Dir(dir) = choice {
        tracing::warn!(model = %dir.display(), "this quiver was built without the `semantic` feature; search stays lexical");
    }
    None
}

/// Lets `host` rank by meaning (see [`meaning`]).
pub fn attach(host: &quiver_engine::EngineHost) -> anyhow::Result<()> {
    if let Some(model) = meaning(&model_choice()?) {
        host.set_meaning(model);
    }
    Ok(())
}

#[cfg(test)]
#[path = "search_model_tests.rs"]
mod tests;
