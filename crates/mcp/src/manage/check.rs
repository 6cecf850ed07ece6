//! Starting servers to see that they work (`quiver mcp validate`) and
//! listing what they offer (`quiver mcp tools`), through the same path a
//! model's first call takes: the command gate (deny rules; a project's
//! server only once approved), the start bounded by `startup_timeout_ms`,
//! `initialize` and `tools/list`, then the names quiver registers the tools
//! under ([`McpManager::exposed_tools`]).

use std::time::{Duration, Instant};

use quiver_engine::ToolContext;
use quiver_engine::permissions::trust::Source;
use serde::Serialize;

use crate::client::tool::spec_for;
use crate::client::{McpManager, ServerError, ServerHandle, ToolOrigin};

/// Why a server could not be looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// No server has that name; the text says which ones there are.
    #[error("{0}")]
    UnknownServer(String),
    #[error(
        "MCP server `{name}` is disabled (`enabled = false` in {config}); `quiver mcp enable {name}` turns it back on"
    )]
    Disabled { name: String, config: String },
    /// The command gate did not let it start; its reason.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// One tool as quiver exposes it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    /// The name a model calls: `mcp__<server>__<tool>`, or the server's own
    /// for a direct server. `None` when `enabled_tools`/`disabled_tools`
    /// keep it out.
    pub name: Option<String>,
    /// The name on the server.
    pub server_name: String,
    pub description: String,
    /// `read`, `destructive` or `external`, from the tool's annotations.
    pub risk: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum CheckOutcome {
    /// Started and listed its tools.
    Ok,
    Failed(String),
    /// `enabled = false`: not started.
    Disabled,
    /// Not started, and not a fault of the server (a project's server not
    /// approved yet, when not asked for by name).
    Skipped(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerCheck {
    pub server: String,
    pub transport: String,
    pub target: String,
    #[serde(flatten)]
    pub outcome: CheckOutcome,
    /// Start, `initialize` and `tools/list`, in milliseconds (0 when not started).
    pub elapsed_ms: u64,
    pub tools: Vec<ToolInfo>,
}

impl ServerCheck {
    pub fn failed(&self) -> bool {
        matches!(self.outcome, CheckOutcome::Failed(_))
    }
}

/// Checks the servers named (every server when `names` is empty), side by
/// side, each bounded by its own startup timeout; results in name order.
/// A name asked for explicitly that cannot be checked counts as failed.
pub async fn check(manager: &McpManager, ctx: &ToolContext, names: &[String]) -> Result<Vec<ServerCheck>, CheckError> {
    for name in names {
        if manager.server(name).is_none() {
            return Err(CheckError::UnknownServer(manager.unknown_server(name)));
        }
    }
    let explicit = !names.is_empty();
    let chosen: Vec<&std::sync::Arc<ServerHandle>> =
        manager.servers().filter(|s| !explicit || names.iter().any(|n| n == s.name())).collect();
    let checks = chosen.into_iter().map(|server| check_one(manager, server, ctx, explicit));
    Ok(futures::future::join_all(checks).await)
}

async fn check_one(manager: &McpManager, server: &ServerHandle, ctx: &ToolContext, explicit: bool) -> ServerCheck {
    let mut check = ServerCheck {
        server: server.name().to_string(),
        transport: server.config().transport.kind().to_string(),
        target: super::inspect::target(&server.config().transport),
        outcome: CheckOutcome::Ok,
        elapsed_ms: 0,
        tools: Vec::new(),
    };
    if !server.config().enabled {
        check.outcome = if explicit {
            CheckOutcome::Failed(format!("disabled (`enabled = false` in {})", server.config().source.display()))
        } else {
            CheckOutcome::Disabled
        };
        return check;
    }
    if let Err(e) = server.authorize(ctx).await {
        let reason = e.to_string();
        check.outcome = if server.config().trust == Source::Project && !explicit {
            CheckOutcome::Skipped(reason)
        } else {
            CheckOutcome::Failed(reason)
        };
        return check;
    }
    let started = Instant::now();
    let listed = server.refresh().await;
    check.elapsed_ms = millis(started.elapsed());
    match listed {
        Ok(_) => check.tools = tools(manager, server),
        Err(e) => check.outcome = CheckOutcome::Failed(e.to_string()),
    }
    check
}

/// Fails the checks of servers whose tools could not be registered: a
/// direct server's tool named like a native tool or another direct server's.
/// Those are found when the engine is built with the lists [`check`] just
/// read, so the caller rebuilds it first (`EngineHost::engine`).
pub fn note_config_errors(manager: &McpManager, checks: &mut [ServerCheck]) {
    for check in checks.iter_mut().filter(|c| matches!(c.outcome, CheckOutcome::Ok)) {
        let errors = manager.server(&check.server).map(|s| s.config_errors()).unwrap_or_default();
        if !errors.is_empty() {
            check.outcome = CheckOutcome::Failed(errors.join("\n"));
        }
    }
}

/// The tools `server` is known to offer (a live list once it ran in this
/// process, else the cached one from its last run), in quiver-name order,
/// those kept out by `enabled_tools`/`disabled_tools` last.
pub fn tools(manager: &McpManager, server: &ServerHandle) -> Vec<ToolInfo> {
    let exposed = manager.exposed_tools(server);
    let mut out: Vec<ToolInfo> = exposed
        .iter()
        .map(|(name, remote)| {
            let spec = spec_for(server.name(), name.clone(), remote);
            ToolInfo {
                name: Some(name.clone()),
                server_name: remote.name.clone(),
                description: spec.description,
                risk: spec.risk.as_str(),
            }
        })
        .collect();
    let (known, _) = server.known_tools();
    let mut hidden: Vec<ToolInfo> = known
        .iter()
        .filter(|t| !exposed.iter().any(|(_, r)| r.name == t.name))
        .map(|remote| {
            let spec = spec_for(server.name(), String::new(), remote);
            ToolInfo {
                name: None,
                server_name: remote.name.clone(),
                description: spec.description,
                risk: spec.risk.as_str(),
            }
        })
        .collect();
    hidden.sort_by(|a, b| a.server_name.cmp(&b.server_name));
    out.extend(hidden);
    out
}

/// `server`'s tools, live (started through the gate like [`check`]) or as
/// cached from its last run (`live: false`, nothing started).
pub async fn server_tools(
    manager: &McpManager,
    ctx: &ToolContext,
    name: &str,
    live: bool,
) -> Result<(Vec<ToolInfo>, ToolOrigin), CheckError> {
    let server = manager.server(name).ok_or_else(|| CheckError::UnknownServer(manager.unknown_server(name)))?;
    if !server.config().enabled {
        return Err(CheckError::Disabled {
            name: name.to_string(),
            config: server.config().source.display().to_string(),
        });
    }
    if live {
        server.authorize(ctx).await.map_err(|e| CheckError::Refused(e.to_string()))?;
        server.refresh().await?;
    }
    Ok((tools(manager, server), server.tool_origin()))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
