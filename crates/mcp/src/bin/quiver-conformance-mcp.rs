//! A well-behaved MCP server implementing what the official conformance
//! suite's server scenarios (`@modelcontextprotocol/conformance@0.1.8
//! server`) expect: the `test_*` tools, the `test://` resources and template,
//! the `test_*` prompts, completion and logging.
//!
//! It exists to check quiver as a *gateway*: the suite runs against `quiver
//! mcp serve --transport http` with this server configured behind it
//! (`expose = "direct"`), so every scenario passes only if quiver forwards
//! what the server says unchanged. Built with rmcp's server side; serves stdio.
//!
//! After `resources/subscribe` of a URI it sends one
//! `notifications/resources/updated` for it (so the gateway's forwarding of
//! updates can be tested), and the tool `touch_resources` sends
//! `notifications/resources/list_changed` and `notifications/prompts/list_changed`.
//! `QUIVER_CONFORMANCE_EXTRA_TOOL=NAME` adds a tool called NAME (to test name
//! clashes of a directly exposed server).
//!
//! The `test_input_required_result_*` tools and prompt of the 2026-07-28
//! scenarios (SEP-2322) ask their client as a session's server does, by
//! requests of their own (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) mid-call: the gateway turns those into the
//! `InputRequiredResult` rounds a stateless client sees, with the
//! `requestState` it signs. The scenarios' own input keys (`user_name`, ...)
//! cannot cross a session, which has no such keys: the gateway names them.
// Logging, sampling and resource subscriptions are deprecated by SEP-2577
// (stateless revision) but are what the 0.1.8 suite's scenarios exercise.
#![allow(deprecated)]

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file with a header and four silent samples.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";

#[derive(Clone, Default)]
struct Conformance {
    /// The level the client set (`None`: everything is sent).
    level: Arc<Mutex<Option<LoggingLevel>>>,
}

fn from<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_args(names: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.to_string(), json!({"type": "string", "description": format!("The {n}")}))).collect();
    json!({"type": "object", "properties": properties, "required": names})
}

fn tools() -> Result<Vec<Tool>, ErrorData> {
    let plain = |name: &str, description: &str, schema: Value| json!({"name": name, "description": description, "inputSchema": schema});
    let mut tools: Vec<Tool> = from(json!([
        plain("test_simple_text", "Returns a simple text block.", no_args()),
        plain("test_image_content", "Returns a PNG image block.", no_args()),
        plain("test_audio_content", "Returns a WAV audio block.", no_args()),
        plain("test_embedded_resource", "Returns an embedded text resource.", no_args()),
        plain("test_multiple_content_types", "Returns text, an image and an embedded resource.", no_args()),
        plain("test_tool_with_logging", "Sends three log messages while it runs.", no_args()),
        plain("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", no_args()),
        plain("test_error_handling", "Always fails with isError.", no_args()),
        plain("test_sampling", "Asks the client's model through sampling.", string_args(&["prompt"])),
        plain("test_elicitation", "Asks the user through elicitation.", string_args(&["message"])),
        plain("test_elicitation_sep1034_defaults", "Elicits with defaults for every primitive type.", no_args()),
        plain("test_elicitation_sep1330_enums", "Elicits with every enum schema variant.", no_args()),
        plain("touch_resources", "Announces that the resource and prompt lists changed.", no_args()),
        plain("test_input_required_result_elicitation", "Asks the user's name, then greets them.", no_args()),
        plain("test_input_required_result_sampling", "Asks the client's model a question.", no_args()),
        plain("test_input_required_result_list_roots", "Asks the client's roots.", no_args()),
        plain("test_input_required_result_request_state", "Asks for a confirmation.", no_args()),
        plain("test_input_required_result_tampered_state", "Asks for a confirmation.", no_args()),
        plain("test_input_required_result_multiple_inputs", "Asks a name, a greeting and the roots at once.", no_args()),
        plain("test_input_required_result_multi_round", "Asks a name, then a color.", no_args()),
        plain("test_input_required_result_capabilities", "Asks only what the client can answer.", no_args()),
        // server-sse-polling (SEP-1699) calls it: the reference server closes
        // the call's HTTP stream mid-call to make the client resume. Behind
        // quiver over stdio there is no stream to close; it answers.
        plain("test_reconnection", "Answers; a server over HTTP would close the call's stream first.", no_args()),
        {
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false
            }
        },
    ]))?;
    if let Ok(name) = std::env::var("QUIVER_CONFORMANCE_EXTRA_TOOL") {
        tools.push(from(plain(&name, "A tool named on purpose like another.", no_args()))?);
    }
    Ok(tools)
}

fn text(s: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(s.into())]).into()
}

fn blocks(value: Value) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(from(value)?).into())
}

fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Conformance {
    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    async fn log(&self, peer: &rmcp::service::Peer<RoleServer>, message: &str) {
        let floor = *self.level.lock();
        if floor.is_some_and(|f| severity(f) > severity(LoggingLevel::Info)) {
            return;
        }
        let params = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message))
            .with_logger("quiver-conformance-mcp");
        let _ = peer.notify_logging_message(params).await;
    }

    async fn elicit(&self, context: &RequestContext<RoleServer>, params: Value) -> Result<CallToolResponse, ErrorData> {
        let answer = context.peer.create_elicitation(from(params)?).await;
        match answer {
            Ok(result) => {
                let content = serde_json::to_string(&result.content).unwrap_or_default();
                Ok(text(format!("Elicitation completed: action={:?}, content={content}", result.action)))
            }
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("elicitation failed: {e}"))]).into()),
        }
    }
}

type Peer = rmcp::service::Peer<RoleServer>;

/// The answer of the `test_input_required_result_*` tool `which` (its name
/// without the prefix), after what it asks its client; an error says what
/// failed.
async fn input_required(which: &str, peer: &Peer) -> Result<String, String> {
    Ok(match which {
        "elicitation" => {
            let name = elicited(peer, "What is your name?", "name", "string").await?;
            format!("Hello, {}!", name.as_str().unwrap_or("stranger"))
        }
        "sampling" => format!("The model said: {}", sampled(peer, "What is the capital of France?", 100).await?),
        "list_roots" => format!("Roots: {}", roots(peer).await?),
        "request_state" | "tampered_state" => {
            format!("state-ok: confirmed={}", elicited(peer, "Please confirm", "ok", "boolean").await?)
        }
        // At once: a stateless client is asked all three in one round.
        "multiple_inputs" => {
            let (name, greeting, listed) = tokio::join!(
                elicited(peer, "What is your name?", "name", "string"),
                sampled(peer, "Generate a greeting", 50),
                roots(peer),
            );
            format!("name={}, greeting={}, roots={}", name?, greeting?, listed?)
        }
        "multi_round" => {
            let name = elicited(peer, "Step 1: What is your name?", "name", "string").await?;
            let color = elicited(peer, "Step 2: What is your favorite color?", "color", "string").await?;
            format!("name={name}, color={color}")
        }
        // Elicitation first: the gateway refuses it when the client did not
        // declare it, and the tool asks what is left.
        "capabilities" => {
            let name = elicited(peer, "What is your name?", "name", "string").await;
            let answer = sampled(peer, "Say hello", 50).await;
            format!("name={name:?}, sampled={answer:?}")
        }
        other => return Err(format!("no tool named test_input_required_result_{other}")),
    })
}

/// Elicits one field `key` of JSON type `kind`: its value (null when declined).
async fn elicited(peer: &Peer, message: &str, key: &str, kind: &str) -> Result<Value, String> {
    let params: rmcp::model::ElicitRequestParams = from(json!({"message": message,
        "requestedSchema": {"type": "object", "properties": {key: {"type": kind}}, "required": [key]}}))
    .map_err(|e| e.message.to_string())?;
    let answer = peer.create_elicitation(params).await.map_err(|e| format!("elicitation/create failed: {e}"))?;
    Ok(answer.content.and_then(|c| c.get(key).cloned()).unwrap_or(Value::Null))
}

/// Asks the client's model `text`: the text it answered.
async fn sampled(peer: &Peer, text: &str, max_tokens: u32) -> Result<Value, String> {
    let params: rmcp::model::CreateMessageRequestParams = from(json!({"maxTokens": max_tokens,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}))
    .map_err(|e| e.message.to_string())?;
    let answer = peer.create_message(params).await.map_err(|e| format!("sampling/createMessage failed: {e}"))?;
    Ok(serde_json::to_value(&answer.message.content).unwrap_or_default()["text"].clone())
}

/// The client's roots, by URI.
async fn roots(peer: &Peer) -> Result<String, String> {
    let listed = peer.list_roots().await.map_err(|e| format!("roots/list failed: {e}"))?;
    Ok(listed.roots.iter().map(|root| root.uri.clone()).collect::<Vec<_>>().join(", "))
}

fn string_arg(request: &CallToolRequestParams, key: &str) -> String {
    request.arguments.as_ref().and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or_default().to_string()
}

const RESOURCES: &[(&str, &str, &str)] = &[
    ("test://static-text", "static-text", "text/plain"),
    ("test://static-binary", "static-binary", "image/png"),
    ("test://watched-resource", "watched-resource", "text/plain"),
];

impl ServerHandler for Conformance {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {},
        }))
        .unwrap_or_default();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("quiver-conformance-mcp", "0.0.1"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let image = json!({"type": "image", "data": PNG, "mimeType": "image/png"});
        match request.name.as_ref() {
            "test_simple_text" => Ok(text("This is a simple text response for testing.")),
            "test_reconnection" => Ok(text("Reconnection test completed successfully")),
            "test_image_content" => blocks(json!([image])),
            "test_audio_content" => blocks(json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}])),
            "test_embedded_resource" => blocks(json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}])),
            "test_multiple_content_types" => blocks(json!([
                {"type": "text", "text": "Multiple content types test:"},
                image,
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"}},
            ])),
            "test_tool_with_logging" => {
                self.log(&context.peer, "Tool execution started").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(&context.peer, "Tool processing data").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(&context.peer, "Tool execution completed").await;
                Ok(text("Tool with logging executed successfully"))
            }
            "test_tool_with_progress" => {
                let token = context.meta.get_progress_token();
                for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if let Some(token) = &token {
                        let params: ProgressNotificationParam =
                            from(json!({"progressToken": token, "progress": progress, "total": 100.0}))?;
                        let _ = context.peer.notify_progress(params).await;
                    }
                }
                Ok(text("Tool with progress executed successfully"))
            }
            "test_error_handling" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )])
            .into()),
            "test_sampling" => {
                let params = from(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": string_arg(&request, "prompt")}}],
                    "maxTokens": 100
                }))?;
                match context.peer.create_message(params).await {
                    Ok(answer) => {
                        let said = serde_json::to_value(&answer.message.content).unwrap_or_default();
                        let said =
                            said.get("text").and_then(Value::as_str).map(str::to_string).unwrap_or(said.to_string());
                        Ok(text(format!("LLM response: {said}")))
                    }
                    Err(e) => {
                        Ok(CallToolResult::error(vec![ContentBlock::text(format!("sampling failed: {e}"))]).into())
                    }
                }
            }
            "test_elicitation" => {
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}},
                    "required": ["username", "email"]});
                self.elicit(&context, json!({"message": string_arg(&request, "message"), "requestedSchema": schema}))
                    .await
            }
            "test_elicitation_sep1034_defaults" => {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}},
                    "required": []});
                self.elicit(&context, json!({"message": "Please review the defaults", "requestedSchema": schema})).await
            }
            "test_elicitation_sep1330_enums" => {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}]}}},
                    "required": []});
                self.elicit(&context, json!({"message": "Pick some options", "requestedSchema": schema})).await
            }
            "touch_resources" => {
                let _ = context.peer.notify_resource_list_changed().await;
                let _ = context.peer.notify_prompt_list_changed().await;
                Ok(text("announced"))
            }
            "json_schema_2020_12_tool" => Ok(text("schema tool called")),
            other if other.starts_with("test_input_required_result_") => {
                let which = other.trim_start_matches("test_input_required_result_");
                Ok(match input_required(which, &context.peer).await {
                    Ok(said) => text(said),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]).into(),
                })
            }
            other if std::env::var("QUIVER_CONFORMANCE_EXTRA_TOOL").is_ok_and(|extra| extra == other) => {
                Ok(text(format!("the extra tool {other}")))
            }
            other => Err(ErrorData::invalid_params(format!("no tool named {other}"), None)),
        }
    }

    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.level.lock() = Some(request.level);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources: Vec<Value> = RESOURCES
            .iter()
            .map(|(uri, name, mime)| json!({"uri": uri, "name": name, "description": format!("The {name} resource"), "mimeType": mime}))
            .collect();
        from(json!({"resources": resources}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        from(json!({"resourceTemplates": [{"uriTemplate": "test://template/{id}/data", "name": "template",
            "description": "Data for an id", "mimeType": "application/json"}]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let content = match uri {
            "test://static-text" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
            }
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => json!({"uri": uri, "mimeType": "text/plain", "text": "watched"}),
            _ => match uri.strip_prefix("test://template/").and_then(|rest| rest.strip_suffix("/data")) {
                Some(id) if !id.is_empty() && !id.contains('/') => {
                    let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    json!({"uri": uri, "mimeType": "application/json", "text": body.to_string()})
                }
                _ => {
                    return Err(ErrorData::resource_not_found(format!("no resource {uri}"), None));
                }
            },
        };
        let result: ReadResourceResult = from(json!({"contents": [content]}))?;
        Ok(result.into())
    }

    #[allow(deprecated)] // resources/subscribe: legacy-only, still in every session revision
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let peer = context.peer.clone();
        // After the answer, so the client knows the subscription when the update comes.
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let _ = peer.notify_resource_updated(rmcp::model::ResourceUpdatedNotificationParam::new(request.uri)).await;
        });
        Ok(())
    }

    #[allow(deprecated)] // resources/unsubscribe: legacy-only, still in every session revision
    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arg = |name: &str| json!({"name": name, "description": format!("The {name}"), "required": true});
        from(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments", "arguments": [arg("arg1"), arg("arg2")]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt embedding a resource", "arguments": [arg("resourceUri")]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_input_required_result_prompt", "description": "Asks the context to use first"},
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arg = |key: &str| {
            request.arguments.as_ref().and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or_default().to_string()
        };
        let user = |content: Value| json!({"role": "user", "content": content});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => {
                json!([user(json!({"type": "text", "text": "This is a simple prompt for testing."}))])
            }
            "test_prompt_with_arguments" => json!([user(json!({"type": "text",
                "text": format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))}))]),
            "test_prompt_with_embedded_resource" => json!([
                user(json!({"type": "resource", "resource": {"uri": arg("resourceUri"), "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}})),
                user(json!({"type": "text", "text": "Please process the embedded resource above."})),
            ]),
            "test_prompt_with_image" => json!([
                user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                user(json!({"type": "text", "text": "Please analyze the image above."})),
            ]),
            "test_input_required_result_prompt" => {
                let asked = elicited(&context.peer, "What context should the prompt use?", "context", "string").await;
                let context = asked.map_err(|e| ErrorData::internal_error(e, None))?;
                json!([user(json!({"type": "text", "text": format!("Use this context: {context}")}))])
            }
            other => return Err(ErrorData::invalid_params(format!("no prompt named {other}"), None)),
        };
        let result: GetPromptResult = from(json!({"messages": messages}))?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let candidates = ["paris", "park", "party", "test", "testing"];
        let typed = request.argument.value.as_str();
        let values: Vec<&str> = candidates.iter().copied().filter(|c| c.starts_with(typed)).collect();
        from(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let server = Conformance::default().serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
