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
/// provider keys, tokens, anything called a secret or a password, and the
/// bearer token of quiver's own HTTP listener.
pub const DEFAULT_EXCLUDES: &[&str] =
    &["*_API_KEY", "*_APIKEY", "*_TOKEN", "*SECRET*", "*PASSWORD*", "*_CREDENTIALS", "QUIVER_MCP_TOKEN"];

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

    /// The environment a child gets, computed from `vars` (quiver's own, in
    /// [`apply_to`](Self::apply_to)). Sorted by name.
    pub fn resolve<I: IntoIterator<Item = (OsString, OsString)>>(&self, vars: I) -> BTreeMap<OsString, OsString> {
        let mut out = BTreeMap::new();
        for (name, value) in vars {
            if self.keeps(&name) {
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
