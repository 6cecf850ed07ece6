//! One configured server as `quiver mcp list` / `get` (and `/mcp`) show it.
//! Values that may be secrets are masked unless asked for: env values the
//! sandbox would scrub (`*_TOKEN`, `*_API_KEY`, a URL with a password, ...)
//! and every header value (headers are how HTTP servers take credentials).

use std::collections::BTreeMap;
use std::path::PathBuf;

use quiver_engine::permissions::command::CommandOrigin;
use quiver_engine::permissions::trust::{Source, TrustStore};
use quiver_sandbox::EnvPolicy;
use serde::Serialize;

use crate::config::{ServerConfig, Transport};

/// What a masked value reads as.
pub const MASK: &str = "********";

#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub enabled: bool,
    /// `stdio`, `http`, or a transport quiver recognises but does not speak (`sse`).
    pub transport: String,
    /// The command line or the URL, for one-line listings.
    pub target: String,
    /// `user` (your own config) or `project` (the workspace's; starts only once approved).
    pub scope: &'static str,
    /// The file the server was read from.
    pub source: PathBuf,
    /// A project's server only: whether you approved this exact configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub oauth: BTreeMap<&'static str, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
    /// `search` (behind tool_search as `mcp__<server>__<tool>`) or `direct`.
    pub expose: &'static str,
    /// How its tools are named: `mcp__<server>__` (a direct server's keep their own names).
    pub tool_prefix: String,
    /// How quiver opens the connection: `initialize` (a session) or `auto`
    /// (MCP 2026-07-28 when the server speaks it).
    pub protocol: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    pub startup_timeout_ms: u64,
    pub tool_timeout_ms: u64,
}

/// `server`'s settings, secrets masked unless `reveal`. `trust` is asked
/// whether a project's server was approved.
pub fn describe(server: &ServerConfig, reveal: bool, trust: &TrustStore) -> ServerInfo {
    let policy = EnvPolicy::default();
    let project = server.trust == Source::Project;
    let approved = project.then(|| match &server.launch_request().origin {
        CommandOrigin::Config { key, .. } => trust.is_trusted(key),
        _ => false,
    });
    let mut info = ServerInfo {
        name: server.name.clone(),
        enabled: server.enabled,
        transport: server.transport.kind().to_string(),
        target: target(&server.transport),
        scope: if project { "project" } else { "user" },
        source: server.source.clone(),
        approved,
        command: None,
        args: Vec::new(),
        env: BTreeMap::new(),
        cwd: None,
        url: None,
        headers: BTreeMap::new(),
        bearer_token_env: None,
        oauth: BTreeMap::new(),
        unsupported: None,
        expose: if server.expose.is_direct() { "direct" } else { "search" },
        tool_prefix: if server.expose.is_direct() {
            String::new()
        } else {
            format!("{}{}__", quiver_engine::names::PREFIX, quiver_engine::names::sanitize_server(&server.name))
        },
        protocol: server.protocol.as_str(),
        enabled_tools: server.enabled_tools.clone(),
        disabled_tools: server.disabled_tools.clone(),
        startup_timeout_ms: millis(server.startup_timeout),
        tool_timeout_ms: millis(server.tool_timeout),
    };
    match &server.transport {
        Transport::Stdio { command, args, env, cwd } => {
            info.command = Some(command.clone());
            info.args = args.clone();
            info.cwd = cwd.clone();
            info.env = env
                .iter()
                .map(|(k, v)| {
                    // What the sandbox would keep from quiver's own environment is no secret.
                    let secret = policy.resolve([(k.into(), v.into())]).is_empty();
                    (k.clone(), if secret && !reveal { MASK.to_string() } else { v.clone() })
                })
                .collect();
        }
        Transport::Http { url, headers, bearer_token_env, oauth } => {
            info.url = Some(url.clone());
            info.headers =
                headers.iter().map(|(k, v)| (k.clone(), if reveal { v.clone() } else { MASK.to_string() })).collect();
            info.bearer_token_env = bearer_token_env.clone();
            let mut o = BTreeMap::new();
            if let Some(id) = &oauth.client_id {
                o.insert("client_id", serde_json::json!(id));
            }
            if let Some(var) = &oauth.client_secret_env {
                o.insert("client_secret_env", serde_json::json!(var));
            }
            if !oauth.scopes.is_empty() {
                o.insert("scopes", serde_json::json!(oauth.scopes));
            }
            if let Some(port) = oauth.redirect_port {
                o.insert("redirect_port", serde_json::json!(port));
            }
            info.oauth = o;
        }
        Transport::Unsupported { reason, .. } => info.unsupported = Some(reason.clone()),
    }
    info
}

/// The command line (arguments quoted where a shell would need it) or URL.
pub fn target(transport: &Transport) -> String {
    match transport {
        Transport::Stdio { command, args, .. } => {
            let argv: Vec<&str> = std::iter::once(command.as_str()).chain(args.iter().map(String::as_str)).collect();
            quiver_engine::permissions::command::shown_argv(&argv)
        }
        Transport::Http { url, .. } => url.clone(),
        Transport::Unsupported { kind, .. } => format!("({kind})"),
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_unless_revealed() {
        let text = "[mcp_servers.a]\ncommand = \"run it\"\nargs = [\"--x\", \"two words\"]\n\
                    env = { LOG = \"debug\", GH_TOKEN = \"ghp_x\", DB = \"postgres://u:pw@h/db\" }\n\
                    [mcp_servers.b]\nurl = \"https://h/mcp\"\nheaders = { X-Key = \"k\" }\noauth_scopes = [\"read\"]\n\
                    protocol = \"auto\"\n";
        let config = crate::config::parse_toml(std::path::Path::new("/c/config.toml"), text).unwrap();
        let trust = TrustStore::ephemeral();
        let a = describe(&config.servers["a"], false, &trust);
        assert_eq!(a.target, "'run it' --x 'two words'");
        assert_eq!(a.env["LOG"], "debug");
        assert_eq!(a.env["GH_TOKEN"], MASK);
        assert_eq!(a.env["DB"], MASK);
        assert_eq!((a.scope, a.approved, a.tool_prefix.as_str(), a.protocol), ("user", None, "mcp__a__", "initialize"));
        assert_eq!(describe(&config.servers["a"], true, &trust).env["GH_TOKEN"], "ghp_x");
        let b = describe(&config.servers["b"], false, &trust);
        assert_eq!(b.headers["X-Key"], MASK);
        assert_eq!(b.oauth["scopes"], serde_json::json!(["read"]));
        assert_eq!(b.protocol, "auto");
        let json = serde_json::to_string(&b).unwrap();
        assert!(!json.contains("\"k\""), "{json}");
    }
}
