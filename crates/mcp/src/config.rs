//! Downstream MCP servers, as configured.
//!
//! Sources, lowest precedence first; a later source replaces a server of the same
//! name *whole* (fields are never merged across files, so a project can be sure
//! what it runs):
//!
//! 1. the user file, `~/.config/quiver/config.toml` (`$QUIVER_CONFIG_DIR/config.toml`);
//! 2. the workspace's Claude-style `.mcp.json` (`{"mcpServers": {...}}`);
//! 3. the workspace's `quiver.toml`;
//! 4. an explicit `--config FILE` (TOML or Claude-style JSON).
//!
//! TOML shape (`[mcp_servers.NAME]`): `command` + `args`/`env`/`cwd`, or `url` +
//! `headers`/`bearer_token_env` and the OAuth keys (`oauth_client_id`,
//! `oauth_client_secret_env`, `oauth_scopes`, `oauth_redirect_port`: see
//! [`OAuthSettings`]); `enabled`, `enabled_tools`, `disabled_tools`,
//! `startup_timeout_ms`, `tool_timeout_ms`, `expose` (`"search"`, the default, or
//! `"direct"`: see [`Expose`]), `protocol` (`"initialize"`, the default, or
//! `"auto"`: see [`Protocol`]). Unknown keys are errors (a typo must
//! not silently drop a setting); other top-level tables of `quiver.toml` are not
//! ours and are ignored.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use quiver_engine::permissions::command::{CommandOrigin, CommandRequest, shown_argv};
use quiver_engine::permissions::trust::{self, Source, TrustKey};

use serde::Deserialize;

#[path = "config/claude.rs"]
mod claude;

pub(crate) use claude::expand as claude_expand;
pub use claude::parse_claude_json;

/// How long a server may take to start and answer `initialize` + `tools/list`.
/// `npx` fetching a package on first use is the slow case this covers.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one `tools/call` may take before it is abandoned.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// Every configured server, by name (sorted, so listings are deterministic).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    pub servers: BTreeMap<String, ServerConfig>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    /// When set, only these tools (by their server-side names) are exposed.
    pub enabled_tools: Option<Vec<String>>,
    /// Never exposed, even when listed in `enabled_tools`.
    pub disabled_tools: Vec<String>,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// The file this server was read from (for messages).
    pub source: PathBuf,
    /// Who defined it: a project-defined server starts only once the user
    /// approved it (see [`ServerConfig::launch_request`]).
    pub trust: Source,
    /// The workspace of a project-defined server (approvals are per workspace).
    pub workspace: Option<PathBuf>,
    /// How the server's tools, resources and prompts reach a model or client.
    pub expose: Expose,
    /// Which revision quiver opens the connection at (`protocol`).
    pub protocol: Protocol,
}

/// How quiver opens a connection to a server (`protocol = "initialize" | "auto"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Protocol {
    /// An `initialize` session at the newest revision that has one
    /// (2025-11-25): the default. Servers built on rmcp 3.9 (and others)
    /// state 2026-07-28 whatever their tools do, and a tool that asks its
    /// client mid-call by a request of its session (elicitation, sampling,
    /// roots) fails at 2026-07-28, which forbids such requests; so quiver
    /// speaks the stateless revision only to a server it is told speaks it.
    #[default]
    Initialize,
    /// `server/discover` first: MCP 2026-07-28 (stateless requests; what the
    /// server asks mid-call comes as `InputRequiredResult` rounds, which
    /// quiver answers through the client in front), falling back to
    /// `initialize` when the server answers it with an error (one that
    /// predates the revision).
    Auto,
}

impl Protocol {
    /// The values the `protocol` key takes, as written (`quiver mcp add
    /// --protocol` offers the same, so the two cannot drift apart).
    pub const NAMES: [&'static str; 2] = ["initialize", "auto"];

    /// The value as written in a config.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Initialize => "initialize",
            Protocol::Auto => "auto",
        }
    }
}

/// A `protocol` value that is none of [`Protocol`]'s; it names every accepted one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a way to open a connection; use \"initialize\" (a session, the default) or \"auto\" \
     (MCP 2026-07-28 when the server speaks it)"
)]
pub struct UnknownProtocol(pub String);

impl std::str::FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(text: &str) -> Result<Protocol, UnknownProtocol> {
        match text {
            "initialize" => Ok(Protocol::Initialize),
            "auto" => Ok(Protocol::Auto),
            other => Err(UnknownProtocol(other.to_string())),
        }
    }
}

/// How a server is exposed (`expose = "search" | "direct"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Expose {
    /// Tools as `mcp__<server>__<tool>`, deferred behind `tool_search` (active
    /// in yolo mode); resources and prompts prefixed (see `server::passthrough`).
    #[default]
    Search,
    /// Transparent: tools keep their own names and sit in the first-turn head
    /// in every mode; resources and prompts keep their own URIs and names. A
    /// name clashing with a native tool or another direct server's tool is a
    /// config error. Only the user's own config may ask for it: a project's
    /// config cannot put tools into the head (it would be ignored there).
    Direct,
}

impl Expose {
    pub fn is_direct(self) -> bool {
        self == Expose::Direct
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        bearer_token_env: Option<String>,
        /// How to sign in when the server asks for OAuth (`quiver mcp login`).
        oauth: OAuthSettings,
    },
    /// A transport we recognise but do not speak (Claude's legacy `"type": "sse"`):
    /// kept so the server shows up as failed with the reason, instead of either
    /// breaking the whole config or vanishing.
    Unsupported {
        kind: String,
        reason: String,
    },
}

/// The OAuth side of an HTTP server's config. All optional: with none set,
/// `quiver mcp login` discovers everything from the server (protected-resource
/// and authorization-server metadata) and registers itself dynamically.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OAuthSettings {
    /// A client id registered with the authorization server beforehand
    /// (skips dynamic client registration).
    pub client_id: Option<String>,
    /// The env var holding that client's secret, for confidential clients.
    pub client_secret_env: Option<String>,
    /// The secret itself, held in memory: never read from a config file
    /// (which names an env var instead), only set by a caller that was
    /// handed the credentials (the conformance harness). Used before
    /// `client_secret_env`.
    pub client_secret: Option<Secret>,
    /// Scopes to ask for; empty means: the server's `WWW-Authenticate` scope,
    /// else its advertised `scopes_supported`.
    pub scopes: Vec<String>,
    /// A fixed loopback port for the redirect listener (some pre-registered
    /// clients allow one exact redirect URI); default: any free port.
    pub redirect_port: Option<u16>,
}

/// A secret that never shows in `Debug` output (logs, error reports).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Transport {
    pub fn kind(&self) -> &str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
            Transport::Unsupported { kind, .. } => kind,
        }
    }
}

impl fmt::Display for Transport {
    /// One line for listings; never shows env values or header values (secrets).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio { command, args, .. } => {
                write!(f, "stdio: {command}")?;
                for arg in args {
                    write!(f, " {arg}")?;
                }
                Ok(())
            }
            Transport::Http { url, .. } => write!(f, "http: {url}"),
            Transport::Unsupported { kind, .. } => write!(f, "{kind} (unsupported)"),
        }
    }
}

impl ServerConfig {
    /// Whether a server-side tool name passes `enabled_tools` / `disabled_tools`.
    pub fn allows_tool(&self, tool: &str) -> bool {
        let enabled = self.enabled_tools.as_ref().is_none_or(|list| list.iter().any(|t| t == tool));
        enabled && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// What the command gate judges before this server starts (or, for HTTP,
    /// before quiver connects and sends its headers and tokens): the command
    /// line or URL, with who defined it and the exact configuration approved.
    pub fn launch_request(&self) -> CommandRequest {
        let (line, canonical) = match &self.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let argv: Vec<&str> =
                    std::iter::once(command.as_str()).chain(args.iter().map(String::as_str)).collect();
                let line = shown_argv(&argv);
                (line.clone(), format!("stdio\n{line}\n{env:?}\n{cwd:?}"))
            }
            Transport::Http { url, headers, bearer_token_env, oauth } => (
                format!("connect to {url}"),
                format!("http\n{url}\n{headers:?}\n{bearer_token_env:?}{}", oauth_fingerprint(oauth)),
            ),
            Transport::Unsupported { kind, .. } => (format!("({kind} transport)"), kind.clone()),
        };
        let key = TrustKey {
            workspace: self.workspace.clone().unwrap_or_default(),
            subject: self.name.clone(),
            fingerprint: trust::fingerprint(&canonical),
        };
        CommandRequest { line, origin: CommandOrigin::Config { source: self.trust, key } }
    }
}

/// The OAuth settings' part of an approval fingerprint; empty when unset, so
/// approvals given before OAuth existed stay valid.
fn oauth_fingerprint(oauth: &OAuthSettings) -> String {
    if *oauth == OAuthSettings::default() { String::new() } else { format!("\n{oauth:?}") }
}

/// A config problem, always naming the file and the key.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {key}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(file: &Path, key: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { file: file.display().to_string(), key: key.into(), message: message.into() }
    }
}

/// Where configuration is read from. Built by [`ConfigSources::discover`];
/// tests build it by hand.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// Lowest precedence first.
    pub files: Vec<PathBuf>,
    /// Files of these are the project's (they only restrict, and the servers
    /// they define start only with the user's approval); the rest are the
    /// user's own.
    pub project_files: Vec<PathBuf>,
    pub workspace: Option<PathBuf>,
}

impl ConfigSources {
    /// The standard layering for a workspace, plus an explicit file (highest).
    /// Files that do not exist are skipped; an explicit file must exist.
    pub fn discover(workspace: Option<&Path>, explicit: Option<&Path>) -> Self {
        let mut files = Vec::new();
        let mut project_files = Vec::new();
        if let Some(dir) = user_config_dir() {
            files.push(dir.join("config.toml"));
        }
        if let Some(ws) = workspace {
            project_files = vec![ws.join(".mcp.json"), ws.join("quiver.toml")];
            files.extend(project_files.iter().cloned());
        }
        let mut sources = ConfigSources {
            files: files.into_iter().filter(|p| p.is_file()).collect(),
            project_files,
            workspace: workspace.map(Path::to_path_buf),
        };
        if let Some(path) = explicit {
            sources.files.push(path.to_path_buf());
        }
        sources
    }
}

/// `$QUIVER_CONFIG_DIR`, else `~/.config/quiver` (the platform config dir).
pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("QUIVER_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|d| d.join("quiver")),
    }
}

impl McpConfig {
    /// Reads every source, later files replacing earlier servers of the same name.
    pub fn load(sources: &ConfigSources) -> Result<McpConfig, ConfigError> {
        let mut config = McpConfig::default();
        for path in &sources.files {
            let project = sources.project_files.contains(path);
            let layer = std::fs::read_to_string(path)
                .map_err(|e| ConfigError::new(path, "(file)", format!("cannot read: {e}")))
                .and_then(|text| parse_file(path, &text));
            let mut layer = match layer {
                Ok(layer) => layer,
                // A cloned repository's broken file must not stop quiver:
                // its servers are left out, the user's own still start.
                Err(e) if project => {
                    tracing::warn!("ignoring the project's MCP config: {e}");
                    continue;
                }
                Err(e) => return Err(e),
            };
            if project {
                for server in layer.servers.values_mut() {
                    server.trust = Source::Project;
                    server.workspace = sources.workspace.clone();
                    // The head is the user's: a cloned repository cannot put
                    // its server's tools there (nor take native names).
                    if server.expose.is_direct() {
                        tracing::warn!(
                            server = %server.name,
                            file = %path.display(),
                            "`expose = \"direct\"` is ignored in a project's config; set it in your own config"
                        );
                        server.expose = Expose::Search;
                    }
                }
            }
            let before = config.servers.clone();
            config.servers.extend(layer.servers);
            if project && let Err(e) = config.check_prefixes() {
                tracing::warn!("ignoring the project's MCP config: {e}");
                config.servers = before;
            }
        }
        config.check_prefixes()?;
        Ok(config)
    }

    /// The standard sources for a workspace (see the module docs).
    pub fn load_for_workspace(workspace: Option<&Path>, explicit: Option<&Path>) -> Result<McpConfig, ConfigError> {
        McpConfig::load(&ConfigSources::discover(workspace, explicit))
    }

    /// Two servers whose names sanitize to the same tool prefix would make
    /// `mcp__<server>__<tool>` ambiguous; refuse rather than guess.
    pub(crate) fn check_prefixes(&self) -> Result<(), ConfigError> {
        let mut seen: BTreeMap<String, &ServerConfig> = BTreeMap::new();
        for server in self.servers.values() {
            let prefix = quiver_engine::names::sanitize_server(&server.name);
            if let Some(other) = seen.insert(prefix.clone(), server) {
                return Err(ConfigError::new(
                    &server.source,
                    format!("mcp_servers.{}", server.name),
                    format!(
                        "server names `{}` and `{}` both become the tool prefix `mcp__{prefix}__`; rename one",
                        other.name, server.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Parses one file, TOML or Claude-style JSON (by extension, else by content).
pub fn parse_file(path: &Path, text: &str) -> Result<McpConfig, ConfigError> {
    let is_json = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => true,
        Some("toml") => false,
        _ => text.trim_start().starts_with('{'),
    };
    if is_json { parse_claude_json(path, text) } else { parse_toml(path, text) }
}

/// The keys a `[mcp_servers.NAME]` table may have. `*_sec` and
/// `bearer_token_env_var` are accepted so Codex-style tables work unchanged.
const TOML_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "bearer_token_env",
    "bearer_token_env_var",
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "startup_timeout_ms",
    "tool_timeout_ms",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "expose",
    "protocol",
    "oauth_client_id",
    "oauth_client_secret_env",
    "oauth_scopes",
    "oauth_redirect_port",
];

/// One server as written; shared by the TOML and JSON readers.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RawServer {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(alias = "bearer_token_env_var")]
    pub bearer_token_env: Option<String>,
    pub enabled: Option<bool>,
    pub enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    pub startup_timeout_ms: Option<u64>,
    pub tool_timeout_ms: Option<u64>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
    pub expose: Option<String>,
    pub protocol: Option<String>,
    pub oauth_client_id: Option<String>,
    pub oauth_client_secret_env: Option<String>,
    #[serde(default)]
    pub oauth_scopes: Vec<String>,
    pub oauth_redirect_port: Option<u16>,
}

pub(crate) fn parse_toml(path: &Path, text: &str) -> Result<McpConfig, ConfigError> {
    let table: toml::Table =
        toml::from_str(text).map_err(|e| ConfigError::new(path, "(syntax)", e.to_string().trim().to_string()))?;
    let mut config = McpConfig::default();
    let Some(servers) = table.get("mcp_servers") else { return Ok(config) };
    let toml::Value::Table(servers) = servers else {
        return Err(ConfigError::new(path, "mcp_servers", "must be a table of servers (`[mcp_servers.NAME]`)"));
    };
    for (name, value) in servers {
        let key = format!("mcp_servers.{name}");
        let toml::Value::Table(fields) = value else {
            return Err(ConfigError::new(path, &key, "must be a table (`[mcp_servers.NAME]` with `command` or `url`)"));
        };
        for field in fields.keys() {
            if !TOML_KEYS.contains(&field.as_str()) {
                return Err(ConfigError::new(path, format!("{key}.{field}"), unknown_key_message(field)));
            }
        }
        let raw = RawServer::deserialize(value.clone())
            .map_err(|e| ConfigError::new(path, &key, e.to_string().trim().to_string()))?;
        let server = build_server(path, name, raw)?;
        config.servers.insert(name.clone(), server);
    }
    Ok(config)
}

fn unknown_key_message(field: &str) -> String {
    let nearest = TOML_KEYS
        .iter()
        .map(|k| (strsim::jaro_winkler(field, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((_, k)) => format!("unknown key; did you mean `{k}`?"),
        None => format!("unknown key; expected one of {}", TOML_KEYS.join(", ")),
    }
}

/// Validates a raw server and resolves relative paths against the file's folder.
pub(crate) fn build_server(path: &Path, name: &str, raw: RawServer) -> Result<ServerConfig, ConfigError> {
    let key = format!("mcp_servers.{name}");
    let err = |field: &str, message: String| {
        let k = if field.is_empty() { key.clone() } else { format!("{key}.{field}") };
        ConfigError::new(path, k, message)
    };
    if name.trim().is_empty() {
        return Err(err("", "a server name must not be empty".into()));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let transport = match (raw.command, raw.url, raw.kind.as_deref()) {
        (_, _, Some("sse")) => Transport::Unsupported {
            kind: "sse".into(),
            reason: "the legacy SSE transport is not supported; point `url` at the server's streamable HTTP endpoint"
                .into(),
        },
        (Some(_), Some(_), _) => {
            return Err(err("", "has both `command` and `url`; a server is one or the other".into()));
        }
        (None, None, _) => return Err(err("", "needs `command` (a stdio server) or `url` (an HTTP server)".into())),
        (Some(command), None, _) => {
            if command.trim().is_empty() {
                return Err(err("command", "must not be empty".into()));
            }
            for field in [("headers", !raw.headers.is_empty()), ("bearer_token_env", raw.bearer_token_env.is_some())] {
                if field.1 {
                    return Err(err(field.0, "only applies to `url` servers".into()));
                }
            }
            let oauth_set = raw.oauth_client_id.is_some()
                || raw.oauth_client_secret_env.is_some()
                || !raw.oauth_scopes.is_empty()
                || raw.oauth_redirect_port.is_some();
            if oauth_set {
                return Err(err("oauth_client_id", "OAuth settings only apply to `url` servers".into()));
            }
            let cwd = raw.cwd.map(|c| base.join(c));
            Transport::Stdio { command, args: raw.args, env: raw.env, cwd }
        }
        (None, Some(url), _) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(err("url", format!("`{url}` is not an http:// or https:// URL")));
            }
            for (field, set) in
                [("args", !raw.args.is_empty()), ("env", !raw.env.is_empty()), ("cwd", raw.cwd.is_some())]
            {
                if set {
                    return Err(err(field, "only applies to `command` servers".into()));
                }
            }
            for (header, value) in &raw.headers {
                if header.is_empty() || !header.bytes().all(is_header_name_byte) {
                    return Err(err(&format!("headers.{header}"), "is not a valid HTTP header name".into()));
                }
                if value.bytes().any(|b| b == b'\r' || b == b'\n') {
                    return Err(err(
                        &format!("headers.{header}"),
                        "a header value must not contain line breaks".into(),
                    ));
                }
            }
            if raw.oauth_client_secret_env.is_some() && raw.oauth_client_id.is_none() {
                return Err(err(
                    "oauth_client_secret_env",
                    "needs `oauth_client_id` (a secret belongs to a pre-registered client)".into(),
                ));
            }
            if raw.oauth_redirect_port == Some(0) {
                return Err(err("oauth_redirect_port", "must be a port number (1-65535)".into()));
            }
            let oauth = OAuthSettings {
                client_id: raw.oauth_client_id,
                client_secret_env: raw.oauth_client_secret_env,
                client_secret: None,
                scopes: raw.oauth_scopes,
                redirect_port: raw.oauth_redirect_port,
            };
            Transport::Http { url, headers: raw.headers, bearer_token_env: raw.bearer_token_env, oauth }
        }
    };
    let startup_timeout = timeout(raw.startup_timeout_ms, raw.startup_timeout_sec, DEFAULT_STARTUP_TIMEOUT)
        .map_err(|m| err("startup_timeout_ms", m))?;
    let tool_timeout = timeout(raw.tool_timeout_ms, raw.tool_timeout_sec, DEFAULT_TOOL_TIMEOUT)
        .map_err(|m| err("tool_timeout_ms", m))?;
    let expose = match raw.expose.as_deref() {
        None | Some("search") => Expose::Search,
        Some("direct") => Expose::Direct,
        Some(other) => {
            return Err(err(
                "expose",
                format!("`{other}` is not a way to expose a server; use \"search\" or \"direct\""),
            ));
        }
    };
    let protocol = match raw.protocol.as_deref() {
        None => Protocol::Initialize,
        Some(text) => text.parse().map_err(|m: UnknownProtocol| err("protocol", m.to_string()))?,
    };
    Ok(ServerConfig {
        expose,
        protocol,
        name: name.to_string(),
        transport,
        enabled: raw.enabled.unwrap_or(true),
        enabled_tools: raw.enabled_tools,
        disabled_tools: raw.disabled_tools,
        startup_timeout,
        tool_timeout,
        source: path.to_path_buf(),
        trust: Source::User,
        workspace: None,
    })
}

fn timeout(ms: Option<u64>, sec: Option<f64>, default: Duration) -> Result<Duration, String> {
    let value = match (ms, sec) {
        (Some(ms), _) => Duration::from_millis(ms),
        (None, Some(sec)) if sec.is_finite() && sec > 0.0 => Duration::from_secs_f64(sec),
        (None, Some(sec)) => return Err(format!("must be a positive number of seconds, got {sec}")),
        (None, None) => default,
    };
    if value.is_zero() {
        return Err("must be greater than 0".into());
    }
    Ok(value)
}

/// RFC 9110 `token` characters.
fn is_header_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
