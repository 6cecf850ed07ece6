//! The sandbox crate's integration tests, linked into one binary. They start
//! real child processes (`bash -c ...`) against the running kernel.
//!
//! Tests that need Landlock or seccomp print why they skip where the kernel
//! lacks them, and fail instead when `QUIVER_REQUIRE_SANDBOX=1` (CI).

mod allowlist;
mod contain;
mod env;
mod fs;
mod gate;
mod git_routes;
mod landlock_reads;
mod namespace;
mod net;
mod support;
