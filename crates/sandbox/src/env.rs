//! Which environment variables a child inherits.
//!
//! Modelled on Codex's shell environment policy: start from all, a core set,
//! or nothing; drop what matches an exclude pattern (by default anything that
//! looks like a secret, and quiver's own token); keep only what matches the
//! include list when one is given; then apply explicit `set` values. Patterns
//! are case-insensitive globs with `*` and `?`.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use crate::hook::PreExecTarget;

/// Where the inherited set starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inherit {
    /// Every variable of quiver's environment (then filtered).
    #[default]
    All,
    /// Only [`CORE_VARS`]: enough for a shell, a compiler and git to work.
    Core,
    /// Nothing but `set`.
    None,
}

/// The variables [`Inherit::Core`] keeps.
pub const CORE_VARS: &[&str] =
    &["HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "TERM", "TZ"];

/// Patterns excluded unless [`EnvPolicy::ignore_default_excludes`] is set:
/// provider keys, tokens, anything called a secret or a password (and the
/// common spellings of one: `MYSQL_PWD`, `SSHPASS`, a GitHub `*_PAT`,
/// `DOCKER_AUTH_CONFIG`, a private key, a webhook URL, which is its own
/// key), and the bearer token of quiver's own HTTP listener. Values are
/// checked too: see [`credential_url`].
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "*_API_KEY",
    "*_APIKEY",
    "API_KEY",
    "*_TOKEN",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PWD",
    "SSHPASS",
    "*_PAT",
    "*_AUTH",
    "*_AUTH_CONFIG",
    "*_PRIVATE_KEY",
    "*WEBHOOK_URL",
    "*_CREDENTIALS",
    "QUIVER_MCP_TOKEN",
];

/// Whether `value` is a URL carrying a password (`postgres://u:pw@host/db`,
/// `redis://:pw@host`): whatever its name (`DATABASE_URL`), it is a secret.
/// Proxies (`*_proxy`) are exempt: a command granted the network needs them,
/// and a user who puts credentials there lists them in `scrub_env`.
pub fn credential_url(name: &str, value: &str) -> bool {
    if name.to_ascii_lowercase().ends_with("_proxy") {
        return false;
    }
    let Some((_, rest)) = value.split_once("://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let Some((userinfo, _)) = authority.rsplit_once('@') else { return false };
    userinfo.split_once(':').is_some_and(|(_, password)| !password.is_empty())
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    pub inherit: Inherit,
    /// Skip [`DEFAULT_EXCLUDES`] (the user's explicit choice, never a project's).
    pub ignore_default_excludes: bool,
    /// More patterns to drop (names from config: "anything named in config").
    pub exclude: Vec<String>,
    /// When non-empty, only variables matching one of these survive filtering.
    pub include_only: Vec<String>,
    /// Set last, whatever the filters said.
    pub set: BTreeMap<String, String>,
}

impl EnvPolicy {
    /// The default policy plus `names` excluded (exact names or patterns).
    pub fn excluding<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        EnvPolicy { exclude: names.into_iter().map(Into::into).collect(), ..Default::default() }
    }

    /// The default policy plus the names the user's own `config.toml` lists
    /// under `[sandbox] scrub_env` (see [`user_scrub_list`]). Read on every
    /// call (a few µs), so an edit applies to the next command. A broken file
    /// scrubs nothing extra but says so in the log; it never fails the spawn.
    pub fn user() -> Self {
        let Some(path) = user_config_file() else { return Self::default() };
        match user_scrub_list(&path) {
            Ok(names) => Self::excluding(names),
            Err(e) => {
                tracing::warn!(path = %path.display(), %e, "[sandbox] scrub_env not applied");
                Self::default()
            }
        }
    }

    /// The environment a child gets, computed from `vars` (quiver's own, in
    /// [`apply_to`](Self::apply_to)). Sorted by name.
    pub fn resolve<I: IntoIterator<Item = (OsString, OsString)>>(&self, vars: I) -> BTreeMap<OsString, OsString> {
        let mut out = BTreeMap::new();
        for (name, value) in vars {
            let secret_value =
                !self.ignore_default_excludes && credential_url(&name.to_string_lossy(), &value.to_string_lossy());
            if self.keeps(&name) && !secret_value {
                out.insert(name, value);
            }
        }
        for (name, value) in &self.set {
            out.insert(OsString::from(name), OsString::from(value));
        }
        out
    }

    /// Whether an inherited variable called `name` survives the filters.
    pub fn keeps(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        let inherited = match self.inherit {
            Inherit::All => true,
            Inherit::Core => CORE_VARS.iter().any(|core| core.eq_ignore_ascii_case(&name)),
            Inherit::None => false,
        };
        if !inherited {
            return false;
        }
        let defaults = if self.ignore_default_excludes { &[][..] } else { DEFAULT_EXCLUDES };
        if defaults.iter().any(|p| glob_match(p, &name)) || self.exclude.iter().any(|p| glob_match(p, &name)) {
            return false;
        }
        self.include_only.is_empty() || self.include_only.iter().any(|p| glob_match(p, &name))
    }

    /// Replaces `cmd`'s environment with [`resolve`](Self::resolve) of quiver's
    /// own. Variables set on `cmd` before this call are dropped too: set them
    /// after, or through `set`.
    pub fn apply_to(&self, cmd: &mut impl PreExecTarget) {
        let cmd = cmd.std_command();
        cmd.env_clear();
        cmd.envs(self.resolve(std::env::vars_os()));
    }
}

/// The user's own settings file: `$QUIVER_CONFIG_DIR/config.toml`, else
/// `config.toml` in [`quiver_config_dir`](crate::quiver_config_dir). Only this
/// file is read: a project's `quiver.toml` comes with a cloned repository and
/// gets no say over what children inherit.
pub fn user_config_file() -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("QUIVER_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(std::path::PathBuf::from(dir)),
        None => crate::quiver_config_dir(),
    };
    dir.map(|d| d.join("config.toml"))
}

/// The extra variable names (or `*`/`?` patterns) to scrub, from `path`'s
/// `[sandbox] scrub_env = ["CORP_DB_URL", "VAULT_*"]`. No file, no table or
/// no key: none. A key of the wrong shape is an error naming it.
pub fn user_scrub_list(path: &std::path::Path) -> Result<Vec<String>, String> {
    user_sandbox_list(path, "scrub_env", "variable names", "[\"CORP_DB_URL\", \"VAULT_*\"]")
}

/// More entries of the home a sandboxed command may read, from `path`'s
/// `[sandbox] home_allow = [".m2/repository", "~/.gradle/caches"]` (relative
/// to the home, or `~/…`), beside
/// [`HOME_TOOLCHAIN_ALLOW`](crate::protected::HOME_TOOLCHAIN_ALLOW). Only
/// the user's own config is read: a project cannot widen what its commands see.
pub fn user_home_allow(path: &std::path::Path) -> Result<Vec<String>, String> {
    let entries =
        user_sandbox_list(path, "home_allow", "paths in the home", "[\".m2/repository\", \"~/.gradle/caches\"]")?;
    entries
        .into_iter()
        .map(|e| {
            let rel = e.strip_prefix("~/").unwrap_or(&e).trim_end_matches('/').to_string();
            let bad = rel.is_empty()
                || rel.starts_with('/')
                || rel == "~"
                || std::path::Path::new(&rel).components().any(|c| !matches!(c, std::path::Component::Normal(_)));
            if bad {
                Err(format!("`[sandbox] home_allow` entry `{e}` must name something inside the home (`.m2/repository` or `~/.m2/repository`), not the home itself or a path outside it"))
            } else {
                Ok(rel)
            }
        })
        .collect()
}

/// `[sandbox] KEY`, a list of non-empty strings, from the user's config file.
fn user_sandbox_list(path: &std::path::Path, key: &str, what: &str, example: &str) -> Result<Vec<String>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.to_string()),
    };
    let table: toml::Table = toml::from_str(&text).map_err(|e| e.to_string())?;
    let Some(list) = table.get("sandbox").and_then(|s| s.get(key)) else { return Ok(Vec::new()) };
    let shape = || format!("`[sandbox] {key}` must be a list of {what}, e.g. {example}");
    let items = list.as_array().ok_or_else(shape)?;
    items.iter().map(|v| v.as_str().map(str::to_string).filter(|s| !s.trim().is_empty()).ok_or_else(shape)).collect()
}

/// Case-insensitive glob: `*` any run of characters, `?` one character.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().flat_map(char::to_lowercase).collect();
    let n: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
    // Iterative matcher with one backtrack point: linear in practice, never
    // exponential on patterns like `*a*a*a*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if *c == '?' || *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
