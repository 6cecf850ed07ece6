//! Sub-agents end to end: the real binary's `quiver exec` opens children
//! against the scripted model server. Each child's requests are routed by a
//! marker in its task, so parent and children may interleave freely.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Output, Stdio};

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};
use serde_json::Value;

const CONTRACT: &str =
    "SUMMARY: read notes.txt\nCHANGES: None.\nEVIDENCE:\n- notes.txt:1-1 says hello\nRISKS: none\nBLOCKERS: None.";

struct Env {
    config: tempfile::TempDir,
    state: tempfile::TempDir,
    cache: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let env = Env {
            config: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        };
        std::fs::write(env.ws.path().join("notes.txt"), "hello\n").unwrap();
        env
    }

    fn with_config(self, text: &str) -> Env {
        std::fs::write(self.config.path().join("config.toml"), text).unwrap();
        self
    }

    async fn exec(&self, server: &ScriptedServer, args: &[&str]) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_quiver"));
        cmd.env("QUIVER_CONFIG_DIR", self.config.path())
            .env("QUIVER_STATE_DIR", self.state.path())
            .env("QUIVER_CACHE_DIR", self.cache.path())
            .env("DEEPSEEK_API_KEY", "sk-test-secret")
            .stdin(Stdio::null());
        cmd.arg("exec").arg("--base-url").arg(server.base_url()).arg("--workspace").arg(self.ws.path());
        cmd.args(args).output().await.unwrap()
    }

    fn sessions(&self) -> Vec<PathBuf> {
        let dir = self.state.path().join("sessions");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Requests whose user messages hold `marker` (a child's), or none of `markers` (the parent's).
fn requests_with(server: &ScriptedServer, marker: &str) -> Vec<Value> {
    server.requests().iter().map(|r| r.json()).filter(|r| user_text(r).contains(marker)).collect()
}

fn parent_requests(server: &ScriptedServer, markers: &[&str]) -> Vec<Value> {
    let all = server.requests().iter().map(|r| r.json()).collect::<Vec<_>>();
    all.into_iter().filter(|r| markers.iter().all(|m| !user_text(r).contains(m))).collect()
}

fn user_text(request: &Value) -> String {
    request["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user").map(|m| m.to_string()).collect()
}

/// The tool results in a request, in order.
fn tool_results(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap().to_string()).collect()
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_explorer_reads_a_file_and_the_parent_gets_parsed_sections() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call(
            "p1",
            "agent_open",
            r#"{"prompt":"CHILD-A: what does notes.txt say?","agent_type":"Explorer","name":"scout"}"#,
        ),
        ScriptedTurn::tool_call("p2", "agent_eval", r#"{"name":"scout","block":true,"timeout_ms":30000}"#),
        ScriptedTurn::tool_call("p3", "agent_eval", "{}"),
        ScriptedTurn::text("The scout says hello."),
    ]);
    server.push_routed("CHILD-A", ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#));
    server.push_routed("CHILD-A", ScriptedTurn::text(CONTRACT));
    let out = env.exec(&server, &["--json", "Find out what notes.txt says, using a sub-agent."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.remaining(), 0);

    let parent = parent_requests(&server, &["CHILD-A"]);
    assert_eq!(parent.len(), 4);
    let opened = json_of(&tool_results(&parent[1])[0]);
    assert_eq!(opened["content"]["agent_id"], "agent-1");
    assert_eq!(opened["content"]["name"], "scout");
    assert_eq!(opened["content"]["role"], "explore");
    let evaluated = json_of(&tool_results(&parent[2])[1]);
    assert_eq!(evaluated["content"]["status"], "completed", "{evaluated}");
    assert_eq!(evaluated["metadata"]["contract_ok"], true);
    assert_eq!(evaluated["metadata"]["sections"]["EVIDENCE"], "- notes.txt:1-1 says hello");
    assert_eq!(evaluated["metadata"]["sections"]["CHANGES"], "None.");
    let listed = json_of(&tool_results(&parent[3])[2]);
    assert_eq!(listed["agents"][0]["name"], "scout", "{listed}");
    // Children never touch the parent's head: every parent request sends the same tools.
    assert!(parent.iter().all(|r| r["tools"] == parent[0]["tools"]));

    let child = requests_with(&server, "CHILD-A");
    assert_eq!(child.len(), 2);
    let system = child[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("explore sub-agent") && system.contains("BLOCKERS"), "{system}");
    assert!(tool_results(&child[1])[0].contains("hello"));

    // Its own transcript, beside the parent's, named in the result.
    let transcript = evaluated["metadata"]["transcript"].as_str().unwrap();
    assert!(env.sessions().iter().any(|p| p.to_str() == Some(transcript)), "{transcript}");
    assert_eq!(env.sessions().len(), 2);
    let recorded = std::fs::read_to_string(transcript).unwrap();
    assert!(recorded.contains("read_file") && recorded.contains("notes.txt:1-1"));
    // --json tags the child's events with its id.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tagged: Vec<Value> = stdout.lines().map(json_of).filter(|e| e["agent_id"] == "agent-1").collect();
    assert!(tagged.iter().any(|e| e["type"] == "tool_call_ended" && e["name"] == "read_file"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn role_limits_are_enforced_and_bad_types_are_typed_errors() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call(
            "p1",
            "agent_open",
            r#"{"prompt":"CHILD-W: write x.txt","agent_type":"explore","name":"w"}"#,
        )
        // `type`: the word before one vocabulary, which recorded calls still use.
        .and_call("p2", "agent_open", r#"{"prompt":"CHILD-R: review","type":"reviewer","name":"r"}"#),
        ScriptedTurn::tool_call("p3", "agent_eval", r#"{"name":"w","block":true,"timeout_ms":30000}"#).and_call(
            "p4",
            "agent_eval",
            r#"{"name":"r","block":true,"timeout_ms":30000}"#,
        ),
        ScriptedTurn::tool_call("p5", "agent_open", r#"{"prompt":"anything","agent_type":"custom"}"#).and_call(
            "p6",
            "agent_open",
            r#"{"prompt":"anything","agent_type":"wizard"}"#,
        ),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed("CHILD-W", ScriptedTurn::tool_call("w1", "write_file", r#"{"path":"x.txt","content":"no"}"#));
    server.push_routed("CHILD-W", ScriptedTurn::text("just prose, no sections"));
    server.push_routed("CHILD-R", ScriptedTurn::tool_call("r1", "exec_shell", r#"{"command":"touch y.txt"}"#));
    server.push_routed("CHILD-R", ScriptedTurn::text(CONTRACT));
    // yolo: whatever is refused here is refused by the role, not by the mode.
    let out = env.exec(&server, &["--mode", "yolo", "Delegate."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.ws.path().join("x.txt").exists() && !env.ws.path().join("y.txt").exists());

    let writer = requests_with(&server, "CHILD-W");
    let refused = &tool_results(&writer[1])[0];
    assert!(refused.contains("`write_file` is refused for this explore sub-agent"), "{refused}");
    let reviewer = requests_with(&server, "CHILD-R");
    let refused = &tool_results(&reviewer[1])[0];
    assert!(refused.contains("`exec_shell` is refused for this review sub-agent"), "{refused}");

    let parent = parent_requests(&server, &["CHILD-W", "CHILD-R"]);
    let results = tool_results(&parent[3]);
    // An answer that breaks the contract is kept whole as SUMMARY, and flagged.
    let w = json_of(&results[2]);
    assert_eq!(w["metadata"]["contract_ok"], false);
    assert_eq!(w["metadata"]["sections"]["SUMMARY"], "just prose, no sections");
    assert!(results[4].contains("custom") && results[4].contains("allowed_tools"), "{}", results[4]);
    assert!(results[5].contains("unknown sub-agent type `wizard`") && results[5].contains("verifier|verify"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_never_gets_a_looser_mode_than_its_parent() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("p1", "agent_open", r#"{"prompt":"CHILD-P: write it","agent_type":"implementer"}"#),
        ScriptedTurn::tool_call("p2", "agent_eval", r#"{"agent_id":"agent-1","block":true,"timeout_ms":30000}"#),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed("CHILD-P", ScriptedTurn::tool_call("c1", "write_file", r#"{"path":"x.txt","content":"no"}"#));
    server.push_routed("CHILD-P", ScriptedTurn::text(CONTRACT));
    let out = env.exec(&server, &["--mode", "plan", "Plan only."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.ws.path().join("x.txt").exists());
    let child = requests_with(&server, "CHILD-P");
    assert!(tool_results(&child[1])[0].contains("plan mode"), "{:?}", tool_results(&child[1]));
}

#[tokio::test(flavor = "multi_thread")]
async fn depth_and_concurrency_limits_hold() {
    let env = Env::new().with_config("[subagents]\nmax_depth = 1\nmax_concurrent = 1\n");
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("p1", "agent_open", r#"{"prompt":"CHILD-D: go deeper"}"#).and_call(
            "p2",
            "agent_open",
            r#"{"prompt":"CHILD-E: a second one"}"#,
        ),
        ScriptedTurn::tool_call("p3", "agent_eval", r#"{"agent_id":"agent-1","block":true,"timeout_ms":30000}"#),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed("CHILD-D", ScriptedTurn::tool_call("c1", "agent_open", r#"{"prompt":"GRANDCHILD"}"#));
    server.push_routed("CHILD-D", ScriptedTurn::text(CONTRACT));
    let out = env.exec(&server, &["Delegate twice."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parent = parent_requests(&server, &["CHILD-D", "GRANDCHILD"]);
    let second = &tool_results(&parent[1])[1];
    assert!(second.contains("the cap is 1 ([subagents] max_concurrent)"), "{second}");
    let child = requests_with(&server, "CHILD-D");
    let refused = &tool_results(&child[1])[0];
    assert!(refused.contains("the depth limit is 1"), "{refused}");
    assert!(requests_with(&server, "GRANDCHILD").is_empty(), "no grandchild request was made");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_eleventh_open_fails_at_the_default_cap() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let mut opens = ScriptedTurn::default();
    for i in 0..11 {
        let args = format!(r#"{{"prompt":"CAP-{i:02}: wait"}}"#);
        opens = opens.and_call(&format!("p{i}"), "agent_open", &args);
        // Slow answers keep the first ten running while the eleventh is opened.
        server.push_routed(
            &format!("CAP-{i:02}:"),
            ScriptedTurn::text(CONTRACT).with_delay(std::time::Duration::from_secs(2)),
        );
    }
    server.script([opens, ScriptedTurn::text("done")]);
    let out = env.exec(&server, &["Open eleven."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parent = parent_requests(&server, &["CAP-"]);
    let results = tool_results(&parent[1]);
    assert!(
        results[..10].iter().all(|r| r.contains("\"status\":\"pending\"") || r.contains("\"status\":\"running\"")),
        "{results:?}"
    );
    assert!(results[10].contains("10 are running, the cap is 10"), "{}", results[10]);
}

#[tokio::test(flavor = "multi_thread")]
async fn close_cancels_a_running_child_and_its_processes_die() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let wait_pid = r#"{"command":"for i in $(seq 400); do [ -s child.pid ] && break; sleep 0.05; done; cat child.pid","timeout_ms":30000}"#;
    let check = r#"{"command":"p=$(cat child.pid); for i in $(seq 100); do s=$(awk '{print $3}' /proc/$p/stat 2>/dev/null); if [ -z \"$s\" ] || [ \"$s\" = Z ]; then echo GONE; exit 0; fi; sleep 0.05; done; echo ALIVE","timeout_ms":30000}"#;
    server.script([
        ScriptedTurn::tool_call("p1", "agent_open", r#"{"prompt":"CHILD-S: sleep","name":"sleeper"}"#),
        ScriptedTurn::tool_call("p2", "exec_shell", wait_pid),
        ScriptedTurn::tool_call("p3", "agent_eval", r#"{"name":"sleeper","block":true,"timeout_ms":300}"#),
        ScriptedTurn::tool_call("p4", "agent_close", r#"{"name":"sleeper"}"#),
        ScriptedTurn::tool_call("p5", "exec_shell", check),
        ScriptedTurn::tool_call("p6", "agent_eval", r#"{"name":"sleeper"}"#),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed(
        "CHILD-S",
        ScriptedTurn::tool_call(
            "c1",
            "exec_shell",
            r#"{"command":"echo $$ > child.pid; exec sleep 300","timeout_ms":600000}"#,
        ),
    );
    let out = env.exec(&server, &["--mode", "yolo", "Start and stop a sleeper."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parent = parent_requests(&server, &["CHILD-S"]);
    let results = tool_results(parent.last().unwrap());
    let waited = json_of(&results[2]);
    assert_eq!(waited["content"]["timed_out"], true, "a bounded wait returns: {waited}");
    assert_eq!(waited["content"]["status"], "running");
    let closed = json_of(&results[3]);
    assert_eq!(closed["content"]["status"], "cancelled", "{closed}");
    assert!(results[4].contains("GONE"), "the child's process outlived it: {}", results[4]);
    assert!(results[5].contains("no agent `sleeper`"), "a closed agent is released: {}", results[5]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forked_child_repeats_the_parent_prefix() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("p1", "read_file", r#"{"path":"notes.txt"}"#),
        ScriptedTurn::tool_call("p2", "agent_open", r#"{"prompt":"CHILD-F: continue","fork_context":true}"#),
        ScriptedTurn::tool_call("p3", "agent_eval", r#"{"agent_id":"agent-1","block":true,"timeout_ms":30000}"#),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed("CHILD-F", ScriptedTurn::text(CONTRACT));
    let out = env.exec(&server, &["Read notes.txt, then fork."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let jsons: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    let child_at = jsons.iter().position(|r| user_text(r).contains("CHILD-F")).unwrap();
    // The parent's request that produced agent_open, and the fork's first.
    let parent = &jsons[1];
    let child = &jsons[child_at];
    let n = parent["messages"].as_array().unwrap().len();
    assert_eq!(child["messages"].as_array().unwrap()[..n], parent["messages"].as_array().unwrap()[..]);
    assert_eq!(child["tools"], parent["tools"]);
    // What a prefix cache keys on: the tools, then the messages (system first).
    let prompt = |r: &Value| {
        let c = quiver_engine::canonical::to_string;
        format!("{}{}", c(&r["tools"]), c(&r["messages"]))
    };
    let (p, c) = (prompt(parent), prompt(child));
    let shared = p.bytes().zip(c.bytes()).take_while(|(a, b)| a == b).count();
    eprintln!("fork: {shared} of the parent's {} prompt bytes shared", p.len());
    assert_eq!(shared, p.len() - 1, "all but the parent's closing bracket");
    let last = child["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(last.contains("# Fork snapshot") && last.contains("CHILD-F: continue"), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_agent_runs_an_executor_and_blocks_for_its_answer() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("p1", "tool_agent", r#"{"prompt":"EXEC-1: read notes.txt"}"#),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed("EXEC-1", ScriptedTurn::tool_call("e1", "read_file", r#"{"path":"notes.txt"}"#));
    server.push_routed("EXEC-1", ScriptedTurn::text(CONTRACT));
    let out = env.exec(&server, &["--model", "deepseek-v4-flash", "--effort", "high", "Use the executor."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parent = parent_requests(&server, &["EXEC-1"]);
    let names: Vec<&str> =
        parent[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"tool_agent"), "gated tools stay out of the head: {names:?}");
    let result = json_of(&tool_results(&parent[1])[0]);
    assert_eq!(result["content"]["status"], "completed", "{result}");
    assert!(result["content"]["answer"].as_str().unwrap().contains("notes.txt:1-1"));
    // Thinking off: the executor's requests ask for no reasoning effort, the parent's do.
    assert!(parent[0].get("reasoning_effort").is_some(), "{}", parent[0]);
    assert!(requests_with(&server, "EXEC-1").iter().all(|r| r.get("reasoning_effort").is_none()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_quiver_leaves_its_running_agents_interrupted_with_their_boot() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("p1", "agent_open", r#"{"prompt":"CHILD-K: sleep","name":"k","type":"general"}"#),
        // The parent's next request hangs: quiver is killed while its child runs.
        ScriptedTurn::text("never sent").with_delay(std::time::Duration::from_secs(120)),
    ]);
    server.push_routed(
        "CHILD-K",
        ScriptedTurn::tool_call(
            "c1",
            "exec_shell",
            r#"{"command":"echo $$ > child.pid; exec sleep 300","timeout_ms":600000}"#,
        ),
    );
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_quiver"));
    cmd.env("QUIVER_CONFIG_DIR", env.config.path())
        .env("QUIVER_STATE_DIR", env.state.path())
        .env("QUIVER_CACHE_DIR", env.cache.path())
        .env("DEEPSEEK_API_KEY", "sk-test-secret")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .args(["exec", "--mode", "yolo", "--base-url", &server.base_url(), "--workspace"])
        .arg(env.ws.path())
        .arg("Start a sleeper.");
    let mut quiver = cmd.spawn().unwrap();
    let quiver_pid = quiver.id().unwrap();
    let pid_file = env.ws.path().join("child.pid");
    let store = env.state.path().join("subagents.v1.json");
    for _ in 0..600 {
        let running = std::fs::read_to_string(&store).is_ok_and(|t| t.contains("\"running\""));
        if running && std::fs::read_to_string(&pid_file).is_ok_and(|p| !p.trim().is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    quiver.kill().await.unwrap(); // SIGKILL: nothing gets to clean up
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let _ = std::process::Command::new("kill").arg("-9").arg(pid.trim()).status();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .env("QUIVER_STATE_DIR", env.state.path())
        .args(["agents", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = json_of(String::from_utf8_lossy(&out.stdout).trim());
    let agent = &listed["agents"][0];
    assert_eq!(agent["name"], "k", "{listed}");
    assert_eq!(agent["state"], "interrupted", "{listed}");
    assert_eq!(agent["stale"], true);
    let boot = agent["boot"].as_str().unwrap();
    assert!(boot.starts_with('b') && boot.ends_with(&format!("-{quiver_pid}")), "the killed run's boot: {boot}");
    assert!(agent["reason"].as_str().unwrap().contains(boot));
    let human = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .env("QUIVER_STATE_DIR", env.state.path())
        .arg("agents")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&human.stdout).contains("interrupted"));
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_a_parent_cancels_its_descendants() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let wait_pid = r#"{"command":"for i in $(seq 400); do [ -s grand.pid ] && break; sleep 0.05; done; cat grand.pid","timeout_ms":30000}"#;
    let check = r#"{"command":"p=$(cat grand.pid); for i in $(seq 100); do s=$(awk '{print $3}' /proc/$p/stat 2>/dev/null); if [ -z \"$s\" ] || [ \"$s\" = Z ]; then echo GONE; exit 0; fi; sleep 0.05; done; echo ALIVE","timeout_ms":30000}"#;
    server.script([
        ScriptedTurn::tool_call("p1", "agent_open", r#"{"prompt":"CHILD-X: delegate a sleeper"}"#),
        ScriptedTurn::tool_call("p2", "exec_shell", wait_pid),
        ScriptedTurn::tool_call("p3", "agent_close", r#"{"agent_id":"agent-1"}"#),
        ScriptedTurn::tool_call("p4", "exec_shell", check),
        ScriptedTurn::text("done"),
    ]);
    server.push_routed("CHILD-X", ScriptedTurn::tool_call("c1", "agent_open", r#"{"prompt":"GRAND-X: sleep"}"#));
    server.push_routed(
        "CHILD-X",
        ScriptedTurn::tool_call("c2", "agent_eval", r#"{"agent_id":"agent-2","block":true,"timeout_ms":600000}"#),
    );
    server.push_routed(
        "GRAND-X",
        ScriptedTurn::tool_call(
            "g1",
            "exec_shell",
            r#"{"command":"echo $$ > grand.pid; exec sleep 300","timeout_ms":600000}"#,
        ),
    );
    let out = env.exec(&server, &["--mode", "yolo", "Nest and cancel."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parent = parent_requests(&server, &["CHILD-X", "GRAND-X"]);
    let results = tool_results(parent.last().unwrap());
    assert_eq!(json_of(&results[2])["content"]["status"], "cancelled");
    assert!(results[3].contains("GONE"), "the grandchild's process outlived the cancel: {}", results[3]);
}
