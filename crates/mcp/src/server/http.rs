//! Streamable HTTP transport at `/mcp`: rmcp's tower service behind axum, with
//! the guards a local tool server needs.
//!
//! - Loopback by default: quiver's tools read and write the workspace and run
//!   shell commands, so another machine must not reach them by accident. A
//!   non-loopback address needs `--allow-remote`.
//! - `Origin` checked on every request: a web page the user visits can make the
//!   browser POST to `127.0.0.1` (and DNS rebinding can make a foreign name point
//!   there). Browsers always send `Origin` on such requests, so a non-local
//!   origin gets 403. Non-browser clients send none and pass.
//! - Optional bearer token: 401 without it.
//! - Each HTTP session (`Mcp-Session-Id`) gets its own [`QuiverServer`], hence
//!   its own quiver session: loads never leak between clients.
//! - Connection admission, header and body deadlines, bounded buffers: see
//!   `http_conn.rs` ([`HttpLimits`]).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, bail};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::call_streams::CallStreams;
use super::handler::{QuiverServer, Surface};
use super::http_calls::Lanes;

#[path = "http_conn.rs"]
mod conn;
pub use conn::HttpLimits;
use conn::{Admission, Ticket};

/// The header naming a request's MCP session (streamable HTTP).
const SESSION_ID_HEADER: &str = "mcp-session-id";

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// `host:port`; `None` is `127.0.0.1:0` (an ephemeral loopback port).
    pub listen: Option<String>,
    /// Allow a non-loopback listen address.
    pub allow_remote: bool,
    /// Required `Authorization: Bearer` value, if any.
    pub token: Option<String>,
}

/// A bound, not yet running, HTTP server: bind first so the caller can print
/// the real port (with `:0` the OS picks it) before serving.
pub struct HttpServer {
    listener: TcpListener,
    router: Router,
    addr: SocketAddr,
    /// Ends every MCP session (and its open SSE streams) on shutdown, which a
    /// graceful HTTP shutdown would otherwise wait on forever.
    /// (A closure because rmcp does not re-export its token type.)
    end_sessions: Box<dyn FnOnce() + Send + Sync>,
    admission: Arc<Admission>,
    lanes: Arc<Lanes>,
}

impl HttpServer {
    pub async fn bind(surface: Arc<Surface>, options: HttpOptions) -> anyhow::Result<Self> {
        Self::bind_with_limits(surface, options, HttpLimits::default()).await
    }

    pub async fn bind_with_limits(
        surface: Arc<Surface>,
        options: HttpOptions,
        limits: HttpLimits,
    ) -> anyhow::Result<Self> {
        let listen = options.listen.as_deref().unwrap_or("127.0.0.1:0");
        let addr = resolve(listen).await?;
        if !addr.ip().is_loopback() && !options.allow_remote {
            bail!(
                "refusing to listen on {addr}: it is not a loopback address, and quiver's tools can change files \
                 and run commands. Pass --allow-remote (and set a token) if you really mean it"
            );
        }
        if !addr.ip().is_loopback() && options.token.is_none() {
            tracing::warn!(%addr, "listening on a non-loopback address without a bearer token");
        }
        let listener = TcpListener::bind(addr).await.with_context(|| format!("binding {addr}"))?;
        let addr = listener.local_addr().context("reading the bound address")?;

        // A stateless (2026-07-28) request whose answer is one message gets
        // it as plain JSON, not an SSE stream (rmcp consults this only for
        // those; a session's requests are answered as before).
        let mut config = StreamableHttpServerConfig::default().with_json_response(true);
        if options.allow_remote {
            // rmcp's own Host check only knows loopback names; a remote
            // deployment is reached under names we cannot list here.
            config = config.disable_allowed_hosts();
        }
        let token = config.cancellation_token.clone();
        let end_sessions = Box::new(move || token.cancel());
        // One set of verbatim slots for every session: the layer below fills
        // them into whichever response carries their placeholder.
        let verbatim = Arc::new(super::verbatim::VerbatimResults::default());
        let slots = Arc::clone(&verbatim);
        // Sessions end when idle by `call_streams`' sweep, which also sees
        // the calls rmcp never does (`http_calls`).
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = None;
        let sessions = Arc::new(CallStreams::new(manager));
        tokio::spawn(CallStreams::sweep_idle(Arc::downgrade(&sessions), limits.session_idle_timeout));
        let stateless = QuiverServer::new(surface.clone()).with_verbatim_results(Arc::clone(&verbatim));
        let lanes = Arc::new(Lanes::new(
            Arc::clone(&sessions),
            Arc::clone(&verbatim),
            options.allow_remote,
            stateless,
            config.cancellation_token.clone(),
        ));
        let handler_lanes: Arc<dyn super::handler::ArmLane> = Arc::clone(&lanes) as _;
        let service = StreamableHttpService::new(
            move || {
                Ok(QuiverServer::new(surface.clone())
                    .with_verbatim_results(Arc::clone(&slots))
                    .with_lanes(Arc::clone(&handler_lanes)))
            },
            sessions.clone(),
            config,
        );
        let admission = Admission::new(limits);
        let guard =
            Arc::new(Guard { token: options.token, admission: admission.clone(), sessions, lanes: Arc::clone(&lanes) });
        let router = Router::new()
            .route_service(MCP_PATH, service)
            // Inside the verbatim layer: that one fills placeholders into a
            // plain body as into an SSE line.
            .layer(middleware::from_fn(super::http_plain::answer_plainly))
            .layer(middleware::from_fn_with_state(verbatim, super::http_verbatim::substitute))
            .layer(middleware::from_fn(super::http_bad_body::answer_unreadable))
            .layer(middleware::from_fn_with_state(guard, check_request));
        Ok(HttpServer { listener, router, addr, end_sessions, admission, lanes })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The listener's call lane (`http_calls`): how many calls it answered.
    pub fn lanes(&self) -> Arc<Lanes> {
        Arc::clone(&self.lanes)
    }

    /// `http://ADDR/mcp`
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Serves until the process ends.
    pub async fn run(self) -> anyhow::Result<()> {
        self.run_until(std::future::pending()).await
    }

    /// Serves until `shutdown` completes, then lets in-flight requests finish.
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let end_sessions = self.end_sessions;
        let shutdown = async move {
            shutdown.await;
            end_sessions();
        };
        conn::serve(self.listener, self.router, self.admission, shutdown).await;
        Ok(())
    }
}

async fn resolve(listen: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(addr) = listen.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let mut addrs = tokio::net::lookup_host(listen)
        .await
        .with_context(|| format!("--listen `{listen}` is not a host:port address"))?;
    addrs.next().with_context(|| format!("--listen `{listen}` resolves to no address"))
}

struct Guard {
    token: Option<String>,
    admission: Arc<Admission>,
    sessions: Arc<CallStreams<LocalSessionManager>>,
    lanes: Arc<Lanes>,
}

async fn check_request(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Err(origin) = origin_allowed(request.headers()) {
        tracing::warn!(%origin, "refused a request from a non-local Origin");
        return (
            StatusCode::FORBIDDEN,
            format!("Origin `{origin}` is not allowed: quiver only accepts local origins\n"),
        )
            .into_response();
    }
    if let Some(expected) = &guard.token
        && !bearer_matches(request.headers(), expected)
    {
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "missing or wrong bearer token\n")
            .into_response();
    }
    // Past both checks: this connection keeps its slot (see `http_conn.rs`).
    if let Some(ticket) = request.extensions().get::<Arc<Ticket>>() {
        ticket.authenticated();
    }
    if request.method() != axum::http::Method::POST {
        let ends_session = request.method() == axum::http::Method::DELETE;
        let mut response = next.run(request).await;
        // rmcp answers a session's DELETE with 202 Accepted, though the
        // session is already closed. Both SDKs' own servers answer 200, and
        // the Python SDK's client (mcp 2.3.0) takes anything but 200, 204 or
        // 405 for a failed termination and warns so on every close.
        if ends_session && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    let at_session_cap = !request.headers().contains_key(SESSION_ID_HEADER)
        && guard.sessions.live_sessions() >= guard.admission.limits().max_sessions;
    // The whole body within the deadline, however it trickles; rmcp then
    // parses it from memory (and still enforces its own size limit).
    let (parts, body) = request.into_parts();
    match conn::read_body(body, guard.admission.limits().body_timeout).await {
        // An `initialize` (a POST without a session id that starts one) at
        // the cap is refused here, not in rmcp, so the client gets a status it
        // can act on; concurrent starts that pass together may overshoot the
        // cap by their number. A stateless (2026-07-28) request starts none.
        Some(Ok(bytes)) if at_session_cap && starts_session(&bytes) => {
            let max_sessions = guard.admission.limits().max_sessions;
            let peer = request_peer(&parts.extensions);
            guard.admission.note_refusal("refused a new MCP session (503): the session cap is reached", peer);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                format!("{max_sessions} MCP sessions are open, the most this server keeps; retry when one ends\n"),
            )
                .into_response()
        }
        Some(Ok(bytes)) => match guard.lanes.take(&parts, &bytes) {
            Some(taken) => taken.response().await,
            None => next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await,
        },
        Some(Err(_)) => (StatusCode::BAD_REQUEST, "the request body could not be read\n").into_response(),
        None => {
            let peer = request_peer(&parts.extensions);
            guard.admission.note_refusal("cut a request body that did not arrive within the body timeout", peer);
            (StatusCode::REQUEST_TIMEOUT, [(header::CONNECTION, "close")], "the request body arrived too slowly\n")
                .into_response()
        }
    }
}

/// Whether a POST body without a session id would start a session: an
/// `initialize`, or what is no message at all (rmcp answers that, as before).
fn starts_session(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    match serde_json::from_slice::<Method>(body) {
        Ok(Method { method: Some(method) }) => method == "initialize",
        Ok(Method { method: None }) => false,
        Err(_) => true,
    }
}

/// The client address of a request, for logs (unspecified when unknown).
fn request_peer(extensions: &axum::http::Extensions) -> std::net::IpAddr {
    extensions.get::<Arc<Ticket>>().map_or(std::net::IpAddr::from([0, 0, 0, 0]), |t| t.peer())
}

/// No `Origin` (non-browser clients) passes; otherwise only an `http`/`https`
/// origin on a loopback host does. `Err` carries the refused value.
fn origin_allowed(headers: &HeaderMap) -> Result<(), String> {
    let Some(value) = headers.get(header::ORIGIN) else { return Ok(()) };
    let origin = value.to_str().map_err(|_| "<non-ASCII>".to_string())?;
    let rest =
        origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")).ok_or_else(|| origin.to_string())?;
    let host = if let Some(bracketed) = rest.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        rest.split([':', '/']).next().unwrap_or_default()
    };
    let local =
        host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if local { Ok(()) } else { Err(origin.to_string()) }
}

fn bearer_matches(headers: &HeaderMap, expected: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
    else {
        return false;
    };
    constant_time_eq(given.trim().as_bytes(), expected.as_bytes())
}

/// Compares without an early exit, so response timing does not reveal how
/// much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_origin(origin: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        h
    }

    #[test]
    fn local_origins_pass() {
        assert!(origin_allowed(&HeaderMap::new()).is_ok());
        for o in [
            "http://localhost:6274",
            "http://127.0.0.1",
            "https://localhost",
            "http://[::1]:3000",
            "http://127.0.0.2:1",
        ] {
            assert!(origin_allowed(&with_origin(o)).is_ok(), "{o}");
        }
    }

    #[test]
    fn foreign_origins_fail() {
        for o in ["http://evil.example", "http://localhost.evil.example", "null", "file://", "http://10.0.0.1:80"] {
            assert!(origin_allowed(&with_origin(o)).is_err(), "{o}");
        }
    }

    /// Read back from the accepted socket itself.
    #[tokio::test]
    async fn accepted_connections_have_nodelay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::net::TcpStream::connect(addr);
        let (accepted, client) = tokio::join!(conn::accept(&listener), client);
        let (stream, _) = accepted.unwrap();
        assert!(stream.nodelay().unwrap());
        drop(client);
    }

    #[test]
    fn bearer_token() {
        let mut h = HeaderMap::new();
        assert!(!bearer_matches(&h, "s3cret"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer s3cret"));
        assert!(bearer_matches(&h, "s3cret"));
        assert!(!bearer_matches(&h, "s3cre"));
    }
}
