//! OAuth 2.1 against a real (small, in-test) authorization server and a
//! protected MCP server on loopback HTTP: discovery from the 401 challenge,
//! dynamic registration, PKCE (the token endpoint checks the verifier),
//! scope from `WWW-Authenticate`, a 0600 token file, refresh of an expiring
//! token written back, and logout.
#![allow(clippy::unwrap_used)] // test setup helpers outside #[test] fns

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use quiver_mcp::McpManager;
use quiver_mcp::client::ToolCache;
use quiver_mcp::client::oauth::{self, Browser, FileTokenStore, LoginOptions};
use quiver_mcp::config::{ServerConfig, Transport};
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use sha2::{Digest, Sha256};

use crate::client_support::*;

/// What the authorization server has seen and issued.
#[derive(Default)]
struct Auth {
    base: String,
    /// code → (PKCE challenge, redirect_uri, scope)
    codes: HashMap<String, (String, String, String)>,
    access: Vec<String>,
    refresh: Vec<String>,
    registrations: usize,
    authorize_scopes: Vec<String>,
    grants: Vec<String>,
    issued: usize,
}

type Shared = Arc<Mutex<Auth>>;

fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url_pairs(std::str::from_utf8(body).unwrap())
}

fn url_pairs(query: &str) -> HashMap<String, String> {
    query.split('&').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (decode(k), decode(v))).collect()
}

fn decode(s: &str) -> String {
    let bytes = s.replace('+', " ").into_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap(), 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn json_response(status: StatusCode, value: serde_json::Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn body_bytes(req: Request) -> Vec<u8> {
    axum::body::to_bytes(req.into_body(), 1 << 20).await.unwrap().to_vec()
}

/// The protected MCP server: one tool.
#[derive(Clone)]
struct Secret;

impl ServerHandler for Secret {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let tool = Tool::new("secret", "The protected answer", Arc::new(schema.as_object().unwrap().clone()));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("42")]).into())
    }
}

async fn require_token(State(auth): State<Shared>, req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let base = auth.lock().unwrap().base.clone();
    let valid = token.is_some_and(|t| auth.lock().unwrap().access.contains(&t));
    if !valid {
        let challenge = format!(
            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
        );
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)], "").into_response();
    }
    next.run(req).await
}

async fn start() -> (Shared, String) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let auth: Shared = Arc::new(Mutex::new(Auth { base: base.clone(), ..Default::default() }));
    let mcp = StreamableHttpService::new(
        || Ok(Secret),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let protected = axum::Router::new()
        .route_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&auth), require_token));
    let a = Arc::clone(&auth);
    let router = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get({
                let base = base.clone();
                move || async move {
                    json_response(
                        StatusCode::OK,
                        serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                            "scopes_supported": ["mcp:tools", "mcp:admin"]}),
                    )
                }
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get({
                let base = base.clone();
                move || async move {
                    json_response(
                        StatusCode::OK,
                        serde_json::json!({
                            "issuer": base,
                            "authorization_endpoint": format!("{base}/authorize"),
                            "token_endpoint": format!("{base}/token"),
                            "registration_endpoint": format!("{base}/register"),
                            "response_types_supported": ["code"],
                            "grant_types_supported": ["authorization_code", "refresh_token"],
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["none"],
                        }),
                    )
                }
            }),
        )
        .route(
            "/register",
            axum::routing::post({
                let a = Arc::clone(&a);
                move |req: Request| async move {
                    let body: serde_json::Value = serde_json::from_slice(&body_bytes(req).await).unwrap();
                    a.lock().unwrap().registrations += 1;
                    json_response(
                        StatusCode::CREATED,
                        serde_json::json!({"client_id": "quiver-test-client", "redirect_uris": body["redirect_uris"],
                            "token_endpoint_auth_method": "none"}),
                    )
                }
            }),
        )
        .route(
            "/authorize",
            axum::routing::get({
                let a = Arc::clone(&a);
                move |req: Request| async move {
                    let q = url_pairs(req.uri().query().unwrap_or(""));
                    assert_eq!(q.get("code_challenge_method").map(String::as_str), Some("S256"), "PKCE S256");
                    if q.get("client_id").map(String::as_str) != Some("quiver-test-client") {
                        // An authorization server shows an error page to the user; no redirect.
                        return (StatusCode::BAD_REQUEST, "unknown client").into_response();
                    }
                    let mut auth = a.lock().unwrap();
                    auth.issued += 1;
                    let code = format!("code-{}", auth.issued);
                    let scope = q.get("scope").cloned().unwrap_or_default();
                    auth.authorize_scopes.push(scope.clone());
                    auth.codes.insert(code.clone(), (q["code_challenge"].clone(), q["redirect_uri"].clone(), scope));
                    let to = format!("{}?code={code}&state={}", q["redirect_uri"], q["state"]);
                    Response::builder()
                        .status(StatusCode::FOUND)
                        .header(header::LOCATION, to)
                        .body(Body::empty())
                        .unwrap()
                }
            }),
        )
        .route(
            "/token",
            axum::routing::post(move |req: Request| async move {
                let f = form(&body_bytes(req).await);
                let mut auth = a.lock().unwrap();
                auth.grants.push(f["grant_type"].clone());
                let scope = match f["grant_type"].as_str() {
                    "authorization_code" => {
                        let Some((challenge, redirect, scope)) = auth.codes.remove(&f["code"]) else {
                            return json_response(
                                StatusCode::BAD_REQUEST,
                                serde_json::json!({"error": "invalid_grant"}),
                            );
                        };
                        let verifier = f.get("code_verifier").cloned().unwrap_or_default();
                        if b64url(&Sha256::digest(verifier.as_bytes())) != challenge || f["redirect_uri"] != redirect {
                            return json_response(
                                StatusCode::BAD_REQUEST,
                                serde_json::json!({"error": "invalid_grant"}),
                            );
                        }
                        scope
                    }
                    "refresh_token" => {
                        if !auth.refresh.contains(&f["refresh_token"]) {
                            return json_response(
                                StatusCode::BAD_REQUEST,
                                serde_json::json!({"error": "invalid_grant"}),
                            );
                        }
                        "mcp:tools".to_string()
                    }
                    _ => {
                        return json_response(
                            StatusCode::BAD_REQUEST,
                            serde_json::json!({"error": "unsupported_grant_type"}),
                        );
                    }
                };
                auth.issued += 1;
                let (access, refresh) = (format!("at-{}", auth.issued), format!("rt-{}", auth.issued));
                auth.access.push(access.clone());
                auth.refresh.push(refresh.clone());
                // 5 s: inside rmcp's 30 s refresh margin, so the next use refreshes.
                json_response(
                    StatusCode::OK,
                    serde_json::json!({"access_token": access, "token_type": "Bearer", "expires_in": 5,
                        "refresh_token": refresh, "scope": scope}),
                )
            }),
        )
        .merge(protected);
    tokio::spawn(async move { axum::serve(listener, router).await });
    (auth, format!("{base}/mcp"))
}

fn secure_config(url: &str) -> ServerConfig {
    let mut config = test_server("secure", &[]);
    config.transport = Transport::Http {
        url: url.into(),
        headers: BTreeMap::new(),
        bearer_token_env: None,
        oauth: Default::default(),
    };
    config.tool_timeout = PATIENCE;
    config
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn stored_token(store: &FileTokenStore) -> String {
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
    file["credentials"]["token_response"]["access_token"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_stores_a_private_token_that_is_sent_and_refreshed() {
    let (auth, url) = start().await;
    let tokens = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let config = secure_config(&url);
    let manager = || {
        McpManager::with_stores(
            config_of(vec![config.clone()]),
            ToolCache::at(cache.path()),
            Some(tokens.path().into()),
        )
    };

    // Before any sign-in the server's 401 becomes a precise instruction.
    let m = manager();
    let err = m.server("secure").unwrap().call("secret", None).await.unwrap_err().to_string();
    assert!(err.contains("requires OAuth sign-in: run `quiver mcp login secure`"), "{err}");

    // The flow: challenge → metadata → registration → PKCE authorize → token.
    let store = FileTokenStore::new(tokens.path(), "secure", &url);
    let say = |_: &str| {};
    let options =
        LoginOptions { browser: Browser::Headless, timeout: PATIENCE, say: &say, scopes: None, challenge: None };
    oauth::login(&config, store.clone(), options).await.unwrap();
    {
        let a = auth.lock().unwrap();
        assert_eq!(a.registrations, 1, "dynamic client registration");
        assert_eq!(a.authorize_scopes, vec!["mcp:tools".to_string()], "the scope of the WWW-Authenticate challenge");
        assert_eq!(a.grants, vec!["authorization_code".to_string()]);
    }
    assert_eq!(mode(store.path()), 0o600, "the token file is readable by the user only");
    assert_eq!(stored_token(&store), "at-2");

    // A connection uses the token; it expires within rmcp's margin, so it is
    // refreshed first and the new one written back (still 0600).
    let m = manager();
    let result = m.server("secure").unwrap().call("secret", None).await.unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "42");
    assert!(auth.lock().unwrap().grants.contains(&"refresh_token".to_string()), "the expiring token was refreshed");
    assert_ne!(stored_token(&store), "at-2", "the refreshed token was stored");
    assert_eq!(mode(store.path()), 0o600);
    m.shutdown().await;

    // A token file for another URL under the same name is never sent.
    let elsewhere = FileTokenStore::new(tokens.path(), "secure", "http://127.0.0.1:9/mcp");
    assert!(!elsewhere.has_token());

    // Logout deletes it; the next connection is unauthenticated again.
    assert!(store.delete().unwrap());
    let m = manager();
    let err = m.server("secure").unwrap().call("secret", None).await.unwrap_err().to_string();
    assert!(err.contains("quiver mcp login secure"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_authorization_is_reported_and_stores_nothing() {
    let (_auth, url) = start().await;
    let tokens = tempfile::tempdir().unwrap();
    let mut config = secure_config(&url);
    // A pre-registered client id the server does not know: /authorize refuses it.
    if let Transport::Http { oauth, .. } = &mut config.transport {
        oauth.client_id = Some("unknown-client".into());
    }
    let store = FileTokenStore::new(tokens.path(), "secure", &url);
    let say = |_: &str| {};
    let options = LoginOptions {
        browser: Browser::Headless,
        timeout: Duration::from_secs(3),
        say: &say,
        scopes: None,
        challenge: None,
    };
    let err = oauth::login(&config, store.clone(), options).await.unwrap_err();
    assert!(matches!(err, oauth::LoginError::NoRedirect { secs: 3, .. }), "{err}");
    assert!(err.to_string().contains("no redirect came back"), "{err}");
    assert!(!store.path().exists(), "nothing stored after a failed sign-in");
}

fn config_of(servers: Vec<ServerConfig>) -> quiver_mcp::McpConfig {
    config(servers)
}
