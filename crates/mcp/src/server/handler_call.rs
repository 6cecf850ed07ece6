//! One `tools/call`, as both kinds of client make it: the call's upstream
//! side (what the relay sends to, see `relay`), dispatch and the result the
//! client gets, and a stateless (2026-07-28) call, which runs in a task of
//! its own so that it can wait for its client's input between requests
//! (`input_required`). `prompts/get` and `resources/read` of the servers
//! behind quiver are relayed the same way: a server may ask its client
//! something before it answers those too.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, InputRequiredResult,
    InputResponses, JsonObject, ReadResourceRequestParams, ReadResourceResponse, ServerResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::{QuiverServer, ToolContext, convert};
use crate::server::input_required::{self, Binding, Outcome, Parked, Round, Route};

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

/// What names a stateless request that may wait for its client (a state is
/// bound to it) and what its retry carries.
struct Asking<'a> {
    method: &'static str,
    /// The tool's or prompt's name, or the resource's URI.
    name: &'a str,
    arguments: Option<&'a JsonObject>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// A stateless request that may wait for its client's input (`tools/call`,
/// `prompts/get`, `resources/read`): a fresh one starts `run` in its own
/// task, given the request's tool context (its approver asks the client by
/// input requests too) and its upstream side; a retry that carries a
/// `requestState` resumes the call it names with its answers. Either way it
/// is run until it ends or asks its client again.
async fn stateless<F, Fut>(
    server: &QuiverServer,
    asking: Asking<'_>,
    context: &RequestContext<RoleServer>,
    run: F,
) -> Result<Round, McpError>
where
    F: FnOnce(QuiverServer, ToolContext, crate::relay::Upstream) -> Fut,
    Fut: std::future::Future<Output = Outcome> + Send + 'static,
{
    let rounds = Arc::clone(server.surface.input_rounds());
    let client = context.meta.client_info().map(|info| info.name).unwrap_or_default();
    let binding = Binding::new(asking.method, asking.name, asking.arguments, &client);
    let parked = match &asking.request_state {
        Some(state) => {
            let (id, parked) = rounds.resume(state, &binding)?;
            parked.reroute(Route::of(context));
            rounds.answer(&id, parked, &asking.input_responses.unwrap_or_default())?
        }
        None => {
            let capabilities = context.meta.client_capabilities().unwrap_or_default();
            let (asker, asks) = input_required::asker(capabilities, Route::of(context));
            let mut ctx = server.context(context);
            ctx.approver = crate::server::approver::ElicitationApprover::for_input(&asker)
                .map(|a| Arc::new(a) as Arc<dyn quiver_engine::permissions::Approver>);
            let upstream = server.upstream(context, Some(Arc::new(asker)));
            Parked::start(run(server.clone(), ctx, upstream), asks)
        }
    };
    Ok(rounds.drive(parked, &binding, &context.ct).await)
}

/// A round as the response of request kind `R`: `read` takes `R`'s result
/// out of rmcp's union, `stopped` is how `R` tells its client it stopped (a
/// tool in an error result, a prompt or a read as an error).
fn respond<R: From<InputRequiredResult>>(
    round: Round,
    read: impl FnOnce(ServerResult) -> Option<R>,
    stopped: impl FnOnce(String) -> Result<R, McpError>,
) -> Result<R, McpError> {
    match round {
        Round::Asked(asked) => Ok(asked.into()),
        Round::Stopped(why) => stopped(why),
        // The binding names the method, so a state only resumes a call of its own kind.
        Round::Ended(outcome) => read((*outcome)?)
            .ok_or_else(|| McpError::internal_error("a resumed call ended with another kind of result", None)),
    }
}

/// A prompt or a read that stopped before its outcome.
fn stopped_error<R>(why: String) -> Result<R, McpError> {
    Err(McpError::internal_error(why, None))
}

/// A stateless `tools/call`.
pub(in crate::server) async fn call_stateless(
    server: &QuiverServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let CallToolRequestParams { name, arguments, input_responses, request_state, .. } = request;
    let asking =
        Asking { method: "tools/call", name: &name, arguments: arguments.as_ref(), input_responses, request_state };
    let args = arguments.clone().map(Value::Object).unwrap_or(Value::Null);
    let tool = name.to_string();
    let round = stateless(server, asking, &context, |server, ctx, upstream| async move {
        Ok(ServerResult::CallToolResult(server.dispatch(&tool, args, ctx, upstream, true).await))
    })
    .await?;
    respond(
        round,
        |result| match result {
            ServerResult::CallToolResult(result) => Some(result.into()),
            _ => None,
        },
        |why| Ok(convert::error_result(why).into()),
    )
}

/// `prompts/get` of a server behind quiver. The server may ask the client
/// something before it answers, as in a tool call: a session's client on
/// this request's stream, a stateless client in `InputRequiredResult` rounds.
pub(in crate::server) async fn get_prompt(
    server: &QuiverServer,
    request: GetPromptRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    let passthrough = server.passthrough()?;
    if !super::super::stateless::is_stateless(&context) {
        let ctx = server.context(&context);
        return in_session(server, &context, passthrough.get_prompt(request, &ctx)).await.map(Into::into);
    }
    let GetPromptRequestParams { name, arguments, input_responses, request_state, .. } = request;
    let asking =
        Asking { method: "prompts/get", name: &name, arguments: arguments.as_ref(), input_responses, request_state };
    let mut params = GetPromptRequestParams::new(name.clone());
    params.arguments = arguments.clone();
    let round = stateless(server, asking, &context, |server, ctx, upstream| async move {
        let get = async { server.passthrough()?.get_prompt(params, &ctx).await };
        crate::relay::with_upstream(upstream, get).await.map(ServerResult::GetPromptResult)
    })
    .await?;
    let read = |result| match result {
        ServerResult::GetPromptResult(mut result) => {
            super::complete(&mut result.result_type, &context);
            Some(result.into())
        }
        _ => None,
    };
    respond(round, read, stopped_error)
}

/// `resources/read` of a server behind quiver, asked the way [`get_prompt`] is.
pub(in crate::server) async fn read_resource(
    server: &QuiverServer,
    request: ReadResourceRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, McpError> {
    let passthrough = server.passthrough()?;
    if !super::super::stateless::is_stateless(&context) {
        let ctx = server.context(&context);
        return in_session(server, &context, passthrough.read_resource(request, &ctx)).await.map(Into::into);
    }
    let ReadResourceRequestParams { uri, input_responses, request_state, .. } = request;
    let asking = Asking { method: "resources/read", name: &uri, arguments: None, input_responses, request_state };
    let params = ReadResourceRequestParams::new(uri.clone());
    let round = stateless(server, asking, &context, |server, ctx, upstream| async move {
        let read = async { server.passthrough()?.read_resource(params, &ctx).await };
        crate::relay::with_upstream(upstream, read).await.map(ServerResult::ReadResourceResult)
    })
    .await?;
    let read = |result| match result {
        ServerResult::ReadResourceResult(mut result) => {
            super::complete(&mut result.result_type, &context);
            Some(result.into())
        }
        _ => None,
    };
    respond(round, read, stopped_error)
}

/// A session client's prompt or read, relayed as its tool calls are (what the
/// server asks meanwhile goes on this request's stream), and given up (the
/// server's request cancelled) when the client cancels it.
async fn in_session<T>(
    server: &QuiverServer,
    context: &RequestContext<RoleServer>,
    request: impl std::future::Future<Output = Result<T, McpError>>,
) -> Result<T, McpError> {
    tokio::select! {
        result = crate::relay::with_upstream(server.upstream(context, None), request) => result,
        () = context.ct.cancelled() => Err(McpError::internal_error("cancelled by the client", None)),
    }
}
