//! Trust by source. Every setting comes from quiver itself (built-in), the
//! user's own config, or the project (the workspace, possibly a cloned
//! repository). Project settings may only restrict: anything that starts a
//! process or sends a key somewhere needs the user's config or the user's
//! approval. Approvals of project-defined processes (MCP servers) are
//! remembered per workspace and per exact configuration, in the user's state
//! directory, so an edited config is asked about again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where a setting came from. One name everywhere (`built-in`, as people
/// read it in `quiver mcp list`); JSON once said `builtin`, still read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
#[cfg_attr(test, derive(strum::VariantArray))]
pub enum Source {
    #[serde(rename = "built-in", alias = "builtin")]
    #[strum(serialize = "built-in")]
    BuiltIn,
    User,
    Project,
}

impl Source {
    /// The serde name (strum derives it with serde's case rule).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether settings from here may widen what runs unasked.
    pub fn may_widen(self) -> bool {
        self != Source::Project
    }
}

/// What an approval is about: a named thing (an MCP server) of a workspace in
/// one exact configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustKey {
    pub workspace: PathBuf,
    pub subject: String,
    /// A digest of everything that decides what would run (command, args,
    /// env, cwd, url); see [`fingerprint`].
    pub fingerprint: String,
}

/// A stable digest of a configuration's canonical text.
pub fn fingerprint(canonical_config: &str) -> String {
    hex::encode(Sha256::digest(canonical_config.as_bytes()))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// workspace → subject → approved fingerprint
    #[serde(default)]
    workspaces: BTreeMap<String, BTreeMap<String, String>>,
}

/// Remembered approvals. `None` path: nothing is remembered (tests, replays).
#[derive(Debug, Default)]
pub struct TrustStore {
    path: Option<PathBuf>,
    lock: Mutex<()>,
}

impl TrustStore {
    /// `$QUIVER_STATE_DIR/trust.json`, else the platform's state directory
    /// (`~/.local/state/quiver/trust.json` on Linux).
    pub fn from_env() -> TrustStore {
        let dir = std::env::var_os("QUIVER_STATE_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("quiver")));
        TrustStore { path: dir.map(|d| d.join("trust.json")), lock: Mutex::new(()) }
    }

    pub fn at(path: impl Into<PathBuf>) -> TrustStore {
        TrustStore { path: Some(path.into()), lock: Mutex::new(()) }
    }

    /// Remembers nothing: every project-defined launch is asked for.
    pub fn ephemeral() -> TrustStore {
        TrustStore::default()
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn is_trusted(&self, key: &TrustKey) -> bool {
        let _guard = self.lock.lock();
        let Some(path) = &self.path else { return false };
        read(path)
            .ok()
            .and_then(|f| f.workspaces.get(&workspace_key(&key.workspace)).and_then(|m| m.get(&key.subject)).cloned())
            .is_some_and(|fp| fp == key.fingerprint)
    }

    /// Records an approval; written atomically, readable only by the user.
    pub fn trust(&self, key: &TrustKey) -> anyhow::Result<()> {
        let _guard = self.lock.lock();
        let Some(path) = &self.path else { return Ok(()) };
        let mut file = read(path).unwrap_or_default();
        file.workspaces
            .entry(workspace_key(&key.workspace))
            .or_default()
            .insert(key.subject.clone(), key.fingerprint.clone());
        write(path, &file)
    }

    /// Forgets an approval; whether there was one.
    pub fn revoke(&self, workspace: &Path, subject: &str) -> anyhow::Result<bool> {
        let _guard = self.lock.lock();
        let Some(path) = &self.path else { return Ok(false) };
        let mut file = read(path).unwrap_or_default();
        let removed = file.workspaces.get_mut(&workspace_key(workspace)).and_then(|m| m.remove(subject)).is_some();
        if removed {
            write(path, &file)?;
        }
        Ok(removed)
    }
}

fn workspace_key(workspace: &Path) -> String {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf()).display().to_string()
}

fn read(path: &Path) -> anyhow::Result<TrustFile> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("{} is not a trust file", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn write(path: &Path, file: &TrustFile) -> anyhow::Result<()> {
    let dir = path.parent().context("trust file has no parent directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let text = serde_json::to_string_pretty(file)?;
    let tmp = tempfile_in(dir)?;
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    restrict_to_user(&tmp);
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

fn tempfile_in(dir: &Path) -> anyhow::Result<PathBuf> {
    Ok(dir.join(format!(".trust.{}.tmp", std::process::id())))
}

#[cfg(unix)]
fn restrict_to_user(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict_to_user(_: &Path) {}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
