//! The MCP crate's integration tests, linked into one binary (each test binary
//! links the whole dependency tree; one keeps CI's disk use and link time down).

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod client_backoff;
mod client_discovery;
mod client_engine;
mod client_everything;
mod client_http;
mod client_isolation;
mod client_oauth;
mod client_protocol;
mod client_start_dir;
mod client_support;
mod client_trust;
mod gateway_call_stream;
mod gateway_conformance;
mod gateway_everything;
mod gateway_http_lane;
mod gateway_input_required;
mod gateway_passthrough;
mod gateway_relay;
mod gateway_stdio_calls;
mod gateway_verbatim;
mod server_capacity;
mod server_http;
mod server_http_plain;
mod server_session;
mod server_stateless;
mod server_stdio_lines;
mod server_support;
