//! Where a call can be relayed as the client wrote it (the stdio and HTTP
//! lanes), and what the client gets for the outcome.

use std::sync::Arc;

use rmcp::service::{RequestContext, RoleServer};

use super::{Engines, QuiverServer};
use crate::client::server::RelayRoute;

impl QuiverServer {
    /// Where a `tools/call` of `name` with `arguments` (a JSON object's text,
    /// or none) can be relayed as the client wrote it (a prefixed tool under
    /// the server's own name): a stdio server that is running now, when
    /// dispatch would pass the call on unchanged (see
    /// [`Engine::passes_unchanged`]: a deferred tool only once this session
    /// has loaded it) and nothing is recorded.
    /// `None` sends the call the general way, which does all the rest
    /// (starting the server, settling the first list, asking, deprecation
    /// notices, the transcript).
    pub(crate) fn relay_route(&self, name: &str, arguments: Option<&str>) -> Option<RelayRoute> {
        match self.relay_route_loading(name, arguments, None)? {
            (route, false) => Some(route),
            (_, true) => None,
        }
    }

    /// [`Self::relay_route`], or for a stateless client (`tail`: the tools it
    /// carries) a call that would load the tool is relayed too, saying so
    /// (its answer then carries the grown tail); and the tool's schema may
    /// not ask for request headers (SEP-2243 `x-mcp-header`), which rmcp
    /// checks on such a request.
    pub(crate) fn relay_route_loading(
        &self,
        name: &str,
        arguments: Option<&str>,
        tail: Option<&[String]>,
    ) -> Option<(RelayRoute, bool)> {
        if self.surface.transcript_dir.is_some() || !self.session.is_head_pinned() {
            return None;
        }
        let Engines::Hosted { manager, .. } = &self.surface.engines else { return None };
        let engine = self.surface.engine();
        let (spec, loads) = engine.passes_unchanged_loading(name, arguments, &self.surface.audience, &self.session)?;
        let loads = match tail {
            None if loads => return None,
            None => false,
            Some(_) if crate::server::stateless::has_key(&spec.input_schema, "x-mcp-header") => return None,
            Some(tail) => loads && !tail.iter().any(|t| t == name),
        };
        let quiver_engine::ToolSource::Mcp { server, direct } = &spec.source else { return None };
        let handle = manager.server(server)?;
        // A prefixed tool goes down under the name the server gave it; nothing else changes.
        let remote = if *direct { Arc::from(name) } else { handle.remote_name(name)? };
        let (conn, lane) = handle.live_raw()?;
        Some((RelayRoute { server: Arc::clone(handle), conn, lane, remote }, loads))
    }

    /// What the client gets for a call relayed on `route`: the server's text
    /// as it wrote it when it is too small to spill (`Ok`), else (`Err`) the
    /// result dispatch would have made of the same outcome.
    pub(crate) async fn relayed_result(
        &self,
        name: &str,
        outcome: Result<Arc<String>, crate::client::ServerError>,
        request: &RequestContext<RoleServer>,
        route: &RelayRoute,
    ) -> Result<Arc<String>, rmcp::model::CallToolResult> {
        let text = match outcome {
            // What spilling measures (a block's text, a short placeholder for
            // binary data, structured content) is no longer than the result's
            // JSON: a result under half the threshold is never spilled or cut.
            Ok(text)
                if text.len() * 2 <= self.session.state::<quiver_engine::spill::SpillStore>().threshold_bytes() =>
            {
                return Ok(text);
            }
            Ok(text) => text,
            Err(error) => {
                let message = crate::client::explain_failure(&route.server, &route.remote, &error);
                return Err(self.call_result(&quiver_engine::ToolResult::error(message)));
            }
        };
        let mut result = match crate::client::content::to_output(route.server.name(), &route.remote, &text) {
            Ok(output) => quiver_engine::ToolResult::ok(output),
            Err(quiver_engine::ToolError::Report(output)) => {
                quiver_engine::ToolResult { is_error: true, ..quiver_engine::ToolResult::ok(output) }
            }
            Err(other) => quiver_engine::ToolResult::error(other.to_string()),
        };
        let engine = self.surface.engine();
        // Boxed: the spill's future would otherwise size every relayed call's.
        if let Some(tool) = engine.registry().get(name)
            && Box::pin(quiver_engine::spill::spill_if_large(&mut result, &tool.spec, &self.context(request))).await
        {
            result.verbatim = None;
        }
        Err(self.call_result(&result))
    }
}
