//! quiver-agent's integration tests, linked into one binary (one link of the
//! dependency tree instead of one per file). Each module is one area; all run
//! against the scripted model server (feature `scripted`).

// Helpers outside `#[test]` functions unwrap too: in a test, a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod anthropic_wire;
mod config;
mod deferred_wire;
mod dispatch_wire;
mod exec;
mod fixtures;
mod idle_stream;
mod openai_wire;
mod responses_wire;
mod robustness;
mod run_loop;
mod tolerant_wire;
