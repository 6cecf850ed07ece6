//! One `tools/call`, as both kinds of client make it: the call's upstream
//! side (what the relay sends to, see `relay`), dispatch and the result the
//! client gets, and a stateless (2026-07-28) call, which runs in a task of
//! its own so that it can wait for its client's input between requests
//! (`input_required`).

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::{QuiverServer, ToolContext, convert};
use crate::server::input_required::{self, Binding, Parked, Route};

impl QuiverServer {
    /// The upstream side of a call of `context` (see `relay`): `input` is a
    /// stateless call's way to ask its client.
    pub(in crate::server) fn upstream(
        &self,
        context: &RequestContext<RoleServer>,
        input: Option<std::sync::Arc<crate::server::input_required::Asker>>,
    ) -> crate::relay::Upstream {
        crate::relay::Upstream {
            client: self.client,
            peer: context.peer.clone(),
            request_id: context.id.clone(),
            progress_token: context.meta.get_progress_token(),
            input,
        }
    }

    /// Runs one call through dispatch, downstream MCP tools reaching the
    /// client through the relay (progress under its token, logging, the
    /// server's own requests), and what the client gets for it.
    pub(in crate::server) async fn dispatch(
        &self,
        name: &str,
        args: Value,
        ctx: ToolContext,
        upstream: crate::relay::Upstream,
        stateless: bool,
    ) -> rmcp::model::CallToolResult {
        if !self.session.is_head_pinned() {
            self.surface.settle_direct(&ctx).await;
        }
        self.session.advance_turn();
        let mut result = match crate::relay::with_upstream(upstream, ctx.call(name, args)).await {
            // Verbatim text is a downstream server's, in its revision's shape.
            Ok(result) if stateless => convert::call_result(&result),
            Ok(result) => self.call_result(&result),
            // A fatal tool failure breaks that call, not the connection.
            Err(e) => {
                tracing::error!(tool = %name, error = %format!("{e:#}"), "tool failed");
                convert::error_result(format!("{e:#}"))
            }
        };
        // A stateless client hears of changes on `subscriptions/listen`, not
        // on a call's response; it carries its tail itself.
        if stateless {
            let loaded = self.session.loaded();
            if !loaded.is_empty() {
                let token = self.surface.tail_keys.token(&loaded);
                result
                    .meta
                    .get_or_insert_with(Default::default)
                    .insert(crate::server::stateless_tail::TAIL_KEY.into(), token);
            }
        }
        result
    }
}

/// A stateless call: a fresh one starts in its own task; a retry that
/// carries a `requestState` resumes the call it names with its answers. Either
/// way it is run until it ends or asks its client again.
pub(in crate::server) async fn call_stateless(
    server: &QuiverServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let rounds = std::sync::Arc::clone(server.surface.input_rounds());
    let client = context.meta.client_info().map(|info| info.name).unwrap_or_default();
    let binding = Binding::new(&request.name, request.arguments.as_ref(), &client);
    let parked = match &request.request_state {
        Some(state) => {
            let (id, parked) = rounds.resume(state, &binding)?;
            parked.reroute(Route::of(&context));
            rounds.answer(&id, parked, &request.input_responses.unwrap_or_default())?
        }
        None => {
            let capabilities = context.meta.client_capabilities().unwrap_or_default();
            let (asker, asks) = input_required::asker(capabilities, Route::of(&context));
            let mut ctx = server.context(&context);
            // Approvals go to the client as input requests too.
            ctx.approver = crate::server::approver::ElicitationApprover::for_input(&asker)
                .map(|a| std::sync::Arc::new(a) as std::sync::Arc<dyn quiver_engine::permissions::Approver>);
            let upstream = server.upstream(&context, Some(std::sync::Arc::new(asker)));
            let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
            let (server, name) = (server.clone(), request.name.to_string());
            Parked::start(async move { server.dispatch(&name, args, ctx, upstream, true).await }, asks)
        }
    };
    rounds.drive(parked, &binding, &context.ct).await
}
