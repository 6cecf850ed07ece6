//! quiver's downstream MCP client as the client under test of the official
//! conformance suite (`conformance client --command "quiver mcp
//! conformance-client" --scenario S`; the suite appends its server's URL).
//! From npm like the server-side runs: skipped with a notice when not
//! installed, a failure under `QUIVER_REQUIRE_ALL`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::*;

/// The client scenarios quiver passes: all but three, each down to the
/// suite's version 0.1.8, not to quiver (measured by hand, see the issue-12
/// note):
/// - `initialize`: this suite version expects the client to offer protocol
///   2025-06-18; rmcp offers 2025-11-25, and quiver does not downgrade to pass;
/// - `auth/metadata-var2` and `var3`: the suite's authorization server
///   publishes `issuer` without its `/tenant1` path, and rmcp rightly refuses
///   metadata whose issuer differs from the one it was fetched for (RFC 8414
///   §3.3); fixed in the suite after 0.1.8 (conformance issue #140, PR #152).
///
/// `tools_call` passes because `crates/mcp/tests/node/package.json` runs the
/// suite on the SDK it was written for (see the note there).
const SCENARIOS: &[&str] = &[
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/basic-cimd",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
];

fn run(suite: &quiver_testkit::Conformance, scenario: &str) -> (bool, String) {
    let results = tempfile::tempdir().unwrap(); // the suite writes results/ into its cwd
    let command = format!("{} mcp conformance-client", quiver_bin().display());
    let (ok, report) = suite.run(&["client", "--command", &command, "--scenario", scenario], results.path());
    (ok && report.contains("0 failed"), report)
}

#[test]
fn conformance_client_scenarios_pass() {
    let Some(suite) = quiver_testkit::conformance_or_skip() else { return };
    let failed: Vec<String> = SCENARIOS
        .iter()
        .filter_map(|scenario| {
            let (ok, report) = run(&suite, scenario);
            (!ok).then(|| format!("--- {scenario}:\n{report}"))
        })
        .collect();
    assert!(failed.is_empty(), "conformance client scenarios failed:\n{}", failed.join("\n"));
}
