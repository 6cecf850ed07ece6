//! quiver's own secrets, kept out of its own environment.
//!
//! Children never inherit quiver's secrets ([`EnvPolicy`]), and quiver is
//! non-dumpable, but root reads any process's `/proc/<pid>/environ`: quiver
//! run as root, a yolo line or a user's MCP server running as root, would
//! still find every provider key there. That file shows the block the kernel
//! wrote on the initial stack at exec (`env_start..env_end` in
//! `/proc/self/stat`), not the live `environ`: removing a variable changes
//! what later lookups and children see, never that block. So at start
//! [`withhold_own_secrets`] copies the secrets into this process's memory,
//! removes them from the live environment and overwrites their values in the
//! block, as `setproctitle` implementations overwrite `argv`. quiver then
//! reads a key through [`secret_env`], and hands one to a child only by name.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::ops::Range;
use std::sync::OnceLock;

use crate::env::EnvPolicy;

/// The withheld variables, by name (the first value, as `getenv` gives it).
static WITHHELD: OnceLock<BTreeMap<OsString, OsString>> = OnceLock::new();

/// What [`withhold_own_secrets`] did.
#[derive(Debug, Default)]
pub struct Withheld {
    /// Names taken out of the live environment.
    pub names: Vec<String>,
    /// Why the original block still shows their values (`None`: it does not).
    pub block_left: Option<String>,
}

/// Why [`withhold_own_secrets`] changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum WithholdError {
    /// An earlier call withheld them.
    #[error("already withheld")]
    AlreadyWithheld,
    #[error("not on this platform")]
    UnsupportedPlatform,
    /// The thread count could not be read.
    #[error("/proc/self/task: {0}")]
    Threads(std::io::Error),
    /// Changing the environment is only sound while one thread runs.
    #[error("{0} threads are running: too late to change the environment")]
    TooLate(usize),
}

/// The value of `name`: a withheld secret's from quiver's memory, else the
/// live environment's. Every read of a key goes through here.
pub fn secret_env(name: &str) -> Option<String> {
    secret_env_os(name).and_then(|v| v.into_string().ok())
}

/// [`secret_env`] without the UTF-8 requirement.
pub fn secret_env_os(name: &str) -> Option<OsString> {
    match WITHHELD.get().and_then(|w| w.get(OsStr::new(name))) {
        Some(value) => Some(value.clone()),
        None => std::env::var_os(name),
    }
}

/// Every withheld variable: for a child that is quiver itself (a task
/// worker's `quiver exec`), which needs the keys and withholds them again.
pub fn withheld_env() -> Vec<(OsString, OsString)> {
    WITHHELD.get().map(|w| w.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default()
}

/// Takes quiver's secrets out of its environment: what [`EnvPolicy::user`]
/// never lets a child inherit, plus `also` (the key variables the user's
/// config names). Must run before any other thread exists; it checks, and
/// changes nothing when one does. A second call changes nothing either.
pub fn withhold_own_secrets(also: &[String]) -> Result<Withheld, WithholdError> {
    if WITHHELD.get().is_some() {
        return Err(WithholdError::AlreadyWithheld);
    }
    #[cfg(target_os = "linux")]
    {
        linux::withhold(also)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = also;
        Err(WithholdError::UnsupportedPlatform)
    }
}

/// The withheld subset of `vars`: every variable `policy` would not hand a
/// child, by its name or its value.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn secrets_of(
    policy: &EnvPolicy,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> BTreeMap<OsString, OsString> {
    let mut out = BTreeMap::new();
    for (name, value) in vars {
        if policy.withholds(&name, &value) {
            out.entry(name).or_insert(value);
        }
    }
    out
}

/// The value bytes (after `NAME=`) of every record in an environment block
/// whose name `secret` says is withheld; every record of a name, if it
/// appears more than once.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn secret_spans(block: &[u8], secret: impl Fn(&[u8]) -> bool) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for record in block.split(|b| *b == 0) {
        if let Some(eq) = record.iter().position(|b| *b == b'=')
            && secret(&record[..eq])
            && eq + 1 < record.len()
        {
            spans.push(start + eq + 1..start + record.len());
        }
        start += record.len() + 1;
    }
    spans
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsString;
    use std::ops::Range;
    use std::os::unix::ffi::OsStrExt;

    use super::{WITHHELD, Withheld, WithholdError, secret_spans, secrets_of};
    use crate::env::EnvPolicy;

    pub(super) fn withhold(also: &[String]) -> Result<Withheld, WithholdError> {
        let threads = std::fs::read_dir("/proc/self/task").map_err(WithholdError::Threads)?.count();
        if threads != 1 {
            return Err(WithholdError::TooLate(threads));
        }
        let mut policy = EnvPolicy::user();
        policy.exclude.extend(also.iter().cloned());
        let secrets = secrets_of(&policy, std::env::vars_os());
        let names: Vec<OsString> = secrets.keys().cloned().collect();
        let block = env_block(&names);
        let block_left = block.as_ref().err().cloned();
        let (start, spans) = block.unwrap_or_default();
        scrub(&names, start, &spans);
        let _ = WITHHELD.set(secrets);
        Ok(Withheld { names: names.iter().map(|n| n.to_string_lossy().into_owned()).collect(), block_left })
    }

    /// Where the original block starts, and the value spans to overwrite.
    fn env_block(names: &[OsString]) -> Result<(usize, Vec<Range<usize>>), String> {
        let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| format!("/proc/self/stat: {e}"))?;
        let (start, end) = env_bounds(&stat).ok_or("no env_start/env_end in /proc/self/stat")?;
        // The file is exactly the block's bytes, read by the kernel: no
        // unsafe read of the stack is needed to find the records.
        let block = std::fs::read("/proc/self/environ").map_err(|e| format!("/proc/self/environ: {e}"))?;
        if block.len() != end - start {
            return Err(format!("/proc/self/environ has {} bytes, the block {}", block.len(), end - start));
        }
        let spans = secret_spans(&block, |name| names.iter().any(|n| n.as_bytes() == name));
        Ok((start, spans))
    }

    /// Fields 50 and 51 of `/proc/self/stat` (env_start, env_end), counted
    /// after the command name, which may hold spaces and parentheses.
    pub(super) fn env_bounds(stat: &str) -> Option<(usize, usize)> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // `rest` starts at field 3 (state).
        let start: usize = fields.get(50 - 3)?.parse().ok()?;
        let end: usize = fields.get(51 - 3)?.parse().ok()?;
        (start > 0 && end > start).then_some((start, end))
    }

    /// Removes `names` from the live environment, then zeroes `spans` of the
    /// original block at `start`.
    #[allow(unsafe_code)]
    fn scrub(names: &[OsString], start: usize, spans: &[Range<usize>]) {
        for name in names {
            // SAFETY: `withhold` found this process's only thread to be this
            // one, and nothing here starts another: no other thread can be
            // reading or writing the environment.
            unsafe { std::env::remove_var(name) };
        }
        for span in spans {
            let at = std::ptr::with_exposed_provenance_mut::<u8>(start + span.start);
            // SAFETY: `start..start + len` is the environment block the kernel
            // wrote on this process's initial stack at exec (env_start/env_end
            // of /proc/self/stat, whose length the caller checked against
            // /proc/self/environ), mapped read-write for the process's life;
            // `span` lies inside it (taken from that file's records). After the
            // `remove_var`s above the live `environ` holds no pointer into
            // these records (unsetenv drops the pointers and never frees the
            // kernel's strings), no Rust reference to them exists, and no other
            // thread exists to look: the bytes change under no reader.
            unsafe { std::ptr::write_bytes(at, 0, span.len()) };
        }
    }
}

#[cfg(test)]
#[path = "own_env_tests.rs"]
mod tests;
