//! `quiver mcp add|list|get|remove|enable|disable|validate|tools|import`:
//! argument parsing and output only. What each does lives in
//! `quiver_mcp::manage`, which the terminal front end's `/mcp` shares.
//!
//! Exit status: 0 done; 1 a check failed (`validate`, `tools`) or an import
//! was refused; 2 a usage or config error (an unknown name, a file quiver
//! cannot read), the file left as it was.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::builder::TypedValueParser as _;
use quiver_engine::permissions::trust::TrustStore;
use quiver_engine::{Audience, Mode, Workspace};
use quiver_mcp::McpConfig;
use quiver_mcp::client::ToolCache;
use quiver_mcp::config::{Expose, Protocol};
use quiver_mcp::manage::{
    self, Added, CheckOutcome, ImportOptions, NewServer, NewTransport, ServerCheck, ServerInfo, ToolInfo, UserConfig,
};

use crate::setup::{self, out};

#[derive(clap::Args)]
pub struct AddArgs {
    /// The server's name: letters, digits, `-` and `_` (its tools become `mcp__NAME__<tool>`).
    name: String,
    /// A streamable HTTP server at this URL (instead of a command after `--`).
    #[arg(long, conflicts_with_all = ["env", "cwd", "command"])]
    url: Option<String>,
    /// An HTTP header to send, curl-style (repeatable).
    #[arg(long = "header", value_name = "'NAME: VALUE'", requires = "url")]
    headers: Vec<String>,
    /// Send `Authorization: Bearer $VAR`, read from this environment variable when connecting.
    #[arg(long, value_name = "VAR", requires = "url")]
    bearer_token_env: Option<String>,
    /// An environment variable for the server process (repeatable).
    #[arg(long = "env", short = 'e', value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// The server's working directory (default: your home).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Seconds the server may take to start and list its tools (default 30).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Seconds one tool call may take (default 60).
    #[arg(long, value_name = "SECS")]
    tool_timeout: Option<f64>,
    /// `search` (default: behind tool_search) or `direct` (its tools in every first turn, under their own names).
    #[arg(long, value_enum)]
    expose: Option<ExposeArg>,
    /// `initialize` (default: a session at 2025-11-25) or `auto` (MCP 2026-07-28 when the server speaks it).
    // The library's names and parser, so a value the config reader refuses cannot be written.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(Protocol::NAMES)
        .try_map(|text| text.parse::<Protocol>()))]
    protocol: Option<Protocol>,
    /// Add it switched off (listed, not started).
    #[arg(long)]
    disabled: bool,
    /// Replace a server of the same name.
    #[arg(long)]
    force: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD ARGS")]
    command: Vec<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ExposeArg {
    Search,
    Direct,
}

#[derive(clap::Args)]
pub struct ListArgs {
    #[arg(long)]
    json: bool,
    /// Also show the servers this workspace's .mcp.json / quiver.toml define (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct GetArgs {
    name: String,
    #[arg(long)]
    json: bool,
    /// Show env and header values that look like secrets instead of masking them.
    #[arg(long)]
    show_secrets: bool,
    #[arg(long)]
    workspace: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct NameArgs {
    /// The server's name in your config.
    name: String,
}

#[derive(clap::Args)]
pub struct ValidateArgs {
    /// Only these servers (default: every enabled one).
    names: Vec<String>,
    #[arg(long)]
    json: bool,
    #[arg(long)]
    workspace: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ToolsArgs {
    name: String,
    #[arg(long)]
    json: bool,
    /// The list cached at the server's last run; nothing is started.
    #[arg(long)]
    cached: bool,
    #[arg(long)]
    workspace: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// A Claude-style JSON file (`{"mcpServers": {...}}`: claude_desktop_config.json, .mcp.json).
    #[arg(required_unless_present = "from_claude", conflicts_with = "from_claude")]
    file: Option<PathBuf>,
    /// The same, named for what it is.
    #[arg(long, value_name = "FILE")]
    from_claude: Option<PathBuf>,
    /// Replace servers of the same name in your config.
    #[arg(long)]
    force: bool,
    /// Import only these entries (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    only: Vec<String>,
    /// Write the current value of `${VAR}` references into your config (quiver's config does not expand them).
    #[arg(long)]
    expand_env: bool,
    /// Say what would be imported; write nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn add(args: AddArgs) -> anyhow::Result<ExitCode> {
    let transport = match (&args.url, args.command.split_first()) {
        (Some(_), Some(_)) => bail!("give either --url URL or a command after `--`, not both"),
        (None, None) => bail!(
            "nothing to run: give the command after `--` (quiver mcp add {0} -- npx -y some-server) or --url URL",
            args.name
        ),
        (Some(url), None) => {
            let headers = args.headers.iter().map(|h| manage::new_server::parse_header(h)).collect::<Result<_, _>>();
            NewTransport::Http { url: url.clone(), headers: headers?, bearer_token_env: args.bearer_token_env.clone() }
        }
        (None, Some((command, rest))) => {
            let env = args.env.iter().map(|e| manage::new_server::parse_env_pair(e)).collect::<Result<_, _>>();
            let cwd = match &args.cwd {
                // Relative to where the command was typed, not to the config file.
                Some(dir) => Some(std::path::absolute(dir).context("resolving --cwd")?),
                None => None,
            };
            NewTransport::Stdio { command: command.clone(), args: rest.to_vec(), env: env?, cwd }
        }
    };
    let server = NewServer {
        name: args.name.clone(),
        transport,
        enabled: !args.disabled,
        startup_timeout: seconds("--timeout", args.timeout)?,
        tool_timeout: seconds("--tool-timeout", args.tool_timeout)?,
        expose: args.expose.map(|e| match e {
            ExposeArg::Search => Expose::Search,
            ExposeArg::Direct => Expose::Direct,
        }),
        protocol: args.protocol,
    };
    let mut config = UserConfig::open_default()?;
    let added = config.add(&server, args.force)?;
    config.save()?;
    let verb = if added == Added::Replaced { "replaced" } else { "added" };
    let named = if server.expose == Some(Expose::Direct) {
        "its tools keep their own names, in every first turn".to_string()
    } else {
        format!("its tools are named mcp__{}__<tool>", server.name)
    };
    out(&format!("{verb} `{}` in {} ({named})", server.name, config.path().display()));
    if server.enabled {
        out(&format!("check it with: quiver mcp validate {}", server.name));
    }
    Ok(ExitCode::SUCCESS)
}

fn seconds(flag: &str, secs: Option<f64>) -> anyhow::Result<Option<Duration>> {
    match secs {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => bail!("{flag} {s}: give a positive number of seconds"),
    }
}

/// Every configured server: the user's own and, for a workspace, its project's.
fn effective(workspace: Option<&Path>) -> anyhow::Result<(McpConfig, PathBuf)> {
    let dir = setup::workspace_dir(workspace)?;
    let config = McpConfig::load_for_workspace(Some(&dir), None).context("reading the MCP server config")?;
    Ok((config, dir))
}

pub fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let (config, _) = effective(args.workspace.as_deref())?;
    let trust = TrustStore::from_env();
    let infos: Vec<ServerInfo> = config.servers.values().map(|s| manage::inspect::describe(s, false, &trust)).collect();
    if args.json {
        out(&serde_json::to_string_pretty(&infos)?);
        return Ok(ExitCode::SUCCESS);
    }
    if infos.is_empty() {
        out(&format!(
            "no MCP servers configured; add one with `quiver mcp add NAME -- CMD ARGS` or `quiver mcp add NAME --url URL` \
             (your config: {})",
            UserConfig::default_path()?.display()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 6]> = infos
        .iter()
        .map(|i| {
            let source = match i.approved {
                Some(true) => format!("{} (project, approved)", i.source.display()),
                Some(false) => format!("{} (project: `quiver mcp trust {}` to allow it)", i.source.display(), i.name),
                None => i.source.display().to_string(),
            };
            let protocol = i.protocol.to_string();
            [i.name.clone(), state(i.enabled).into(), i.transport.clone(), protocol, i.target.clone(), source]
        })
        .collect();
    table(&["NAME", "STATE", "TRANSPORT", "PROTOCOL", "COMMAND / URL", "SOURCE"], &rows);
    Ok(ExitCode::SUCCESS)
}

fn state(enabled: bool) -> &'static str {
    if enabled { "enabled" } else { "disabled" }
}

/// Left-aligned columns; the last one is never padded.
fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out(s.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

pub fn get(args: GetArgs) -> anyhow::Result<ExitCode> {
    let (config, _) = effective(args.workspace.as_deref())?;
    let Some(server) = config.servers.get(&args.name) else {
        bail!("{}", unknown(&config, &args.name));
    };
    let info = manage::inspect::describe(server, args.show_secrets, &TrustStore::from_env());
    let cached = ToolCache::from_env().load(server).map(|t| t.len());
    if args.json {
        let mut value = serde_json::to_value(&info)?;
        value["cached_tools"] = serde_json::json!(cached);
        out(&serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows: Vec<(&str, String)> = vec![
        ("state", state(info.enabled).into()),
        ("scope", format!("{} ({})", info.scope, info.source.display())),
        ("transport", info.transport.clone()),
    ];
    if let Some(approved) = info.approved {
        let how = if approved { "yes".into() } else { format!("no (`quiver mcp trust {}` allows it)", info.name) };
        rows.push(("approved", how));
    }
    if let Some(command) = &info.command {
        rows.push(("command", command.clone()));
        if !info.args.is_empty() {
            rows.push(("args", quiver_engine::permissions::command::shown_argv(&info.args)));
        }
        rows.push(("cwd", info.cwd.as_ref().map_or("(your home)".into(), |c| c.display().to_string())));
        if !info.env.is_empty() {
            rows.push(("env", pairs(&info.env, "=")));
        }
    }
    if let Some(url) = &info.url {
        rows.push(("url", url.clone()));
        if !info.headers.is_empty() {
            rows.push(("headers", pairs(&info.headers, ": ")));
        }
        if let Some(var) = &info.bearer_token_env {
            rows.push(("bearer token", format!("from ${var}")));
        }
        for (k, v) in &info.oauth {
            rows.push(("oauth", format!("{k} = {v}")));
        }
    }
    if let Some(reason) = &info.unsupported {
        rows.push(("unsupported", reason.clone()));
    }
    let expose = if info.expose == "direct" {
        "direct (its own tool names, in every first turn)".to_string()
    } else {
        format!("search (tools named {}<tool>, found by tool_search)", info.tool_prefix)
    };
    rows.push(("expose", expose));
    let protocol = if info.protocol == Protocol::Auto.as_str() {
        "auto (MCP 2026-07-28 when the server speaks it, else an initialize session)"
    } else {
        "initialize (an initialize session, the default)"
    };
    rows.push(("protocol", protocol.to_string()));
    if let Some(list) = &info.enabled_tools {
        rows.push(("enabled_tools", list.join(", ")));
    }
    if !info.disabled_tools.is_empty() {
        rows.push(("disabled_tools", info.disabled_tools.join(", ")));
    }
    rows.push(("startup timeout", format!("{} ms", info.startup_timeout_ms)));
    rows.push(("tool timeout", format!("{} ms", info.tool_timeout_ms)));
    rows.push((
        "tools",
        match cached {
            Some(n) => format!("{n} cached from its last run (`quiver mcp tools {}` lists them live)", info.name),
            None => format!("none known yet (`quiver mcp tools {}` starts it and lists them)", info.name),
        },
    ));
    out(&info.name);
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        out(&format!("  {k:<width$}  {v}"));
    }
    Ok(ExitCode::SUCCESS)
}

fn pairs(map: &std::collections::BTreeMap<String, String>, sep: &str) -> String {
    map.iter().map(|(k, v)| format!("{k}{sep}{v}")).collect::<Vec<_>>().join(", ")
}

fn unknown(config: &McpConfig, name: &str) -> String {
    let names: Vec<String> = config.servers.keys().map(|n| format!("`{n}`")).collect();
    if names.is_empty() {
        format!("no MCP server named `{name}`: none are configured (`quiver mcp add` adds one)")
    } else {
        format!("no MCP server named `{name}`; configured: {}", names.join(", "))
    }
}

pub fn remove(args: NameArgs) -> anyhow::Result<ExitCode> {
    let mut config = open_for(&args.name)?;
    config.remove(&args.name)?;
    config.save()?;
    out(&format!("removed `{}` from {}", args.name, config.path().display()));
    note_project_twin(&args.name, config.path());
    Ok(ExitCode::SUCCESS)
}

pub fn set_enabled(args: NameArgs, enabled: bool) -> anyhow::Result<ExitCode> {
    let mut config = open_for(&args.name)?;
    let changed = config.set_enabled(&args.name, enabled)?;
    config.save()?;
    if changed {
        let (what, after) = if enabled { ("enabled", "") } else { ("disabled", " (still listed, never started)") };
        out(&format!("{what} `{}` in {}{after}", args.name, config.path().display()));
    } else {
        out(&format!("`{}` was already {}", args.name, state(enabled)));
    }
    note_project_twin(&args.name, config.path());
    Ok(ExitCode::SUCCESS)
}

/// The user's config, once it is known to define `name`; else an error that
/// names where the server does come from (a project's file is never edited).
fn open_for(name: &str) -> anyhow::Result<UserConfig> {
    let config = UserConfig::open_default()?;
    if config.contains(name) {
        return Ok(config);
    }
    let effective =
        setup::workspace_dir(None).ok().and_then(|dir| McpConfig::load_for_workspace(Some(&dir), None).ok());
    Err(config.not_here(name, effective.as_ref()).into())
}

/// A project's server of the same name wins in its workspace: say so, or
/// the edit seems to do nothing there.
fn note_project_twin(name: &str, user_file: &Path) {
    let Ok(dir) = setup::workspace_dir(None) else { return };
    let Ok(config) = McpConfig::load_for_workspace(Some(&dir), None) else { return };
    if let Some(server) = config.servers.get(name).filter(|s| s.source != user_file) {
        eprintln!(
            "note: in {} the project's {} also defines `{name}`, and that definition is the one used there",
            dir.display(),
            server.source.display()
        );
    }
}

/// A runtime, the engine host over the configured servers, and a context
/// for starting them the way a model's first call would.
fn with_servers<T>(
    workspace: Option<&Path>,
    run: impl AsyncFnOnce(&quiver_engine::EngineHost, &quiver_mcp::McpManager, &quiver_engine::ToolContext) -> T,
) -> anyhow::Result<T> {
    let dir = setup::workspace_dir(workspace)?;
    let ws = Workspace::new(&dir).with_context(|| format!("workspace {}", dir.display()))?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let (host, manager) = setup::host(Some(&dir), None, None, &quiver_tools::NativeOptions::default())?;
        let audience = Audience { provider: "default".into(), model: None, mode: Mode::Agent };
        let ctx = host.context(ws, audience);
        let result = run(&host, &manager, &ctx).await;
        manager.shutdown().await;
        Ok::<T, anyhow::Error>(result)
    })
}

pub fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    // The files first, each on its own: a broken project file is skipped
    // at run time with a warning; here it is a failure with its reason.
    let dir = setup::workspace_dir(args.workspace.as_deref())?;
    let sources = quiver_mcp::config::ConfigSources::discover(Some(&dir), None);
    let mut file_errors = Vec::new();
    for path in &sources.files {
        let read = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()));
        if let Err(e) = read.and_then(|text| quiver_mcp::config::parse_file(path, &text).map_err(|e| e.to_string())) {
            if !sources.project_files.contains(path) {
                bail!("{e}");
            }
            file_errors.push(e);
        }
    }
    let checks = with_servers(Some(&dir), async |host, manager, ctx| {
        let mut checks = manage::check::check(manager, ctx, &args.names).await?;
        // Registering the lists just read is what finds a direct server's clashing names.
        host.engine();
        manage::check::note_config_errors(manager, &mut checks);
        Ok::<_, manage::check::CheckError>(checks)
    })??;
    let failed = !file_errors.is_empty() || checks.iter().any(ServerCheck::failed);
    if args.json {
        let report = serde_json::json!({ "ok": !failed, "config_errors": file_errors, "servers": checks });
        out(&serde_json::to_string_pretty(&report)?);
    } else {
        print_checks(&file_errors, &checks);
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn print_checks(file_errors: &[String], checks: &[ServerCheck]) {
    for e in file_errors {
        out(&format!("FAILED    config: {e} (its servers are left out)"));
    }
    if checks.is_empty() && file_errors.is_empty() {
        out("no MCP servers configured; nothing to check");
        return;
    }
    let width = checks.iter().map(|c| c.server.len()).max().unwrap_or(0);
    let (mut ok, mut failed, mut other) = (0, 0, 0);
    for c in checks {
        let head = |status: &str| format!("{status:<8}  {:<width$}  {:<5}", c.server, c.transport);
        match &c.outcome {
            CheckOutcome::Ok => {
                ok += 1;
                let n = c.tools.iter().filter(|t| t.name.is_some()).count();
                out(&format!("{}  {n} tool{} in {} ms  ({})", head("ok"), plural(n), c.elapsed_ms, c.target));
                for line in tool_lines(&c.tools) {
                    out(&format!("    {line}"));
                }
            }
            CheckOutcome::Failed(reason) => {
                failed += 1;
                let took = if c.elapsed_ms > 0 { format!(" after {} ms", c.elapsed_ms) } else { String::new() };
                out(&format!("{}  failed{took}  ({})", head("FAILED"), c.target));
                for line in reason.lines() {
                    out(&format!("    {line}"));
                }
            }
            CheckOutcome::Disabled => {
                other += 1;
                out(&format!("{}  not started (`quiver mcp enable {}`)", head("disabled"), c.server));
            }
            CheckOutcome::Skipped(reason) => {
                other += 1;
                out(&format!("{}  not started: {reason}", head("skipped")));
            }
        }
    }
    let failed = failed + file_errors.len();
    out(&format!("{} checked: {ok} ok, {failed} failed, {other} not started", plural_of(checks.len(), "server")));
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn plural_of(n: usize, what: &str) -> String {
    format!("{n} {what}{}", plural(n))
}

/// One line per tool, names in a column.
fn tool_lines(tools: &[ToolInfo]) -> Vec<String> {
    let width = tools.iter().filter_map(|t| t.name.as_ref()).map(String::len).max().unwrap_or(0);
    tools.iter().map(|t| tool_line(t, width)).collect()
}

/// `name  [risk]  first line of the description` (a filtered tool by its server-side name).
fn tool_line(tool: &ToolInfo, width: usize) -> String {
    let first = tool.description.lines().next().unwrap_or("").trim();
    let first: String = if first.chars().count() > 100 {
        format!("{}…", first.chars().take(100).collect::<String>())
    } else {
        first.to_string()
    };
    match &tool.name {
        Some(name) => format!("{name:<width$}  [{}]  {first}", tool.risk),
        None => format!("({} hidden by enabled_tools/disabled_tools)", tool.server_name),
    }
}

pub fn tools(args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let listed = with_servers(args.workspace.as_deref(), async |_, manager, ctx| {
        manage::check::server_tools(manager, ctx, &args.name, !args.cached).await
    })?;
    let (tools, origin) = match listed {
        Ok(listed) => listed,
        Err(e) => {
            eprintln!("quiver: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if args.json {
        let report = serde_json::json!({ "server": args.name, "from": origin, "tools": tools });
        out(&serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    for line in tool_lines(&tools) {
        out(&line);
    }
    let from = match origin {
        quiver_mcp::client::ToolOrigin::Live => "listed live",
        quiver_mcp::client::ToolOrigin::Cache => "cached from its last run",
        quiver_mcp::client::ToolOrigin::None => "none known yet: run without --cached to start it",
    };
    let n = tools.iter().filter(|t| t.name.is_some()).count();
    out(&format!("{} of `{}` ({from})", plural_of(n, "tool"), args.name));
    Ok(ExitCode::SUCCESS)
}

pub fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let Some(file) = args.file.as_ref().or(args.from_claude.as_ref()) else {
        bail!("give the file to import (quiver mcp import FILE)");
    };
    let mut config = UserConfig::open_default()?;
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let options = ImportOptions { force: args.force, only: args.only.clone(), expand_env: args.expand_env };
    let plan = manage::import::plan(file, &text, &options, &config)?;
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    if !plan.problems.is_empty() {
        eprintln!("quiver: nothing was imported from {}:", file.display());
        for (name, why) in &plan.problems {
            eprintln!("  {name}: {why}");
        }
        return Ok(ExitCode::from(1));
    }
    if plan.servers.is_empty() {
        out(&format!("{} defines no servers to import", file.display()));
        return Ok(ExitCode::SUCCESS);
    }
    let replaced: Vec<&str> =
        plan.servers.iter().filter(|s| config.contains(&s.name)).map(|s| s.name.as_str()).collect();
    manage::import::apply(&mut config, &plan, args.force)?;
    if args.dry_run {
        config.check()?;
    } else {
        config.save()?;
    }
    let verb = if args.dry_run { "would import" } else { "imported" };
    for server in &plan.servers {
        let how = if replaced.contains(&server.name.as_str()) { " (replaced)" } else { "" };
        out(&format!("{verb} `{}`{how}", server.name));
    }
    out(&format!("{verb} {} into {}", plural_of(plan.servers.len(), "server"), config.path().display()));
    Ok(ExitCode::SUCCESS)
}
