//! HTTP capacity of `mcp serve --transport http` (the in-process server, with
//! its default limits): session starts and requests are all answered while an
//! idle-connection flood runs, and a client at each limit gets a status it
//! can act on, never a silent close.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::server_support::*;
use quiver_engine::Mode;
use quiver_mcp::server::http::HttpLimits;
use quiver_mcp::server::{HttpOptions, HttpServer, Surface};
use quiver_testkit::raw_http::exchange;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

const TOKEN: &str = "s3cret";
const SESSIONS: usize = 200;
const SEQUENTIAL: usize = 2_000;

async fn serve(surface: Arc<Surface>, limits: HttpLimits) -> (String, SocketAddr) {
    let options = HttpOptions { listen: None, allow_remote: false, token: Some(TOKEN.into()) };
    let server = HttpServer::bind_with_limits(surface, options, limits).await.unwrap();
    let (url, addr) = (server.url(), server.local_addr());
    tokio::spawn(server.run());
    (url, addr)
}

/// Both ends of every connection live in this process.
fn raise_open_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
}

/// What the server said on an idle connection within `wait`: `None` while it
/// stays open and silent, else everything it sent before closing (empty for
/// a silent close).
async fn said_within(stream: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut said = Vec::new();
    let mut buf = [0u8; 512];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) if said.is_empty() => return None,
            Err(_) | Ok(Ok(0)) | Ok(Err(_)) => return Some(String::from_utf8_lossy(&said).into_owned()),
            Ok(Ok(n)) => said.extend_from_slice(&buf[..n]),
        }
    }
}

/// One MCP client speaking raw JSON-RPC over its own kept-alive connection.
struct Session {
    http: reqwest::Client,
    url: String,
    id: Option<String>,
}

impl Session {
    fn new(url: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        Session { http, url: url.to_string(), id: None }
    }

    /// POSTs `body`; the status, the session id header and the body text,
    /// or what went wrong at the HTTP level.
    async fn post(&self, body: Value) -> Result<(u16, Option<String>, String), String> {
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(id) = &self.id {
            request = request.header("mcp-session-id", id);
        }
        let response = request.body(body.to_string()).send().await.map_err(|e| format!("{e:?}"))?;
        let status = response.status().as_u16();
        let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
        let text = response.text().await.map_err(|e| format!("reading the body: {e:?}"))?;
        Ok((status, id, text))
    }

    /// initialize + notifications/initialized + tools/list.
    async fn start(&mut self) -> Result<(), String> {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "capacity", "version": "0"}}});
        let (status, id, text) = self.post(init).await?;
        if status != 200 || !text.contains("\"result\"") {
            return Err(format!("initialize: {status} {text}"));
        }
        self.id = Some(id.ok_or("initialize: no mcp-session-id")?);
        let (status, _, text) = self.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
        if status != 202 {
            return Err(format!("initialized: {status} {text}"));
        }
        let (status, _, text) = self.post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await?;
        if status != 200 || !text.contains("\"tool_search\"") {
            return Err(format!("tools/list: {status} {text}"));
        }
        Ok(())
    }
}

/// Opens `n` connections that never send a byte.
async fn open_idle(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut idle = Vec::with_capacity(n);
    for _ in 0..n {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    idle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_starts_and_requests_are_all_answered_during_an_idle_flood() {
    raise_open_file_limit();
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits::default();
    let (url, addr) = serve(surface, limits.clone()).await;

    // More idle connections than the limits allow: the server keeps its
    // per-address share of them pending and answers the rest with a 429.
    let flood_size = limits.max_connections + 100;
    let mut flood = open_idle(addr, flood_size).await;
    // A refused connection's request is waited for (up to the grace) before
    // its status goes out, unless newer ones need its place.
    let wait = limits.first_byte_grace + Duration::from_secs(1);
    let said = futures::future::join_all(flood.iter_mut().map(|s| said_within(s, wait))).await;
    let held = said.iter().filter(|s| s.is_none()).count();
    let refused: Vec<&String> = said.iter().flatten().collect();
    // A newcomer finds the address at its cap (429); on a loaded machine the
    // flood may take longer than the grace to open, and then its oldest idle
    // connections are closed for the newest ones (503). Either way a status.
    for answer in &refused {
        assert!(
            answer.starts_with("HTTP/1.1 429 Too Many Requests\r\n")
                || answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "a flood connection saw: {answer:?}"
        );
        assert!(answer.contains("\r\nRetry-After: 1\r\n"), "{answer}");
    }
    eprintln!("idle flood of {flood_size}: {held} held pending, {} refused with a status", refused.len());
    assert_eq!(held, limits.max_pending_per_address);
    // A flood that holds its connections: by now they are past the grace.
    tokio::time::sleep(limits.first_byte_grace + Duration::from_millis(100)).await;

    let started = Instant::now();
    let starts = (0..SESSIONS).map(|_| {
        let url = url.clone();
        tokio::spawn(async move {
            let mut session = Session::new(&url);
            session.start().await.map(|()| session)
        })
    });
    let mut sessions = Vec::new();
    let mut failures = Vec::new();
    for outcome in futures::future::join_all(starts).await {
        match outcome.unwrap() {
            Ok(session) => sessions.push(session),
            Err(e) => failures.push(e),
        }
    }
    eprintln!("{SESSIONS} concurrent session starts: {} answered in {:?}", sessions.len(), started.elapsed());
    assert!(failures.is_empty(), "{} of {SESSIONS} session starts failed, first: {}", failures.len(), failures[0]);

    // More flood while one session's requests run; its connection, past the
    // token check, keeps its slot. One connection of our own, kept alive: a
    // pooling client (reqwest) may open a second one when a request follows
    // the last answer before the pool has the connection back, and a new
    // connection from the flood's address is rightly refused while the
    // flood's fresh connections fill that address's share.
    let session = &sessions[0];
    let authority = url.strip_prefix("http://").unwrap().split('/').next().unwrap().to_string();
    let mut kept = TcpStream::connect(&authority).await.unwrap();
    let headers = format!(
        "Authorization: Bearer {TOKEN}\r\nMcp-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {}\r\n",
        session.id.as_deref().unwrap()
    );
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let answer = exchange(&mut kept, &authority, &headers, &list).await;
    assert!(answer.status == 200 && answer.body.contains("\"tool_search\""), "tools/list: {}", answer.body);
    let flooding = tokio::spawn(async move {
        let mut more = Vec::new();
        for _ in 0..10 {
            more.extend(open_idle(addr, 50).await);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        more
    });
    let started = Instant::now();
    for i in 0..SEQUENTIAL {
        let call = json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
            "params": {"name": "say", "arguments": {"text": format!("n{i}")}}});
        let answer = exchange(&mut kept, &authority, &headers, &call).await;
        let (status, text) = (answer.status, answer.body);
        assert!(status == 200 && text.contains(&format!("\"n{i}\"")), "request {i}: {status} {text}");
    }
    let elapsed = started.elapsed();
    eprintln!("{SEQUENTIAL} sequential requests in {elapsed:?} ({:.0}/s)", SEQUENTIAL as f64 / elapsed.as_secs_f64());
    drop(flooding.await.unwrap());
    drop(flood);
}

/// An idle connection past the first-byte grace gives its slot to a
/// newcomer, and reads why before the close: `503` with `Retry-After`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_closed_for_a_newcomer_reads_503_first() {
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits {
        max_pending_per_address: 2,
        first_byte_grace: Duration::from_millis(200),
        ..HttpLimits::default()
    };
    let (_, addr) = serve(surface, limits.clone()).await;
    let mut idle = open_idle(addr, 2).await;
    tokio::time::sleep(limits.first_byte_grace + Duration::from_millis(100)).await;
    let mut newcomer = TcpStream::connect(addr).await.unwrap();

    let oldest = said_within(&mut idle[0], Duration::from_secs(5)).await;
    let oldest = oldest.expect("the oldest idle connection was neither answered nor closed");
    assert!(oldest.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "the evicted connection saw: {oldest:?}");
    assert!(oldest.contains("\r\nRetry-After: 1\r\n"), "{oldest}");
    assert!(oldest.ends_with("sent no request while others waited for a slot\r\n"), "{oldest}");
    // The other idle one and the newcomer keep their slots.
    assert_eq!(said_within(&mut idle[1], Duration::from_millis(300)).await, None);
    assert_eq!(said_within(&mut newcomer, Duration::from_millis(300)).await, None);
}

/// At the session cap a new session is refused with 503 and Retry-After;
/// ending one makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_past_the_cap_gets_503_until_one_ends() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (surface, _dir) = surface(Mode::Agent);
    let limits = HttpLimits { max_sessions: 2, ..HttpLimits::default() };
    let (url, _) = serve(surface, limits).await;
    let mut first = Session::new(&url);
    first.start().await.unwrap();
    Session::new(&url).start().await.unwrap();

    let mut third = Session::new(&url);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "third", "version": "0"}}});
    let response = third
        .http
        .post(&url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(response.text().await.unwrap().contains("2 MCP sessions are open"));
    // The open sessions still answer.
    let (status, _, _) = first.post(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await.unwrap();
    assert_eq!(status, 200);

    let ended = first
        .http
        .delete(&url)
        .bearer_auth(TOKEN)
        .header("mcp-session-id", first.id.as_deref().unwrap())
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    third.start().await.unwrap();
}

/// A client's own address floods the listener with connections
/// (held a while, then dropped) while the client makes 300 requests, each on
/// a new connection. A request may be turned away, but always with an HTTP
/// status: none may end as a reset with no status (79 of 300 did).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_flood_turns_requests_away_with_a_status_never_a_reset() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    raise_open_file_limit();
    let _ = rustls::crypto::ring::default_provider().install_default(); // reqwest is built without a provider
    let (surface, _dir) = surface(Mode::Agent);
    // A small per-address share and a long grace: the flood alone fills the
    // share with connections too young to be closed for a newcomer, so every
    // request's connection is refused, however fast this machine opens them.
    let limits =
        HttpLimits { max_pending_per_address: 32, first_byte_grace: Duration::from_secs(3), ..HttpLimits::default() };
    let (url, addr) = serve(surface, limits).await;
    let mut session = Session::new(&url);
    session.start().await.unwrap();
    // No connection reuse: every request goes through admission.
    session.http = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(0).build().unwrap();

    // A thread of its own (not the runtime the server and the client share,
    // where it would yield to them), bounded in connections, held
    // connections and time, stopping when told.
    let (stop, opened) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let flooding = std::thread::spawn({
        let (stop, opened) = (stop.clone(), opened.clone());
        move || {
            let (started, mut held) = (Instant::now(), std::collections::VecDeque::new());
            while !stop.load(Ordering::Relaxed)
                && opened.load(Ordering::Relaxed) < 40_000
                && started.elapsed() < Duration::from_secs(6)
            {
                // A short timeout: while the listener's backlog is full (the
                // server waits to accept, see `http_refusal`) a connect waits
                // a second for its SYN's retransmission; a new one keeps the
                // flood pressing.
                match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(20)) {
                    Ok(stream) => {
                        opened.fetch_add(1, Ordering::Relaxed);
                        held.push_back(stream);
                        if held.len() > 300 {
                            held.pop_front();
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
        }
    });
    // Past the per-address cap of pending connections before the requests start.
    let waited = Instant::now();
    while opened.load(Ordering::Relaxed) < 100 && waited.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let started = Instant::now();
    let (mut statuses, mut resets) = (std::collections::BTreeMap::<u16, usize>::new(), Vec::new());
    for batch in 0..30 {
        let pings = (0..10).map(|i| session.post(json!({"jsonrpc": "2.0", "id": batch * 10 + i, "method": "ping"})));
        for outcome in futures::future::join_all(pings).await {
            match outcome {
                Ok((status, _, _)) => *statuses.entry(status).or_default() += 1,
                Err(e) => resets.push(e),
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    flooding.join().unwrap();
    let opened = opened.load(Ordering::Relaxed);
    eprintln!(
        "300 requests in {:?} beside a flood of {opened} connections: statuses {statuses:?}, {} without a status",
        started.elapsed(),
        resets.len()
    );
    assert!(resets.is_empty(), "{} of 300 requests ended with no HTTP status, first: {}", resets.len(), resets[0]);
    for status in statuses.keys() {
        assert!([200, 429, 503].contains(status), "{statuses:?}");
    }
}
