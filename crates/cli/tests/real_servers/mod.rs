//! `quiver exec` and `quiver providers check` against real model servers
//! nobody in this project wrote: llama-cpp-python's server over
//! SmolLM2-135M on the OpenAI wire, and LiteLLM's proxy in front of it on the
//! Anthropic Messages wire and the OpenAI wire. Real child processes on
//! loopback, started here; `proxy.rs` is the one test-side piece in front
//! of llama, and the scripted server stands behind LiteLLM as a backend
//! that counts the tool bytes it receives (what LiteLLM does with
//! `defer_loading`).
//!
//! One test runs every scenario in order on one set of servers (starting
//! LiteLLM takes seconds, and the model is the slow part on 2 cores): each
//! scenario's failure is collected and reported at the end, so one broken
//! scenario does not hide the others.

mod agents;
mod more;
mod proxy;
mod scenarios;
mod servers;

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use quiver_agent::scripted::ScriptedServer;
use serde_json::Value;

use crate::exec::{Env, stderr, stdout};
use proxy::Proxy;
use servers::{MODEL, Server};

/// How quiver reaches a server in a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Via {
    /// The llama server on the OpenAI wire (through the pass-through).
    Llama,
    /// LiteLLM's Anthropic Messages wire (LiteLLM → pass-through → llama).
    LiteLlmAnthropic,
    /// LiteLLM's OpenAI wire.
    LiteLlmOpenAi,
    /// LiteLLM's Anthropic Messages wire in front of the counting backend.
    LiteLlmCounting,
}

impl Via {
    pub fn provider(self) -> &'static str {
        match self {
            Via::Llama => "llama",
            Via::LiteLlmAnthropic => "litellm",
            Via::LiteLlmOpenAi => "litellm-openai",
            Via::LiteLlmCounting => "litellm-counting",
        }
    }
}

pub(crate) struct Rig {
    pub env: Env,
    pub proxy: Proxy,
    pub llama: Server,
    pub litellm: Server,
    pub litellm_key: String,
    /// Behind LiteLLM's `counting` model: the scripted server, whose usage
    /// counts the bytes of `tools` and `messages` it receives (four a token).
    pub counting: ScriptedServer,
    /// The servers' logs and LiteLLM's config (kept until the end).
    pub _logs: tempfile::TempDir,
}

/// How long one quiver run may take against the 135M model on 2 cores.
/// Generous: the CI step runs alone, but a loaded machine is several times slower.
pub(crate) const PATIENCE: Duration = Duration::from_secs(480);

impl Rig {
    pub fn config_text(&self) -> String {
        let llama = format!("{}/v1", self.proxy.url());
        let litellm = self.litellm.url();
        format!(
            r#"[model]
provider = "llama"
model = "{MODEL}"
max_output_tokens = 48

[providers.llama]
base_url = "{llama}"
api_key_env = "LLAMA_API_KEY"
wire = "openai"

[providers.litellm]
base_url = "{litellm}"
api_key_env = "LITELLM_API_KEY"
wire = "anthropic"

[providers.litellm-openai]
base_url = "{litellm}/v1"
api_key_env = "LITELLM_API_KEY"
wire = "openai"

[providers.litellm-counting]
base_url = "{litellm}"
api_key_env = "LITELLM_API_KEY"
wire = "anthropic"
"#
        )
    }

    pub fn command(&self) -> tokio::process::Command {
        let mut cmd = self.env.command(None);
        cmd.env("LLAMA_API_KEY", "sk-local").env("LITELLM_API_KEY", &self.litellm_key);
        cmd
    }

    /// `quiver exec --json --provider P --workspace WS ARGS...`, bounded.
    pub async fn exec(&self, via: Via, args: &[&str]) -> Output {
        let mut cmd = self.command();
        cmd.args(["exec", "--json", "--mode", "yolo", "--provider", via.provider(), "--workspace"]);
        cmd.arg(self.env.ws.path()).args(args);
        tokio::time::timeout(PATIENCE, cmd.output()).await.expect("quiver exec finishes").unwrap()
    }

    /// The session files, newest last.
    pub fn sessions(&self) -> Vec<PathBuf> {
        let dir = self.env.state.path().join("sessions");
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| (e.metadata().and_then(|m| m.modified()).unwrap(), e.path())).collect())
            .unwrap_or_default();
        files.sort();
        files.into_iter().map(|(_, p)| p).collect()
    }
}

/// A scenario's verdict.
pub(crate) type Outcome = Result<(), String>;

/// Fails a scenario with a message (and the run's stderr, when given).
pub(crate) fn fail<T>(what: impl std::fmt::Display, out: Option<&Output>) -> Result<T, String> {
    let context = out.map(|o| format!("\n--- stdout:\n{}\n--- stderr:\n{}", stdout(o), stderr(o))).unwrap_or_default();
    Err(format!("{what}{context}"))
}

pub(crate) fn events(out: &Output) -> Vec<Value> {
    stdout(out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn real_servers_llama_cpp_python_and_litellm() {
    let Some(installed) = servers::installed_or_skip() else { return };
    // reqwest is built without a bundled crypto provider (see the agent's http.rs).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let logs = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut llama = servers::llama(&installed, logs.path());
    let proxy = Proxy::start(&llama.url()).await;
    // LiteLLM boots slowly: it starts while the llama server loads.
    let litellm_key = servers::litellm_key();
    let counting = ScriptedServer::start().await.unwrap();
    let mut litellm = servers::litellm(&installed, logs.path(), &proxy.url(), &counting.base_url(), &litellm_key);
    let llama_ready = llama.ready("/v1/models", Duration::from_secs(120)).await;
    let litellm_ready = litellm.ready("/health/liveliness", Duration::from_secs(180)).await;
    eprintln!("real servers: llama ready in {llama_ready:.1?}, litellm in {litellm_ready:.1?}");
    let rig = Rig { env: Env::new(), proxy, llama, litellm, litellm_key, counting, _logs: logs };
    std::fs::write(rig.env.config.path().join("config.toml"), rig.config_text()).unwrap();

    let mut failures = Vec::new();
    let (outcomes, checks) = scenarios::run_all(&rig).await;
    for (name, outcome) in outcomes {
        if let Err(why) = outcome {
            failures.push(format!("== {name}\n{why}"));
        }
    }
    eprintln!("real servers: all scenarios in {:.1?}", started.elapsed());
    if !failures.is_empty() {
        panic!(
            "{} scenario(s) failed:\n{}\n--- llama server log:\n{}\n--- litellm log:\n{}",
            failures.len(),
            failures.join("\n\n"),
            servers::tail(&rig.llama.log),
            servers::tail(&rig.litellm.log)
        );
    }
    for (name, stable) in checks {
        insta::assert_snapshot!(format!("real_check_{name}"), stable);
    }
}
