//! The namespace sandbox against a hostile corpus: each case is a finding of
//! a probe that escaped the Landlock-only sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use quiver_sandbox::{SandboxMechanism, SandboxOptions, SandboxPolicy, probe};

use crate::support::*;

/// The namespace sandbox is there where CI says the sandbox is required.
#[test]
fn namespaces_are_available_where_the_sandbox_is_required() {
    let p = probe();
    eprintln!("sandbox probe: {}", p.describe());
    if std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() == Ok("1") {
        assert!(p.namespaces.is_ok(), "{}", p.describe());
    }
}
