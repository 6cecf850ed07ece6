//! A deliberately badly behaved MCP server for quiver's client tests.
//!
//! It misbehaves on command, through tool calls (`crash`, `hang`, `freeze`,
//! `flood_stderr`, `flood_stdout`, `garbage`, ...) or at startup through
//! `QUIVER_TEST_MCP_START=crash|hang|garbage`. `QUIVER_TEST_MCP_EXTRA_TOOLS=N`
//! adds N filler tools; `QUIVER_TEST_MCP_ODD_NAMES=1` adds tools whose names
//! need sanitizing, cutting and hashing. `QUIVER_TEST_MCP_LOGGING=1` declares
//! logging, keeps the level `logging/setLevel` sets and adds `log_each_level`
//! (`=hang`: the same, but `logging/setLevel` is never answered).
//! `QUIVER_TEST_MCP_ASKING=1` adds the prompt `greeting` and the resource
//! `test://profile`, which ask their client's name (`elicitation/create`)
//! before they answer, as `ask_client` does in a call.
//! `QUIVER_TEST_MCP_STATELESS_ONLY=1` speaks MCP 2026-07-28 alone: it
//! refuses `initialize` (-32022), as a server of an SDK that dropped the
//! session revisions does.
//! Serves stdio by default, or
//! streamable HTTP with `--http ADDR` (prints `listening on http://ADDR/mcp`
//! to stderr).
//!
//! Built with rmcp's server side, i.e. by the SDK quiver's client also uses;
//! the conformance of the client against servers nobody here wrote is checked
//! separately with `@modelcontextprotocol/server-everything`.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
#[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

#[derive(Clone, Default)]
struct Misbehaver {
    /// Set by `change_tools`: one more tool appears and the client is told.
    grown: Arc<AtomicBool>,
    /// The level the client last set (`QUIVER_TEST_MCP_LOGGING`), "none" before.
    level: Arc<std::sync::Mutex<String>>,
}

fn logging() -> bool {
    std::env::var_os("QUIVER_TEST_MCP_LOGGING").is_some()
}

fn asking() -> bool {
    std::env::var_os("QUIVER_TEST_MCP_ASKING").is_some()
}

fn tool(name: &str, description: &str, schema: Value, annotations: Option<Value>) -> Option<Tool> {
    let mut t = json!({"name": name, "description": description, "inputSchema": schema});
    if let Some(a) = annotations {
        t["annotations"] = a;
    }
    serde_json::from_value(t).ok()
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn int_arg(name: &str, what: &str) -> Value {
    json!({"type": "object", "properties": {name: {"type": "integer", "description": what}}})
}

impl Misbehaver {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                "echo",
                "Echo back the text you send.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                None,
            ),
            tool(
                "add",
                "Add two integers; the sum comes back as structured content.",
                json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
                None,
            ),
            tool("pid", "Report this server's process id.", no_args(), Some(json!({"readOnlyHint": true}))),
            tool("wipe", "Pretend to delete everything.", no_args(), Some(json!({"destructiveHint": true}))),
            tool("slow", "Answer after `ms` milliseconds.", int_arg("ms", "delay"), None),
            tool("hang", "Never answer (the server stays responsive).", no_args(), None),
            tool(
                "freeze",
                "Block the whole server for `ms` milliseconds (it answers nothing, not even pings).",
                int_arg("ms", "how long"),
                None,
            ),
            tool("crash", "Exit the process at once with a message on stderr.", int_arg("code", "exit code"), None),
            tool("flood_stderr", "Write `bytes` bytes to stderr, then answer.", int_arg("bytes", "how much"), None),
            tool(
                "flood_stdout",
                "Write `lines` lines of non-JSON junk to stdout, then answer.",
                int_arg("lines", "how many"),
                None,
            ),
            tool("garbage", "Answer with a malformed JSON-RPC response, then nothing.", no_args(), None),
            tool("big", "Answer with `bytes` bytes of text.", int_arg("bytes", "how much"), None),
            tool("fail", "Answer with an isError result.", no_args(), None),
            tool("image", "Answer with a tiny PNG and a text resource.", no_args(), None),
            tool("change_tools", "Add the tool `added_later` and send tools/list_changed.", no_args(), None),
            tool(
                "ask_client",
                "While it runs, log, report progress, and ask the client for its roots, a sampled answer and an \
                 elicited name; answers with what the client said.",
                no_args(),
                None,
            ),
        ];
        if logging() {
            tools.push(tool(
                "log_each_level",
                "Send one log message at each of debug, info, warning and error (whatever level was set), then \
                 answer with the level the client last set.",
                no_args(),
                None,
            ));
        }
        if self.grown.load(Ordering::SeqCst) {
            tools.push(tool("added_later", "A tool that appeared after the first listing.", no_args(), None));
        }
        let extra: usize = std::env::var("QUIVER_TEST_MCP_EXTRA_TOOLS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        for i in 0..extra {
            tools.push(tool(&format!("extra_{i}"), &format!("Filler tool number {i}."), no_args(), None));
        }
        if std::env::var("QUIVER_TEST_MCP_ODD_NAMES").is_ok() {
            let long = "x".repeat(90);
            for name in ["dot.name", "dot_name", "slash/name", &format!("{long}1"), &format!("{long}2")] {
                tools.push(tool(name, "A tool with an awkward name.", no_args(), None));
            }
        }
        tools.into_iter().flatten().collect()
    }
}

fn text(s: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(s.into())]).into()
}

fn int(args: &Map<String, Value>, key: &str, default: u64) -> u64 {
    args.get(key).and_then(Value::as_u64).unwrap_or(default)
}

fn raw_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

impl ServerHandler for Misbehaver {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        if logging() {
            capabilities.logging = Some(Default::default());
        }
        if asking() {
            capabilities.prompts = Some(Default::default());
            capabilities.resources = Some(Default::default());
        }
        ServerConfig::new(capabilities).with_server_info(Implementation::new("quiver-test-mcp", "0.0.1"))
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        if std::env::var_os("QUIVER_TEST_MCP_STATELESS_ONLY").is_some() {
            return std::borrow::Cow::Owned(vec![rmcp::model::ProtocolVersion::V_2026_07_28]);
        }
        std::borrow::Cow::Borrowed(rmcp::model::ProtocolVersion::KNOWN_VERSIONS)
    }

    #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if std::env::var("QUIVER_TEST_MCP_LOGGING").as_deref() == Ok("hang") {
            std::future::pending::<()>().await; // never answers setLevel
        }
        let level = serde_json::to_value(request.level).ok().and_then(|v| v.as_str().map(String::from));
        if let Ok(mut current) = self.level.lock() {
            *current = level.unwrap_or_default();
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        let prompts =
            if asking() { json!([{"name": "greeting", "description": "Asks your name first."}]) } else { json!([]) };
        shaped(json!({"prompts": prompts}))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        if !asking() || request.name != "greeting" {
            return Err(ErrorData::invalid_params(format!("no prompt named {}", request.name), None));
        }
        let name = ask_name(&context).await?;
        let result: rmcp::model::GetPromptResult = shaped(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": format!("Greet {name}.")}}]}))?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let resources = if asking() { json!([{"uri": PROFILE, "name": "profile"}]) } else { json!([]) };
        shaped(json!({"resources": resources}))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        if !asking() || request.uri != PROFILE {
            return Err(ErrorData::resource_not_found(format!("no resource {}", request.uri), None));
        }
        let name = ask_name(&context).await?;
        let result: rmcp::model::ReadResourceResult =
            shaped(json!({"contents": [{"uri": PROFILE, "mimeType": "text/plain", "text": format!("name: {name}")}]}))?;
        Ok(result.into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            // With QUIVER_TEST_MCP_ECHO_META set, a second block shows the
            // request's `_meta` as this server got it (what a gateway added).
            "echo" if std::env::var_os("QUIVER_TEST_MCP_ECHO_META").is_some() => {
                let echoed = args.get("text").and_then(Value::as_str).unwrap_or("").to_string();
                let meta = serde_json::to_string(&context.meta).unwrap_or_default();
                Ok(CallToolResult::success(vec![ContentBlock::text(echoed), ContentBlock::text(meta)]).into())
            }
            "echo" => Ok(text(args.get("text").and_then(Value::as_str).unwrap_or(""))),
            "add" => {
                let sum = args.get("a").and_then(Value::as_i64).unwrap_or(0)
                    + args.get("b").and_then(Value::as_i64).unwrap_or(0);
                let mut result = CallToolResult::success(vec![]);
                result.structured_content = Some(json!({"sum": sum}));
                Ok(result.into())
            }
            "pid" => Ok(text(std::process::id().to_string())),
            "wipe" => Ok(text("wiped (not really)")),
            "slow" => {
                tokio::time::sleep(Duration::from_millis(int(&args, "ms", 100))).await;
                Ok(text("done"))
            }
            "hang" => {
                std::future::pending::<()>().await;
                Ok(text("unreachable"))
            }
            "freeze" => {
                // Said on stderr first, so a test can wait for the freeze itself.
                eprintln!("quiver-test-mcp: freezing");
                // On this single-threaded runtime, blocking the thread stops
                // everything: no reads, no pings answered.
                std::thread::sleep(Duration::from_millis(int(&args, "ms", 60_000)));
                Ok(text("thawed"))
            }
            "crash" => {
                eprintln!("quiver-test-mcp: crashing on purpose (boom)");
                std::process::exit(int(&args, "code", 3) as i32);
            }
            "flood_stderr" => {
                let bytes = int(&args, "bytes", 1 << 20) as usize;
                let line = "noise noise noise noise noise noise noise noise noise noise\n";
                let mut err = std::io::stderr().lock();
                let mut written = 0;
                while written < bytes {
                    let _ = err.write_all(line.as_bytes());
                    written += line.len();
                }
                let _ = writeln!(err, "flood done");
                Ok(text(format!("wrote {written} bytes to stderr")))
            }
            "flood_stdout" => {
                let lines = int(&args, "lines", 10_000);
                let mut junk = String::new();
                for i in 0..lines {
                    junk.push_str(&format!("this is not json {i} {{[\n"));
                }
                raw_stdout(junk.as_bytes());
                Ok(text(format!("wrote {lines} junk lines to stdout")))
            }
            "garbage" => {
                let id = serde_json::to_value(&context.id).unwrap_or(Value::Null);
                let bad = json!({"jsonrpc": "2.0", "id": id, "result": {"content": "this should be a list", "isError": "maybe"}});
                raw_stdout(format!("{bad}\n").as_bytes());
                std::future::pending::<()>().await;
                Ok(text("unreachable"))
            }
            "big" => Ok(text("y".repeat(int(&args, "bytes", 100_000) as usize))),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("the thing failed on purpose")]).into()),
            "image" => {
                let png =
                    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
                let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
                    {"type": "text", "text": "a picture:"},
                    {"type": "image", "data": png, "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "mem://note.txt", "mimeType": "text/plain", "text": "a note"}},
                ]))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                Ok(CallToolResult::success(blocks).into())
            }
            "change_tools" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text("tools changed"))
            }
            "added_later" => Ok(text("I am new")),
            "ask_client" => ask_client(&context).await,
            "log_each_level" if logging() => {
                #[allow(deprecated)] // logging: deprecated by SEP-2577, still in every session revision
                for level in [LoggingLevel::Debug, LoggingLevel::Info, LoggingLevel::Warning, LoggingLevel::Error] {
                    let data = serde_json::to_value(level).unwrap_or_default();
                    let _ =
                        context.peer.notify_logging_message(LoggingMessageNotificationParam::new(level, data)).await;
                }
                let level = self.level.lock().map(|l| l.clone()).unwrap_or_default();
                Ok(text(if level.is_empty() { "none".to_string() } else { level }))
            }
            other if other.starts_with("extra_") || other.contains("name") || other.starts_with("xxx") => {
                Ok(text(format!("called {other}")))
            }
            other => Err(ErrorData::invalid_params(format!("no tool named {other}"), None)),
        }
    }
}

/// `ask_client`: every kind of message a server sends its client during a
/// call, in a known order: log, progress, roots/list, sampling, elicitation,
/// progress, log, then the answer.
#[allow(deprecated)] // logging, roots and sampling: deprecated by SEP-2577, in every session revision
async fn ask_client(context: &RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
    use rmcp::model::ProgressNotificationParam;
    let peer = &context.peer;
    let failed = |what: &str, e: rmcp::ServiceError| ErrorData::internal_error(format!("{what} failed: {e}"), None);
    let log = |text: &str| LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(text));
    let progress = |n: f64| {
        context.meta.get_progress_token().map(|token| ProgressNotificationParam::new(token, n).with_total(2.0))
    };
    let _ = peer.notify_logging_message(log("asking the client")).await;
    if let Some(p) = progress(1.0) {
        let _ = peer.notify_progress(p).await;
    }
    let roots = peer.list_roots().await.map_err(|e| failed("roots/list", e))?;
    let sampling: rmcp::model::CreateMessageRequestParams = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "say something"}}], "maxTokens": 10}))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let sampled = peer.create_message(sampling).await.map_err(|e| failed("sampling/createMessage", e))?;
    let elicit: rmcp::model::ElicitRequestParams = serde_json::from_value(json!({"message": "your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let elicited = peer.create_elicitation(elicit).await.map_err(|e| failed("elicitation/create", e))?;
    if let Some(p) = progress(2.0) {
        let _ = peer.notify_progress(p).await;
    }
    let _ = peer.notify_logging_message(log("the client answered")).await;
    let said = json!({"roots": roots.roots.len(), "sampled": sampled.message.content, "elicited": elicited.content});
    Ok(text(said.to_string()))
}

/// The resource that asks its reader's name.
const PROFILE: &str = "test://profile";

/// A value of rmcp's type `T` from its JSON shape.
fn shaped<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// Asks the client its name (`elicitation/create`): the name, or
/// `(declined)` when it gave none.
async fn ask_name(context: &RequestContext<RoleServer>) -> Result<String, ErrorData> {
    let elicit: rmcp::model::ElicitRequestParams = shaped(json!({"message": "your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}))?;
    let elicited = context
        .peer
        .create_elicitation(elicit)
        .await
        .map_err(|e| ErrorData::internal_error(format!("elicitation/create failed: {e}"), None))?;
    let name = elicited.content.as_ref().and_then(|c| c.get("name")).and_then(Value::as_str);
    Ok(name.unwrap_or("(declined)").to_string())
}

async fn startup_misbehaviour() {
    match std::env::var("QUIVER_TEST_MCP_START").as_deref() {
        Ok("crash") => {
            eprintln!("quiver-test-mcp: cannot start: missing FAKE_API_KEY");
            std::process::exit(7);
        }
        Ok("hang") => {
            eprintln!("quiver-test-mcp: starting very slowly...");
            std::future::pending::<()>().await;
        }
        Ok("garbage") => {
            raw_stdout(b"Welcome to my server! This is not JSON-RPC.\n{\"jsonrpc\": \"2.0\", \"id\": 999}\n");
            std::future::pending::<()>().await;
        }
        _ => {}
    }
}

async fn serve_http(addr: &str) -> anyhow::Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let service = StreamableHttpService::new(
        || Ok(Misbehaver::default()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    startup_misbehaviour().await;
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--http") {
        let addr = args.get(pos + 1).map(String::as_str).unwrap_or("127.0.0.1:0");
        return serve_http(addr).await;
    }
    let server = Misbehaver::default().serve(rmcp::transport::stdio()).await?;
    server.waiting().await?;
    Ok(())
}
