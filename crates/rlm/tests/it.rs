//! quiver-rlm's integration tests, linked into one binary: real Python
//! processes, real files, child models through the scripted model server.

// Helpers outside `#[test]` functions unwrap too: in a test, a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod child_queries;
mod session_objects;
mod sessions;
