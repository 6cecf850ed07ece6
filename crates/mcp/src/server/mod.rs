//! quiver as an MCP server (`quiver mcp serve`).
//!
//! `tools/list` is the session's catalog (the first-turn head, then whatever this
//! session loaded, in load order), rendered exactly as `quiver catalog --format
//! mcp` renders it. `tools/call` is `engine.dispatch` with the session's context,
//! so aliases, validation, permissions, deprecation notices and spilling behave
//! as everywhere else. When a call grows the loaded set (`tool_search`,
//! `mcp_discover`, a direct call of a deferred tool) the client gets
//! `notifications/tools/list_changed`.
//!
//! - [`handler`]: the `ServerHandler` (one per connection / HTTP session);
//! - [`convert`]: quiver shapes to MCP shapes;
//! - [`approver`]: approvals over MCP elicitation;
//! - [`passthrough`]: resources, prompts and completion of the servers behind,
//!   and how their names and URIs are prefixed;
//! - [`http`]: the streamable HTTP transport and its guards (`http_verbatim`:
//!   the layer that writes verbatim results into its responses);
//! - [`stateless`]: requests of the 2026-07-28 revision, answered without a
//!   session beside the session-based revisions on the same transports
//!   (`stateless_tail`: the loaded tools such a client carries;
//!   `input_required`: a call that asks such a client something);
//! - [`call_streams`]: the HTTP session layer that puts what the gateway
//!   relays during a call on that call's own SSE stream;
//! - [`stdio`]: stdin/stdout through the event loop when they are pipes or sockets;
//! - [`stdio_line`]: the line transport over them, which writes a directly
//!   exposed server's results verbatim;
//! - [`stdio_calls`]: `tools/call` over stdio answered beside rmcp's service
//!   loop (one task per call, no hop through the loop; `stdio_stateless`: a
//!   2026-07-28 client's, by the HTTP lane's stateless relay);
//! - [`http_calls`]: a relayed `tools/call` over HTTP answered beside rmcp
//!   the same way (`http_stateless_calls`: a 2026-07-28 client's;
//!   `http_answer`: the response either makes).

pub mod approver;
mod bad_request;
pub mod call_streams;
pub mod convert;
pub mod handler;
pub mod http;
mod http_answer;
mod http_bad_body;
pub mod http_calls;
mod http_plain;
mod http_stateless_calls;
mod http_verbatim;
pub mod input_required;
pub mod passthrough;
pub mod stateless;
pub mod stateless_tail;
pub mod stdio;
pub mod stdio_calls;
pub mod stdio_line;
mod stdio_stateless;
pub mod verbatim;

use std::sync::Arc;

use anyhow::Context;
use rmcp::ServiceExt;

pub use handler::{INSTRUCTIONS, QuiverServer, Surface};
pub use http::{HttpOptions, HttpServer, MCP_PATH};

/// Serves one session over stdin/stdout until the client disconnects.
pub async fn serve_stdio(surface: Arc<Surface>) -> anyhow::Result<()> {
    let (read, write) = stdio::transport();
    serve_io(surface, read, write).await
}

/// Serves one session over any byte stream pair (tests, embedding).
pub async fn serve_io<R, W>(surface: Arc<Surface>, read: R, write: W) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let verbatim = Arc::new(verbatim::VerbatimResults::default());
    let calls = Arc::new(stdio_calls::DirectCalls::default());
    let lane = QuiverServer::new(Arc::clone(&surface)).with_verbatim_results(Arc::clone(&verbatim));
    let lane =
        stdio_stateless::StdioStateless::new(http_stateless_calls::StatelessLane::new(lane, Arc::clone(&verbatim)));
    let handler = QuiverServer::new(surface).with_verbatim_results(Arc::clone(&verbatim));
    let transport = stdio_line::StdioLine::new(read, write, verbatim, Arc::clone(&calls)).with_stateless(lane);
    let server = handler.clone().serve(transport).await.context("MCP handshake failed")?;
    calls.arm(handler, server.peer().clone());
    server.waiting().await.context("MCP session ended with an error")?;
    Ok(())
}
