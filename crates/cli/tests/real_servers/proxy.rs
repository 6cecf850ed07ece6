//! The test-side pass-through in front of the llama server: plain HTTP/1.1
//! on loopback, one request per connection. It forwards every request as is,
//! except that a Chat Completions body gets the `tool_choice` the running
//! scenario planned (the 135M model would not pick a tool on its own, so the
//! round trips are deterministic), `temperature: 0`, and for a planned text
//! answer `stop` sequences that end it early. Parsing, streaming,
//! validation and ids stay the real server's. The answer streams back as it
//! arrives (`connection: close` delimits it), so Ctrl-C mid-stream is real.

use std::collections::{BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the next Chat Completions request gets as `tool_choice`.
#[derive(Debug, Clone, PartialEq)]
pub enum Force {
    /// Leave the request alone.
    Pass,
    /// Name this function.
    Tool(String),
    /// Name the first tool that the session's first request did not have
    /// (one `tool_search` loaded).
    Loaded,
    /// `tool_choice: "none"`, and `stop` at the first line or sentence end:
    /// answer in text, briefly (the 135M model rambles to `max_tokens`
    /// otherwise, which quiver rightly reports as no answer).
    Text,
    /// `tool_choice: "none"` and nothing else: a text answer as long as the model makes it.
    LongText,
    /// Name this function with these `parameters` in its definition, added
    /// when the request lacks it: the server's grammar for a forced call
    /// follows the schema, so the 135M model's arguments are ones the test
    /// can predict (an `enum` of one value) or a name quiver keeps only as
    /// an alias (never in `tools`).
    Shaped(String, Value),
}

/// One forwarded exchange.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    /// The body as forwarded (after the plan's change).
    pub body: Value,
    pub status: u16,
}

#[derive(Default)]
struct Plan {
    queue: VecDeque<Force>,
    /// The tool names of the first request since the plan was set.
    first_tools: Option<BTreeSet<String>>,
    seen: Vec<Seen>,
    /// The message count of the last parent request and its force: a
    /// request with as many messages is that request sent again (quiver
    /// repeating it unstreamed, or repaired) and gets the same force.
    last: Option<(usize, Force)>,
}

pub struct Proxy {
    pub addr: SocketAddr,
    plan: Arc<Mutex<Plan>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(plan: &Mutex<Plan>) -> std::sync::MutexGuard<'_, Plan> {
    plan.lock().unwrap_or_else(|p| p.into_inner())
}

impl Proxy {
    pub async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let plan = Arc::new(Mutex::new(Plan::default()));
        // A fresh upstream connection per request: llama-cpp-python may drop a
        // kept-alive one after a failed stream, which a pool would reuse.
        let client = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(0).build().unwrap();
        let (upstream, shared) = (upstream.trim_end_matches('/').to_string(), Arc::clone(&plan));
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (upstream, plan, client) = (upstream.clone(), Arc::clone(&shared), client.clone());
                tokio::spawn(async move {
                    let _ = handle(socket, &upstream, &plan, &client).await;
                });
            }
        });
        Proxy { addr, plan, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `tool_choice` of the next chat requests, in order (then `Pass`).
    pub fn plan(&self, forces: impl IntoIterator<Item = Force>) {
        let mut plan = lock(&self.plan);
        plan.queue = forces.into_iter().collect();
        plan.first_tools = None;
        plan.last = None;
    }

    /// Every exchange so far.
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.plan).seen.clone()
    }

    /// The chat requests since `from` (an index into `seen`).
    pub fn chats_since(&self, from: usize) -> Vec<Seen> {
        self.seen().into_iter().skip(from).filter(|s| s.path.ends_with("/chat/completions")).collect()
    }
}

fn tool_names(body: &Value) -> BTreeSet<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Whether a chat body is a sub-agent's: its system prompt is a role's
/// ("You are an explore sub-agent: ...").
pub fn is_subagent_request(body: &Value) -> bool {
    body.pointer("/messages/0/content").and_then(Value::as_str).is_some_and(|s| s.contains(" sub-agent: "))
}

/// The planned change to a chat body.
fn rewrite(plan: &Mutex<Plan>, body: &mut Value) {
    let mut plan = lock(plan);
    let tools = tool_names(body);
    if plan.first_tools.is_none() {
        plan.first_tools = Some(tools.clone());
    }
    if body.get("temperature").is_none() {
        body["temperature"] = json!(0);
    }
    // A sub-agent's requests (its own system prompt) answer in text and leave
    // the plan to the parent, whose requests interleave with them.
    let count = body["messages"].as_array().map_or(0, Vec::len);
    let force = if is_subagent_request(body) {
        Force::Text
    } else if let Some((_, again)) = plan.last.as_ref().filter(|(n, _)| *n == count) {
        again.clone()
    } else {
        let next = plan.queue.pop_front().unwrap_or(Force::Pass);
        plan.last = Some((count, next.clone()));
        next
    };
    let named = |name: &str| json!({"type": "function", "function": {"name": name}});
    match force {
        Force::Pass => {}
        Force::LongText => body["tool_choice"] = json!("none"),
        Force::Text => {
            body["tool_choice"] = json!("none");
            body["stop"] = json!(["\n", ". "]);
        }
        Force::Tool(name) => body["tool_choice"] = named(&name),
        Force::Shaped(name, parameters) => {
            let function = json!({"name": name, "description": name, "parameters": parameters});
            let tools = body["tools"].as_array_mut();
            match tools.and_then(|t| t.iter_mut().find(|t| t.pointer("/function/name") == Some(&json!(name)))) {
                Some(tool) => tool["function"]["parameters"] = function["parameters"].clone(),
                None => {
                    if !body["tools"].is_array() {
                        body["tools"] = json!([]);
                    }
                    if let Some(tools) = body["tools"].as_array_mut() {
                        tools.push(json!({"type": "function", "function": function}));
                    }
                }
            }
            body["tool_choice"] = named(&name);
        }
        Force::Loaded => {
            let first = plan.first_tools.clone().unwrap_or_default();
            if let Some(name) = tools.iter().find(|t| !first.contains(*t)) {
                body["tool_choice"] = named(name);
            }
        }
    }
}

async fn handle(
    mut socket: TcpStream,
    upstream: &str,
    plan: &Mutex<Plan>,
    client: &reqwest::Client,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let (method, path) =
        (request_line.next().unwrap_or("GET").to_string(), request_line.next().unwrap_or("/").to_string());
    let mut headers = reqwest::header::HeaderMap::new();
    let mut length = 0usize;
    for line in lines.filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "content-length" {
            length = value.parse().unwrap_or(0);
        }
        if ["authorization", "x-api-key", "anthropic-version", "content-type", "accept"].contains(&name.as_str())
            && let (Ok(n), Ok(v)) = (reqwest::header::HeaderName::from_bytes(name.as_bytes()), value.parse())
        {
            headers.insert(n, v);
        }
    }
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let mut json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if method == "POST" && path.ends_with("/chat/completions") && json.is_object() {
        rewrite(plan, &mut json);
        body = serde_json::to_vec(&json).unwrap_or(body);
    }
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let sent = client.request(method, format!("{upstream}{path}")).headers(headers).body(body).send().await;
    let mut resp = match sent {
        Ok(resp) => resp,
        Err(e) => {
            let text = format!("pass-through: upstream failed: {e}");
            let head = format!(
                "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                text.len()
            );
            socket.write_all(head.as_bytes()).await?;
            return socket.write_all(text.as_bytes()).await;
        }
    };
    let status = resp.status();
    lock(plan).seen.push(Seen { path: path.clone(), body: json, status: status.as_u16() });
    let content_type = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    socket.write_all(head.as_bytes()).await?;
    while let Ok(Some(bytes)) = resp.chunk().await {
        socket.write_all(&bytes).await?;
        socket.flush().await?;
    }
    socket.shutdown().await
}
