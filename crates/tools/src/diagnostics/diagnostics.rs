//! `diagnostics`: one call that tells a model where it is — workspace root, git
//! state, mode, platform and which toolchains are installed — instead of a dozen
//! exploratory shell commands.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::git::repo;
use crate::process::Launch;
use crate::util::which;

/// A `--version` that takes longer is reported as hung rather than waited for.
const VERSION_TIMEOUT: Duration = Duration::from_secs(3);

/// Programs probed, with the arguments that make each print its version.
const TOOLCHAINS: &[(&str, &[&str])] = &[
    ("cargo", &["--version"]),
    ("rustc", &["--version"]),
    ("cargo-nextest", &["nextest", "--version"]),
    ("node", &["--version"]),
    ("npm", &["--version"]),
    ("python3", &["--version"]),
    ("go", &["version"]),
    ("git", &["--version"]),
    ("rg", &["--version"]),
    ("pdftotext", &["-v"]),
    ("espeak-ng", &["--version"]),
];

/// Files at the root that say what kind of project this is (and so which test
/// command fits).
const PROJECT_MARKERS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "Makefile",
    "CMakeLists.txt",
    "pom.xml",
    "build.gradle",
];

pub struct Diagnostics;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsInput {}

impl Tool for Diagnostics {
    type Input = DiagnosticsInput;
    const NAME: &'static str = "diagnostics";
    const DOMAIN: Domain = Domain::Diagnostics;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Environment report: workspace root, git branch and dirty state, mode, OS/arch, and installed toolchains with versions.".into()
    }

    async fn run(&self, _input: DiagnosticsInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let root = ctx.workspace.root();
        // The probes and git run side by side: the call costs the slowest, not the sum.
        // Every process quiver starts passes the command gate: a probe a deny
        // rule names is reported as refused, not run.
        // Every probe is the tool's own fixed command, so all get the same
        // grant: one sandbox is built for the call and shared.
        let mut launch: Option<Arc<Launch>> = None;
        let mut probes = Vec::with_capacity(TOOLCHAINS.len());
        for (name, args) in TOOLCHAINS {
            let argv: Vec<&str> = std::iter::once(*name).chain(args.iter().copied()).collect();
            let granted = match crate::process::authorize(ctx, &CommandRequest::tool_argv(&argv)).await {
                Ok(grant) => match &launch {
                    Some(l) if l.grant == grant => Ok(l.clone()),
                    _ => Launch::new(ctx, grant).map(Arc::new),
                },
                Err(e) => Err(e),
            };
            probes.push(match granted {
                Ok(l) => {
                    launch = Some(l.clone());
                    tokio::spawn(probe(l, name, args))
                }
                Err(e) => {
                    let refused = json!({"name": name, "refused": e.to_string()});
                    tokio::spawn(async move { refused })
                }
            });
        }
        let git_launch = match crate::process::authorize(ctx, &CommandRequest::tool("git status")).await {
            Ok(grant) => Launch::new(ctx, grant),
            Err(e) => Err(e),
        };
        let git_state = match git_launch {
            Ok(l) => git_summary(&l, root).await,
            Err(e) => json!({"refused": e.to_string()}),
        };
        let mut toolchains = Vec::with_capacity(probes.len());
        for (handle, (name, _)) in probes.into_iter().zip(TOOLCHAINS) {
            toolchains
                .push(handle.await.unwrap_or_else(|e| json!({"name": name, "found": false, "error": e.to_string()})));
        }
        let markers: Vec<&str> = PROJECT_MARKERS.iter().copied().filter(|m| root.join(m).is_file()).collect();
        let approvals = match (ctx.mode(), &ctx.approver) {
            (quiver_engine::Mode::Plan, _) => "plan mode: read-only, nothing that writes or runs code is allowed",
            (quiver_engine::Mode::Yolo, _) => "yolo mode: no approvals asked; deny rules still apply",
            (_, Some(_)) => "risky steps are asked of the host",
            (_, None) => "risky steps need approval and nobody can be asked, so they are refused",
        };
        let report = json!({
            "workspace": root.display().to_string(),
            "mode": ctx.mode().as_str(),
            "approvals": approvals,
            "sandbox": sandbox_line(),
            "os": std::env::consts::OS,
            "arch": std::env::consts::ARCH,
            "git": git_state,
            "project_files": markers,
            "toolchains": toolchains,
            "quiver_version": quiver_engine::VERSION,
        });
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(ToolOutput::json(report).with_meta("duration_ms", elapsed))
    }
}

/// Branch and dirty state, the string "not a git repo", or why git could not say.
async fn git_summary(launch: &Launch, root: &std::path::Path) -> Value {
    match repo::repo(launch, root).await {
        Ok(None) => json!("not a git repo"),
        Err(e) => json!({"error": e.to_string()}),
        Ok(Some(repo)) => match repo::status(launch, root).await {
            Err(e) => json!({"error": e.to_string()}),
            Ok(status) => {
                let changes = status.entries.iter().filter(|e| !matches!(e.kind, repo::EntryKind::Ignored)).count();
                let mut summary = json!({
                    "repo_root": repo.toplevel.display().to_string(),
                    "branch": status.branch,
                    "detached": status.branch.is_none(),
                    "head": status.oid.as_deref().map(|o| &o[..o.len().min(12)]),
                    "dirty": changes > 0,
                    "changed_files": changes,
                });
                if let Some(upstream) = status.upstream {
                    summary["upstream"] = json!(upstream);
                    summary["ahead"] = json!(status.ahead.unwrap_or(0));
                    summary["behind"] = json!(status.behind.unwrap_or(0));
                }
                summary
            }
        },
    }
}

/// Runs `<name> <args>` and reports the first line it prints (some tools print
/// their version on stderr).
/// What the report says about confinement.
fn sandbox_line() -> String {
    let kernel = quiver_sandbox::probe().describe();
    if crate::process::sandbox_available() {
        format!(
            "file tools are confined to the workspace root; commands that run unasked run in the OS sandbox \
             (workspace-write, no network; {kernel}); approved commands run unconfined"
        )
    } else {
        format!("no OS sandbox ({kernel}): every command the model writes is asked for")
    }
}

async fn probe(launch: Arc<Launch>, name: &'static str, args: &'static [&'static str]) -> Value {
    let Some(path) = which(name) else {
        return json!({"name": name, "found": false});
    };
    let mut cmd = tokio::process::Command::new(&path);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let shown = path.display().to_string();
    let running = match launch.prepare(&mut cmd) {
        Ok(r) => r,
        Err(e) => return json!({"name": name, "found": true, "path": shown, "error": e.to_string()}),
    };
    let output = match cmd.spawn() {
        Ok(child) => {
            running.started(child.id());
            tokio::time::timeout(VERSION_TIMEOUT, child.wait_with_output()).await
        }
        Err(e) => return json!({"name": name, "found": true, "path": shown, "error": e.to_string()}),
    };
    match output {
        Err(_) => json!({"name": name, "found": true, "path": shown,
                         "error": format!("no answer to `{name} {}` within {}s", args.join(" "), VERSION_TIMEOUT.as_secs())}),
        Ok(Err(e)) => json!({"name": name, "found": true, "path": shown, "error": e.to_string()}),
        Ok(Ok(out)) => {
            let first_line = |bytes: &[u8]| {
                String::from_utf8_lossy(bytes)
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(|l| l.chars().take(200).collect::<String>())
            };
            match first_line(&out.stdout).or_else(|| first_line(&out.stderr)) {
                Some(version) => json!({"name": name, "found": true, "path": shown, "version": version}),
                None => {
                    json!({"name": name, "found": true, "path": shown, "error": format!("printed no version (exit {})", out.status)})
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "diagnostics_tests.rs"]
mod tests;
