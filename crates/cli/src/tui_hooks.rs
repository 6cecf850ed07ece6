//! What the interactive front end asks of the composing program: the Work
//! panel's facts (the tools' session state), the palette's tools, the job
//! center (the same shell manager `exec_shell` and `task_shell_start` use),
//! the MCP manager (the same code as `quiver mcp ...`), recorded sessions.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_agent::BoxFuture;
use quiver_agent::exec::resume;
use quiver_agent::subagent::AgentHub;
use quiver_engine::transcript::Transcript;
use quiver_engine::{EngineHost, ToolContext, ToolSource};
use quiver_mcp::McpManager;
use quiver_tools::planning::checklist::{Checklist, ItemStatus};
use quiver_tools::shell::shell_jobs::{Job, ShellJobs};
use quiver_tui::driver::Hooks;
use quiver_tui::palette::PaletteTool;
use quiver_tui::work::{AgentLine, JobLine, WorkSnapshot};

/// Output lines a job panel shows, at most (the log file has all of it).
const JOB_TAIL_LINES: usize = 60;
/// `/jobs wait` waits this long for an exit at most.
const JOB_WAIT: Duration = Duration::from_secs(30);

pub(crate) struct CliHooks {
    pub host: Arc<EngineHost>,
    pub manager: Arc<McpManager>,
    pub agents: Arc<AgentHub>,
    pub workspace: PathBuf,
}

fn job_state(job: &Job) -> String {
    match job.exit() {
        None => "running".into(),
        Some(exit) => match (job.stopped_because(), exit.signal) {
            (Some(_), _) => "stopped".into(),
            (None, Some(signal)) => format!("killed ({signal})"),
            (None, None) => format!("exit {}", exit.code),
        },
    }
}

fn tail(text: &str, lines: usize) -> Vec<String> {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].iter().map(|l| l.to_string()).collect()
}

fn job_lines(job: &Job, output: &str) -> Vec<String> {
    let mut lines = vec![
        format!("id       {}", job.id),
        format!("command  {}", job.command),
        format!("cwd      {}", job.cwd_shown),
        format!("status   {} · {:.1}s", job_state(job), job.elapsed().as_secs_f64()),
        format!("log      {}", job.log_path.display()),
    ];
    if let Some(task) = quiver_tools::work::active_task() {
        lines.push(format!("task     {task} (the durable task this session works on)"));
    }
    lines.push(String::new());
    lines.extend(tail(output, JOB_TAIL_LINES));
    lines
}

impl CliHooks {
    async fn jobs_command(&self, ctx: &ToolContext, args: &[String]) -> Result<Vec<String>, String> {
        let jobs = ctx.session.state::<ShellJobs>();
        let (verb, id) = (args.first().map(String::as_str), args.get(1));
        let job = || -> Result<Arc<Job>, String> {
            let id = id.ok_or_else(|| "which job? /jobs show ID (ids are in /jobs)".to_string())?;
            jobs.get(id).map_err(|e| e.to_string())
        };
        match verb {
            None | Some("list") => {
                let all = jobs.background();
                let stale = remembered_jobs(ctx, &all);
                if all.is_empty() && stale.is_empty() {
                    return Ok(vec![
                        "no shell jobs in this session (exec_shell with background: true starts one)".into(),
                    ]);
                }
                let mut lines = vec![format!("{:<9} {:<10} {:>8}  command", "id", "status", "elapsed")];
                for job in &all {
                    let last = job.whole_output().0.lines().last().unwrap_or_default().to_string();
                    lines.push(format!(
                        "{:<9} {:<10} {:>7.1}s  {}  ({})",
                        job.id,
                        job_state(job),
                        job.elapsed().as_secs_f64(),
                        job.command,
                        job.cwd_shown
                    ));
                    if !last.is_empty() {
                        lines.push(format!("          │ {last}"));
                    }
                }
                for (id, command) in &stale {
                    lines.push(format!(
                        "{id:<9} {:<10} {:>8}  {command}  (started before quiver restarted; not running)",
                        "stale", "-"
                    ));
                }
                lines.push(String::new());
                lines.push("/jobs show|poll|wait|cancel ID · /jobs stdin ID TEXT".into());
                Ok(lines)
            }
            Some("show") => {
                let job = job()?;
                let (output, ..) = job.whole_output();
                Ok(job_lines(&job, &output))
            }
            Some("poll") => {
                let job = job()?;
                let (output, ..) = job.take_unread();
                Ok(job_lines(&job, if output.is_empty() { "(no new output)" } else { &output }))
            }
            Some("wait") => {
                let job = job()?;
                let start = Instant::now();
                while job.exit().is_none() && start.elapsed() < JOB_WAIT {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let (output, ..) = job.whole_output();
                Ok(job_lines(&job, &output))
            }
            Some("cancel") => {
                let job = job()?;
                if job.exit().is_some() {
                    return Ok(vec![format!("{} has already finished: {}", job.id, job.status_line())]);
                }
                job.stop("cancelled from /jobs", Duration::from_secs(2)).await;
                Ok(vec![job.status_line()])
            }
            Some("stdin") => {
                let job = job()?;
                let text = args.get(2..).map(|rest| rest.join(" ")).unwrap_or_default();
                job.send_input(format!("{text}\n").as_bytes()).map_err(|e| e.to_string())?;
                Ok(vec![format!("sent {} bytes to {}", text.len() + 1, job.id)])
            }
            Some(other) => Err(format!("/jobs {other}: expected show, poll, wait, stdin or cancel")),
        }
    }

    /// The live state of this session's servers (what `quiver mcp list`
    /// cannot know: connections, errors, discovered tools).
    fn mcp_live(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for server in self.manager.servers() {
            let status = server.status();
            let (tools, _) = server.known_tools();
            lines.push(format!(
                "{:<16} {:<13} {} tools  {}",
                server.name(),
                format!("{:?}", status.state).to_lowercase(),
                tools.len(),
                quiver_mcp::manage::inspect::target(&server.config().transport),
            ));
            if let Some(error) = status.last_error {
                lines.extend(error.lines().take(4).map(|l| format!("    ! {l}")));
            }
            for tool in tools.iter().take(12) {
                lines.push(format!("    {}{}", server.prefix(), tool.name));
            }
        }
        if lines.is_empty() {
            lines.push("no MCP servers configured (`/mcp add NAME -- CMD ARGS` adds one)".into());
        }
        lines
    }

    /// `quiver mcp ARGS` as a child process: the same code, config edits and
    /// messages as on the command line, so the two cannot drift.
    async fn mcp_cli(&self, args: &[String]) -> Result<Vec<String>, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find the quiver binary: {e}"))?;
        let mut command = tokio::process::Command::new(exe);
        command.arg("mcp").args(args).current_dir(&self.workspace).stdin(std::process::Stdio::null());
        // `validate` starts servers that may need a bearer or OAuth secret:
        // the child is quiver too, and withholds them again itself.
        command.envs(quiver_sandbox::withheld_env());
        let output = command.output().await.map_err(|e| format!("cannot run quiver mcp: {e}"))?;
        let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect();
        lines.extend(String::from_utf8_lossy(&output.stderr).lines().map(str::to_string));
        if !output.status.success() {
            lines.push(format!("(quiver mcp {} exited with {})", args.join(" "), output.status));
        }
        Ok(lines)
    }
}

/// What `/mcp init` writes when the user has no config file yet: comments
/// only, so nothing changes until the person adds a server.
const CONFIG_TEMPLATE: &str = "# quiver's settings. `quiver mcp add` and the terminal's /mcp edit this file\n\
# in place and keep your comments.\n\
#\n\
# MCP servers quiver starts for their tools (named mcp__NAME__<tool> to the model):\n\
# [mcp_servers.everything]\n\
# command = \"npx\"\n\
# args = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n\
#\n\
# [mcp_servers.docs]\n\
# url = \"https://example.com/mcp\"\n\
# bearer_token_env = \"DOCS_TOKEN\"\n";

/// `/mcp init`: the user's config file, created with a commented example
/// when there is none; an existing file is never touched.
fn mcp_init() -> Result<Vec<String>, String> {
    let path = quiver_mcp::manage::UserConfig::default_path().map_err(|e| e.to_string())?;
    if path.exists() {
        return Ok(vec![
            format!("{} exists (left as it is)", path.display()),
            "/mcp add NAME -- CMD ARGS adds a server to it".into(),
        ]);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut file, CONFIG_TEMPLATE.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut lines = vec![format!("wrote {}:", path.display()), String::new()];
    lines.extend(CONFIG_TEMPLATE.lines().map(str::to_string));
    Ok(lines)
}

/// Background jobs the session's transcript records that no live job of
/// this process is (a resumed session's jobs died with the quiver that ran
/// them): (task id, command). A live job matches by id and process id, since
/// ids start again at 1 in each process.
fn remembered_jobs(ctx: &ToolContext, live: &[Arc<Job>]) -> Vec<(String, String)> {
    let Some(transcript) = ctx.transcript.as_ref().and_then(|t| Transcript::read(t.path()).ok()) else {
        return Vec::new();
    };
    let mut stale = Vec::new();
    for (_, args, result, _) in transcript.calls() {
        let Some(meta) = result.map(|r| &r.metadata) else { continue };
        // `task_id` in sessions recorded before one vocabulary named the job.
        let id = meta.get("job_id").or_else(|| meta.get("task_id")).and_then(|v| v.as_str());
        let (Some(id), Some(true)) = (id, meta.get("background").and_then(|v| v.as_bool())) else {
            continue;
        };
        let pid = meta.get("pid").and_then(|v| v.as_i64());
        if live.iter().any(|job| job.id == id && Some(i64::from(job.pid)) == pid) {
            continue;
        }
        let command = args.get("command").and_then(|v| v.as_str()).unwrap_or_default().to_string();
        stale.push((id.to_string(), command));
    }
    stale
}

impl Hooks for CliHooks {
    fn work(&self, ctx: &ToolContext) -> WorkSnapshot {
        let checklist = ctx
            .session
            .state::<Checklist>()
            .items()
            .into_iter()
            .map(|item| (item.status == ItemStatus::Completed, item.content))
            .collect();
        let jobs = ctx
            .session
            .state::<ShellJobs>()
            .running()
            .iter()
            .map(|job| JobLine {
                id: job.id.clone(),
                command: job.command.clone(),
                status: job_state(job),
                elapsed_secs: job.elapsed().as_secs(),
            })
            .collect();
        let agents = self
            .agents
            .list(ctx)
            .iter()
            .map(|a| AgentLine {
                id: a.id.clone(),
                name: a.name.clone(),
                state: format!("{:?}", a.status.borrow().state).to_lowercase(),
            })
            .collect();
        let task = quiver_tools::work::active_task().map(|id| (id, String::new(), "active".to_string()));
        WorkSnapshot { checklist, task, jobs, agents }
    }

    fn palette_tools(&self, ctx: &ToolContext) -> Vec<PaletteTool> {
        let engine = self.host.engine();
        engine
            .registry()
            .iter()
            .filter(|t| ctx.surface.resolve_visible(&t.spec.name, &ctx.audience).is_some())
            .map(|t| PaletteTool {
                name: t.spec.name.clone(),
                server: match &t.spec.source {
                    ToolSource::Mcp { server, .. } => Some(server.clone()),
                    ToolSource::Native => None,
                },
                description: t.spec.description.clone(),
            })
            .collect()
    }

    fn jobs<'a>(&'a self, ctx: &'a ToolContext, args: &'a [String]) -> BoxFuture<'a, Result<Vec<String>, String>> {
        Box::pin(self.jobs_command(ctx, args))
    }

    fn mcp<'a>(&'a self, _ctx: &'a ToolContext, args: &'a [String]) -> BoxFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            match args.first().map(String::as_str) {
                None => {
                    let mut lines = vec!["this session's servers:".to_string()];
                    lines.extend(self.mcp_live());
                    lines.push(String::new());
                    lines.push("configured (quiver mcp list):".into());
                    lines.extend(self.mcp_cli(&["list".to_string()]).await?);
                    lines.push(String::new());
                    lines.push("/mcp init|add|get|remove|enable|disable|validate|tools|import|reload".into());
                    Ok(lines)
                }
                Some("init") => mcp_init(),
                Some("reload" | "reconnect") => {
                    let mut lines = Vec::new();
                    for server in self.manager.servers() {
                        server.disconnect().await;
                        let outcome = match server.refresh().await {
                            Ok(tools) => format!("reconnected: {} tools", tools.len()),
                            Err(e) => format!("failed: {}", e.to_string().lines().next().unwrap_or_default()),
                        };
                        lines.push(format!("{:<16} {outcome}", server.name()));
                    }
                    lines.push(String::new());
                    lines.push("servers added to the config since this session started join the next session".into());
                    Ok(lines)
                }
                Some(_) => self.mcp_cli(args).await,
            }
        })
    }

    fn sessions(&self, ctx: &ToolContext) -> Vec<(String, String)> {
        quiver_agent::exec::sessions::workspace_sessions(ctx.workspace.root())
            .into_iter()
            .take(50)
            .filter_map(|path| {
                let id = path.file_stem()?.to_str()?.to_string();
                let about = resume::read(&path)
                    .ok()
                    .and_then(|r| {
                        r.messages.iter().find_map(|m| match m {
                            quiver_agent::Message::User { text } => {
                                Some(text.lines().next().unwrap_or_default().to_string())
                            }
                            _ => None,
                        })
                    })
                    .unwrap_or_default();
                Some((id, about.chars().take(80).collect()))
            })
            .collect()
    }
}
