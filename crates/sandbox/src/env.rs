//! Which environment variables a child inherits.
//!
//! Modelled on Codex's shell environment policy: start from all, a core set,
//! or nothing; drop what matches an exclude pattern (by default anything that
//! looks like a secret, and quiver's own token); keep only what matches the
//! include list when one is given; then apply explicit `set` values. Patterns
//! are case-insensitive globs with `*` and `?`.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use parking_lot::Mutex;

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
        let Some(path) = crate::policy::user_config_file() else { return Self::default() };
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
            if !self.withholds(&name, &value) {
                out.insert(name, value);
            }
        }
        for (name, value) in &self.set {
            out.insert(OsString::from(name), OsString::from(value));
        }
        out
    }

    /// Whether an inherited `name=value` is dropped: by its name, or by a
    /// value that is a credential URL.
    pub fn withholds(&self, name: &OsStr, value: &OsStr) -> bool {
        !self.keeps(name)
            || (!self.ignore_default_excludes && credential_url(&name.to_string_lossy(), &value.to_string_lossy()))
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
        if matches_any(defaults, &name) || matches_any(&self.exclude, &name) {
            return false;
        }
        self.include_only.is_empty() || matches_any(&self.include_only, &name)
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

/// The extra variable names (or `*`/`?` patterns) to scrub, from `path`'s
/// `[sandbox] scrub_env = ["CORP_DB_URL", "VAULT_*"]`. No file, no table or
/// no key: none. A key of the wrong shape is an error naming it.
pub fn user_scrub_list(path: &std::path::Path) -> Result<Vec<String>, String> {
    crate::policy::user_sandbox_list(path, "scrub_env", "variable names", "[\"CORP_DB_URL\", \"VAULT_*\"]")
}

/// Case-insensitive glob: `*` any run of characters, `?` one character.
#[cfg(test)]
pub fn glob_match(pattern: &str, name: &str) -> bool {
    matches_any(&[pattern], name)
}

/// Whether `name` matches one of `patterns` (case-insensitive globs). Each
/// distinct list is compiled once into a `GlobSet` and kept: the lists are the
/// defaults and the user's few, and every spawn checks every variable.
fn matches_any<S: AsRef<str>>(patterns: &[S], name: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock};
    static COMPILED: LazyLock<Mutex<HashMap<Vec<String>, Arc<globset::GlobSet>>>> = LazyLock::new(Default::default);
    if patterns.is_empty() {
        return false;
    }
    let key: Vec<String> = patterns.iter().map(|p| p.as_ref().to_string()).collect();
    let set = {
        let mut compiled = COMPILED.lock();
        Arc::clone(compiled.entry(key).or_insert_with_key(|key| Arc::new(compile(key))))
    };
    set.is_match(name)
}

/// A name pattern as a glob: `*` and `?` are wildcards; anything else
/// globset would read as syntax (`[`, `{`, `\\`) is taken literally, since
/// these are variable names, not paths.
fn compile(patterns: &[String]) -> globset::GlobSet {
    let mut set = globset::GlobSetBuilder::new();
    for pattern in patterns {
        let literal: String = pattern
            .chars()
            .map(|c| if matches!(c, '[' | ']' | '{' | '}') { format!("[{c}]") } else { c.to_string() })
            .collect();
        match globset::GlobBuilder::new(&literal)
            .case_insensitive(true)
            .literal_separator(false)
            .backslash_escape(false)
            .build()
        {
            Ok(glob) => {
                set.add(glob);
            }
            Err(e) => tracing::warn!(%pattern, %e, "an environment pattern that is not a glob is ignored"),
        }
    }
    set.build().unwrap_or_else(|e| {
        tracing::warn!(%e, "environment patterns could not be compiled; none applied");
        globset::GlobSet::empty()
    })
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
