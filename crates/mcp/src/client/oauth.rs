//! OAuth 2.1 for streamable-HTTP downstream servers (the MCP authorization
//! spec), on rmcp's `auth` support: protected-resource metadata from the
//! server's `WWW-Authenticate` challenge (or its well-known path), then the
//! authorization server's metadata, PKCE, dynamic client registration unless a
//! client id is configured, and the scope the challenge names (else the
//! advertised `scopes_supported`).
//!
//! `quiver mcp login NAME` runs [`login`]: a loopback listener receives the
//! redirect, the user's browser is opened on the authorization URL (the URL is
//! printed too, for a machine with no browser). Tokens go to
//! `$QUIVER_STATE_DIR/mcp-oauth/` (else the platform state dir), one file per
//! server *and URL*, created readable by the user only (0600): a config that
//! reuses the name for another URL never gets the token. A connection then
//! sends the token and refreshes it when it expires ([`authorized_client`]);
//! the refreshed token is written back the same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::AuthorizationManager;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationRequest, AuthorizationSession, CredentialStore,
    StoredCredentials,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::config::{OAuthSettings, ServerConfig, Transport};

/// How long `login` waits for the browser to come back to the redirect listener.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// The token store's folder: `$QUIVER_STATE_DIR/mcp-oauth`, else the
/// platform's state directory (`~/.local/state/quiver/mcp-oauth` on Linux).
pub fn token_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("QUIVER_STATE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("quiver")),
    };
    dir.map(|d| d.join("mcp-oauth"))
}

/// What one token file holds: the server it was issued for, and rmcp's record
/// (client id, token response with the refresh token, granted scopes, issuer).
#[derive(Serialize, Deserialize)]
struct TokenFile {
    server: String,
    url: String,
    credentials: StoredCredentials,
}

/// rmcp's credential store, backed by one 0600 file per (server, URL).
#[derive(Clone)]
pub struct FileTokenStore {
    path: PathBuf,
    server: String,
    url: String,
    /// Serializes refresh-and-save within this process.
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl FileTokenStore {
    /// The store for `server` at `url` under `dir`.
    pub fn new(dir: &Path, server: &str, url: &str) -> FileTokenStore {
        let digest = hex::encode(Sha256::digest(format!("{server}\n{url}").as_bytes()));
        let file = format!("{}-{}.json", quiver_engine::names::sanitize_server(server), &digest[..16]);
        FileTokenStore {
            path: dir.join(file),
            server: server.to_string(),
            url: url.to_string(),
            refresh: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// The store for a configured HTTP server, when a state dir exists.
    pub fn for_server(config: &ServerConfig) -> Option<FileTokenStore> {
        let Transport::Http { url, .. } = &config.transport else { return None };
        Some(FileTokenStore::new(&token_dir()?, &config.name, url))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a token (possibly expired, with a refresh token) is stored.
    pub fn has_token(&self) -> bool {
        matches!(self.read(), Ok(Some(c)) if c.token_response.is_some())
    }

    fn read(&self) -> Result<Option<StoredCredentials>, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        let file: TokenFile = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a quiver token file: {e}", self.path.display()))?;
        // The file name carries a digest of both; a mismatch means a hand-copied file.
        if file.server != self.server || file.url != self.url {
            return Ok(None);
        }
        Ok(Some(file.credentials))
    }

    /// Written to a temporary file created 0600, then renamed over the old one,
    /// so a crash never leaves half a token file and it is never world-readable.
    fn write(&self, credentials: StoredCredentials) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let file = TokenFile { server: self.server.clone(), url: self.url.clone(), credentials };
        let text = serde_json::to_vec_pretty(&file).map_err(|e| format!("cannot encode the token: {e}"))?;
        let tmp = self.path.with_extension(format!("tmp{}", std::process::id()));
        let written = write_private(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &self.path));
        written.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", self.path.display())
        })
    }

    /// Deletes the token; whether there was one.
    pub fn delete(&self) -> Result<bool, DeleteError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(DeleteError { path: self.path.clone(), error }),
        }
    }
}

/// A token file that is there but could not be deleted. The I/O error is
/// in the text and deliberately not a `source`, so a chain printer does
/// not say it twice.
#[derive(Debug, thiserror::Error)]
#[error("cannot delete {}: {error}", path.display())]
pub struct DeleteError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

fn create_private_dir(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

#[async_trait::async_trait]
impl CredentialStore for FileTokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.delete().map(|_| ()).map_err(|e| store_error(e.to_string()))
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<rmcp::transport::auth::CredentialRefreshGuard>, AuthError> {
        let guard = Arc::clone(&self.refresh).lock_owned().await;
        Ok(Some(rmcp::transport::auth::CredentialRefreshGuard::new(guard)))
    }
}

/// An HTTP client that sends `config`'s stored token (refreshing it when it
/// expired), or `None` when there is no token for it: the connection then goes
/// out unauthenticated, and a server that wants OAuth answers 401.
pub async fn authorized_client(config: &ServerConfig) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    let Some(store) = FileTokenStore::for_server(config) else { return Ok(None) };
    authorized_client_with(config, store).await
}

pub async fn authorized_client_with(
    config: &ServerConfig,
    store: FileTokenStore,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    let Transport::Http { url, .. } = &config.transport else { return Ok(None) };
    if !store.has_token() {
        return Ok(None);
    }
    super::tls::install_crypto_provider();
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| format!("OAuth for server `{}`: {e}", config.name))?;
    manager.set_credential_store(store);
    let ready = manager.initialize_from_store().await.map_err(|e| {
        format!(
            "OAuth for server `{}`: the stored sign-in cannot be used ({e}); run `quiver mcp login {}`",
            config.name, config.name
        )
    })?;
    if !ready {
        return Ok(None);
    }
    let http = super::tls::client_builder()
        .build()
        .map_err(|e| format!("OAuth for server `{}`: cannot build an HTTP client: {e}", config.name))?;
    Ok(Some(AuthClient::new(http, manager)))
}

/// The message for a server that answered 401 to a connection without a token.
pub fn login_needed(config: &ServerConfig) -> String {
    format!("MCP server `{}` requires OAuth sign-in: run `quiver mcp login {}` (then retry)", config.name, config.name)
}

/// How the authorization URL reaches a user agent.
pub enum Browser {
    /// The user's browser (`$BROWSER`, else `xdg-open` / `open`); the URL is
    /// printed as well, for a machine where none opens.
    System,
    /// Follow the URL's redirects in-process (an authorization server that
    /// needs no user interaction: the conformance suite's, tests').
    Headless,
}

impl Browser {
    async fn open(&self, url: &str, say: &(dyn Fn(&str) + Sync)) {
        match self {
            Browser::System => {
                say(&format!("Open this URL to sign in (waiting for the redirect):\n  {url}"));
                if !open_system_browser(url) {
                    say("(no browser could be opened; open the URL above by hand)");
                }
            }
            Browser::Headless => {
                let url = url.to_string();
                tokio::spawn(async move {
                    // The redirect chain ends at the loopback listener, which
                    // completes the login; the response itself is not needed.
                    let sent = match super::tls::client_builder().build() {
                        Ok(client) => client.get(&url).send().await.map(drop),
                        Err(e) => Err(e),
                    };
                    if let Err(e) = sent {
                        tracing::warn!(error = %e, "headless authorization request failed");
                    }
                });
            }
        }
    }
}

fn open_system_browser(url: &str) -> bool {
    let spawn = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
    };
    if let Some(browser) = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()) {
        let mut words = browser.split_whitespace();
        let program = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        return spawn(program, &args);
    }
    if cfg!(target_os = "macos") { spawn("open", &[]) } else { spawn("xdg-open", &[]) }
}

/// Options of one sign-in beyond the server's config.
pub struct LoginOptions<'a> {
    pub browser: Browser,
    pub timeout: Duration,
    /// Where progress lines go (stderr for the CLI).
    pub say: &'a (dyn Fn(&str) + Sync),
    /// Scopes that replace the configured ones.
    pub scopes: Option<Vec<String>>,
    /// The `WWW-Authenticate` challenge that asked for this sign-in (a 401, or
    /// a 403 naming more scope); `None`: probe the server for one.
    pub challenge: Option<String>,
}

/// Why a sign-in did not end with a stored token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    #[error("MCP server `{server}` is not an HTTP server; OAuth applies to `url` servers only")]
    NotHttp { server: String },
    /// A step of the flow failed (`step` says which, as a phrase).
    #[error("OAuth sign-in to `{server}` failed {step}: {message}")]
    Step { server: String, step: String, message: String },
    #[error("OAuth sign-in to `{server}`: no redirect came back within {secs} s")]
    NoRedirect { server: String, secs: u64 },
    #[error("environment variable `{var}` (oauth_client_secret_env of server `{server}`) is not set")]
    SecretUnset { var: String, server: String },
    /// The redirect came back with a refusal or without a usable code.
    #[error("{0}")]
    Redirect(String),
}

/// Runs the authorization-code flow with PKCE for `config` and stores the
/// tokens in `store`. Returns the granted scopes.
pub async fn login(
    config: &ServerConfig,
    store: FileTokenStore,
    options: LoginOptions<'_>,
) -> Result<Vec<String>, LoginError> {
    let Transport::Http { url, oauth, .. } = &config.transport else {
        return Err(LoginError::NotHttp { server: config.name.clone() });
    };
    super::tls::install_crypto_provider();
    let name = &config.name;
    let fail = |step: &str, e: &dyn std::fmt::Display| LoginError::Step {
        server: name.clone(),
        step: step.to_string(),
        message: e.to_string(),
    };
    let challenge = match options.challenge {
        Some(challenge) => Some(challenge),
        None => probe_challenge(url).await,
    };
    let port = oauth.redirect_port.unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| fail(&format!("(cannot listen on 127.0.0.1:{port} for the redirect)"), &e))?;
    let port = listener.local_addr().map_err(|e| fail("(redirect listener)", &e))?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let mut manager = AuthorizationManager::new(url.as_str()).await.map_err(|e| fail("(bad URL)", &e))?;
    manager.set_credential_store(store);
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| fail("discovering the authorization server", &e))?;
    manager.set_metadata(resolution.metadata);
    let request = authorization_request(config, oauth, &redirect_uri, challenge, options.scopes)?;
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| fail("registering quiver with the authorization server", &e))?;

    options.browser.open(session.get_authorization_url(), options.say).await;
    let callback = tokio::time::timeout(options.timeout, wait_for_redirect(&listener))
        .await
        .map_err(|_| LoginError::NoRedirect { server: name.clone(), secs: options.timeout.as_secs() })??;
    session
        .handle_callback_with_issuer(&callback.code, &callback.csrf_token, callback.issuer.as_deref())
        .await
        .map_err(|e| fail("exchanging the code for a token", &e))?;
    Ok(session.auth_manager.get_current_scopes().await)
}

fn authorization_request(
    config: &ServerConfig,
    oauth: &OAuthSettings,
    redirect_uri: &str,
    challenge: Option<String>,
    scopes: Option<Vec<String>>,
) -> Result<AuthorizationRequest, LoginError> {
    let mut request = AuthorizationRequest::new(redirect_uri).with_client_name("quiver");
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    let scopes = scopes.unwrap_or_else(|| oauth.scopes.clone());
    request = if scopes.is_empty() {
        // The challenge's scope first, else the resource's `scopes_supported`,
        // else none at all (the server then grants its default).
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(scopes)
    };
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id.as_str());
        if let Some(secret) = &oauth.client_secret {
            request = request.with_client_secret(secret.0.clone());
        } else if let Some(var) = &oauth.client_secret_env {
            let secret = quiver_sandbox::secret_env(var)
                .ok_or_else(|| LoginError::SecretUnset { var: var.clone(), server: config.name.clone() })?;
            request = request.with_client_secret(secret);
        }
    }
    Ok(request)
}

/// The `scope` a `WWW-Authenticate` challenge names (RFC 6750 §3), split.
pub fn challenge_scopes(challenge: &str) -> Vec<String> {
    let Some(start) = challenge.find("scope=\"") else { return Vec::new() };
    let rest = &challenge[start + "scope=\"".len()..];
    let value = rest.split('"').next().unwrap_or_default();
    value.split_whitespace().map(str::to_string).collect()
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated
/// `initialize`, if it sends one (it names the resource metadata and scope).
async fn probe_challenge(url: &str) -> Option<String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "quiver", "version": quiver_engine::VERSION}}
    });
    let response = super::tls::client_builder()
        .build()
        .ok()?
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    let header = response.headers().get(reqwest::header::WWW_AUTHENTICATE)?;
    header.to_str().ok().map(str::to_string)
}

/// Serves the loopback redirect until one request carries the authorization
/// response (other requests, a browser's favicon fetch, get a 404).
async fn wait_for_redirect(listener: &TcpListener) -> Result<AuthorizationCallback, LoginError> {
    loop {
        let accepted = listener.accept().await;
        let (mut stream, _) = accepted.map_err(|e| LoginError::Redirect(format!("redirect listener: {e}")))?;
        let mut buf = vec![0u8; 16 * 1024];
        let mut len = 0;
        // The request line is all that is needed; read until the header ends.
        while len < buf.len() {
            match stream.read(&mut buf[len..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => len += n,
            }
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buf[..len]);
        let target = head.lines().next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or("/");
        if !target.starts_with("/callback") {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            continue;
        }
        let full = format!("http://127.0.0.1{target}");
        let parsed = AuthorizationCallback::from_redirect_url(&full);
        let error = url_param(&full, "error");
        let (status, text) = match (&parsed, &error) {
            (Ok(_), _) => ("200 OK", "quiver: signed in. You can close this tab.".to_string()),
            (Err(_), Some(error)) => ("400 Bad Request", format!("quiver: the sign-in was refused ({error}).")),
            (Err(e), None) => ("400 Bad Request", format!("quiver: unusable redirect ({e}).")),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
        return match (parsed, error) {
            (Ok(callback), _) => Ok(callback),
            (Err(_), Some(error)) => {
                let described = url_param(&full, "error_description").unwrap_or_default();
                Err(LoginError::Redirect(
                    format!("the authorization server refused: {error} {described}").trim().to_string(),
                ))
            }
            (Err(e), None) => Err(LoginError::Redirect(format!("the redirect carried no usable code: {e}"))),
        };
    }
}

fn url_param(url: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

#[cfg(test)]
#[path = "oauth_tests.rs"]
mod tests;
