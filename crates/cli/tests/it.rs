//! The CLI's integration tests, linked into one binary: every test binary links
//! the whole dependency tree, so one binary instead of seven keeps CI's disk use
//! and link time down. Each module is one area of the contract.

// Tests may unwrap: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod exec;
mod exec_responses;
mod exec_sandbox;
mod exec_terminal;
mod github;
mod home_workspace;
mod import_graph;
mod mcp_conformance_client;
mod mcp_gateway;
mod mcp_http;
mod mcp_manage;
mod mcp_node;
mod mcp_sdk;
mod mcp_stdio;
mod mcp_support;
mod providers;
mod providers_responses;
mod real_servers;
mod relay;
mod sandbox_cmd;
mod search_bench;
mod search_wiring;
mod subagents;
mod surface;
mod tasks;
mod transcripts;
mod tui_terminal;
mod vocabulary;
