//! `quiver mcp login NAME`, `quiver mcp logout NAME`, and the hidden
//! `quiver mcp conformance-client URL` (quiver's downstream MCP client run
//! once against one server: what the MCP conformance suite's client scenarios
//! drive).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use quiver_engine::permissions::command::CommandOrigin;
use quiver_engine::permissions::trust::{Source, TrustStore};
use quiver_mcp::McpConfig;
use quiver_mcp::client::oauth::{self, Browser, FileTokenStore, LoginOptions};
use quiver_mcp::config::{OAuthSettings, Protocol, Secret, ServerConfig, Transport};

use crate::setup;

#[derive(clap::Args)]
pub struct LoginArgs {
    /// The server's name in the config (an HTTP server).
    name: String,
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Config file with `[mcp_servers.NAME]` tables (or a Claude-style mcpServers JSON).
    #[arg(long)]
    config: Option<PathBuf>,
    /// How long to wait for the browser to come back, in seconds.
    #[arg(long, default_value_t = oauth::DEFAULT_LOGIN_TIMEOUT.as_secs())]
    timeout: u64,
    /// Follow the authorization URL in-process instead of opening a browser
    /// (authorization servers that need no user interaction).
    #[arg(long, hide = true)]
    headless: bool,
}

#[derive(clap::Args)]
pub struct ConformanceArgs {
    /// The MCP endpoint (the conformance suite appends it to the command).
    url: String,
    /// Per-step bound, in seconds.
    #[arg(long, default_value_t = 20)]
    timeout: u64,
}

/// The OAuth settings a conformance scenario hands its client: a
/// pre-registered client's id and secret arrive in the JSON of
/// `MCP_CONFORMANCE_CONTEXT` (`{"name": ..., "client_id": ..., "client_secret": ...}`),
/// as a user's config would name them; none means the client discovers and
/// registers itself.
fn oauth_from_context(context: Option<&str>) -> anyhow::Result<OAuthSettings> {
    #[derive(serde::Deserialize)]
    struct Context {
        client_id: Option<String>,
        client_secret: Option<String>,
    }
    let Some(text) = context else { return Ok(OAuthSettings::default()) };
    let context: Context = serde_json::from_str(text).context("reading MCP_CONFORMANCE_CONTEXT")?;
    Ok(OAuthSettings {
        client_secret: context.client_id.as_ref().and(context.client_secret).map(Secret),
        client_id: context.client_id,
        ..OAuthSettings::default()
    })
}

/// The arguments the suite names for some tools (`toolCalls` in its
/// context): the values a scenario checks how the client sends.
fn calls_from_context(context: Option<&str>) -> anyhow::Result<quiver_mcp::client::probe::Given> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Context {
        #[serde(default)]
        tool_calls: Vec<Call>,
    }
    #[derive(serde::Deserialize)]
    struct Call {
        name: String,
        #[serde(default)]
        arguments: serde_json::Map<String, serde_json::Value>,
    }
    let Some(text) = context else { return Ok(Default::default()) };
    let context: Context = serde_json::from_str(text).context("reading MCP_CONFORMANCE_CONTEXT")?;
    Ok(context.tool_calls.into_iter().map(|c| (c.name, c.arguments)).collect())
}

/// The configured HTTP server `name`; a project-defined one only once the
/// user approved it (signing in to a server a cloned repository names is
/// the user's decision, like starting it).
fn http_server(
    workspace: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
    name: &str,
) -> anyhow::Result<ServerConfig> {
    let dir = setup::workspace_dir(workspace)?;
    let loaded = McpConfig::load_for_workspace(Some(&dir), config).context("reading the MCP server config")?;
    let Some(server) = loaded.servers.get(name) else {
        let names: Vec<&str> = loaded.servers.keys().map(String::as_str).collect();
        bail!("no MCP server named `{name}` (configured: {})", names.join(", "));
    };
    if !matches!(server.transport, Transport::Http { .. }) {
        bail!("`{name}` is a {} server; OAuth sign-in applies to `url` (HTTP) servers", server.transport.kind());
    }
    if server.trust == Source::Project {
        let request = server.launch_request();
        let CommandOrigin::Config { key, .. } = &request.origin else { bail!("`{name}` is not a configured server") };
        if !TrustStore::from_env().is_trusted(key) {
            bail!(
                "`{name}` is defined by this workspace ({}); approve it first with `quiver mcp trust {name}`",
                server.source.display()
            );
        }
    }
    Ok(server.clone())
}

fn store_for(server: &ServerConfig) -> anyhow::Result<FileTokenStore> {
    FileTokenStore::for_server(server).context("no state directory for tokens (set QUIVER_STATE_DIR)")
}

pub fn login(args: LoginArgs) -> anyhow::Result<ExitCode> {
    let server = http_server(args.workspace.as_deref(), args.config.as_deref(), &args.name)?;
    let store = store_for(&server)?;
    let path = store.path().to_path_buf();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let say = |line: &str| eprintln!("{line}");
    let options = LoginOptions {
        browser: if args.headless { Browser::Headless } else { Browser::System },
        timeout: Duration::from_secs(args.timeout.max(1)),
        say: &say,
        scopes: None,
        challenge: None,
    };
    let scopes = runtime.block_on(oauth::login(&server, store, options)).map_err(anyhow::Error::msg)?;
    let scopes = if scopes.is_empty() { String::new() } else { format!(" (scopes: {})", scopes.join(" ")) };
    setup::out(&format!("signed in to `{}`{scopes}; token stored in {}", server.name, path.display()));
    Ok(ExitCode::SUCCESS)
}

pub fn logout(args: LoginArgs) -> anyhow::Result<ExitCode> {
    // Logging out needs no approval: it only deletes the user's own file.
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let loaded =
        McpConfig::load_for_workspace(Some(&dir), args.config.as_deref()).context("reading the MCP server config")?;
    let Some(server) = loaded.servers.get(&args.name) else {
        bail!("no MCP server named `{}` in the config", args.name);
    };
    let store = store_for(server)?;
    let removed = store.delete()?;
    setup::out(&format!(
        "{} `{}` ({})",
        if removed { "signed out of" } else { "had no sign-in for" },
        args.name,
        store.path().display()
    ));
    Ok(ExitCode::SUCCESS)
}

pub fn conformance_client(args: ConformanceArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let say = |line: &str| eprintln!("{line}");
    let timeout = Duration::from_secs(args.timeout.max(1));
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").ok();
    let oauth = oauth_from_context(context.as_deref())?;
    let given = calls_from_context(context.as_deref())?;
    // The revision the suite runs the scenario at: from 2026-07-28 quiver
    // opens as `protocol = "auto"` would; before it, a session (a server of
    // an older revision may answer `server/discover` with an empty result,
    // which no fallback can tell from a broken one).
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let protocol = if version.as_str() >= "2026-07-28" { Protocol::Auto } else { Protocol::Initialize };
    let report = runtime
        .block_on(quiver_mcp::client::probe::run(&args.url, oauth, protocol, &given, timeout, &say))
        .map_err(anyhow::Error::msg)?;
    let mut failed = false;
    for (tool, outcome) in &report.calls {
        match outcome {
            Ok(text) => setup::out(&format!("{tool}: {text}")),
            Err(e) => {
                failed = true;
                eprintln!("{tool}: error: {e}");
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
