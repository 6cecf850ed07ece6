//! Headless `quiver exec --mode agent` with nobody to ask: ordinary work runs
//! in the sandbox without a single approval, and stays in the workspace.

use serde_json::json;

use crate::exec::{Env, events, of_type, stderr};

use quiver_agent::scripted::{ScriptedServer, ScriptedTurn};

fn shell(id: &str, command: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call(id, "exec_shell", &json!({"command": command, "timeout_ms": 120_000}).to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_mode_with_nobody_to_ask_does_ordinary_work_unasked() {
    ordinary_work_unasked(None).await;
}

/// The same where user namespaces are refused (AppArmor's restriction on
/// Ubuntu 23.10+, many containers): the Landlock fallback does the work too.
#[tokio::test(flavor = "multi_thread")]
async fn the_landlock_fallback_does_the_same_ordinary_work_unasked() {
    ordinary_work_unasked(Some("landlock")).await;
}

/// `mechanism`: the one the run must use (`landlock`: namespaces turned off).
async fn ordinary_work_unasked(mechanism: Option<&str>) {
    let env = Env::new();
    if !quiver_tools::process::sandbox_available() {
        quiver_testkit::require_or_skip("an OS sandbox", "Landlock and seccomp, or user namespaces");
        return;
    }
    let ws = env.ws.path();
    assert!(std::process::Command::new("git").args(["init", "-q"]).current_dir(ws).status().unwrap().success());
    let python = quiver_testkit::which("python3");
    let mut commands = vec![
        "mkdir build",
        "touch ROOT.md",
        "echo hi > build/out.txt",
        "git add ROOT.md build && git -c user.name=t -c user.email=t@t commit -qm first && git log --oneline | wc -l",
        "cargo new --vcs none --offline hello -q && cd hello && cargo build --offline -q && ./target/debug/hello",
    ];
    if python.is_some() {
        commands.push("python3 -c 'print(6 * 7)'");
    }
    if mechanism == Some("landlock") {
        // The fallback, not the namespace sandbox, ran these: the host's
        // processes are in sight (a PID namespace would show a handful).
        commands.push("ls /proc | grep -c '^[0-9]' > procs.txt");
    }
    let mut turns: Vec<ScriptedTurn> = commands.iter().enumerate().map(|(i, c)| shell(&format!("c{i}"), c)).collect();
    turns.push(ScriptedTurn::text("Done."));
    let server = ScriptedServer::start().await.unwrap();
    server.script(turns);
    // A shared target dir from the user's shell lies outside the sandbox:
    // the sandboxed cargo must build in the workspace instead of failing.
    let shared_target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.env("CARGO_TARGET_DIR", shared_target.path()).arg("exec").arg("--base-url").arg(server.base_url());
    if mechanism == Some("landlock") {
        cmd.env(quiver_sandbox::NO_USERNS_VAR, "1");
    }
    cmd.arg("--workspace").arg(ws).args(["--mode", "agent", "--json", "Set the project up."]);
    let out = cmd.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let events = events(&out);
    let ended = of_type(&events, "tool_call_ended");
    assert_eq!(ended.len(), commands.len());
    let transcript = std::fs::read_to_string(env.only_session()).unwrap();
    let results: Vec<serde_json::Value> = transcript
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    for (i, result) in results.iter().enumerate() {
        let text = result.to_string();
        assert_eq!(result["result"]["is_error"], false, "{}: {text}", commands[i]);
        assert_eq!(result["result"]["metadata"]["permission"], "sandboxed", "{}: {text}", commands[i]);
    }
    assert_eq!(results.len(), commands.len(), "{transcript}");
    assert!(ws.join("build/out.txt").is_file() && ws.join("ROOT.md").is_file());
    if mechanism == Some("landlock") {
        let procs: usize = std::fs::read_to_string(ws.join("procs.txt")).unwrap().trim().parse().unwrap();
        assert!(procs > 8, "{procs} processes in sight: a PID namespace, not the Landlock fallback");
    }
    assert!(ws.join("hello/target/debug/hello").is_file(), "cargo built in the workspace's own target/");
    let all = results.iter().map(|r| r.to_string()).collect::<String>();
    assert!(all.contains("Hello, world!"), "{all}");
    if python.is_some() {
        assert!(all.contains("42"), "{all}");
    }
    // Nobody was asked: no approval events, no refusals.
    assert!(!out.stdout.is_empty());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("approval"), "{}", String::from_utf8_lossy(&out.stdout));
}

/// quiver's keys leave its own environment at start: root (or a yolo line
/// running as root) reading `/proc/<quiver>/environ` finds none of them, a key
/// in a variable only the user's config names included, and the provider
/// still gets its key.
#[tokio::test(flavor = "multi_thread")]
async fn keys_are_out_of_quivers_environ_and_still_reach_the_provider() {
    const SECRETS: [(&str, &str); 4] = [
        ("CORP_LLM_CRED", "cred-corp-4821"),
        ("OPENAI_API_KEY", "sk-test-openai-5930"),
        ("GH_TOKEN", "ghp_test_6617"),
        ("DATABASE_URL", "postgres://u:pw-7702@db/x"),
    ];
    let env = Env::new();
    let ws = env.ws.path();
    std::fs::write(env.config.path().join("config.toml"), "[providers.deepseek]\napi_key_env = \"CORP_LLM_CRED\"\n")
        .unwrap();
    // The line holds quiver running until the test has read its environ.
    let hold = "touch started; i=0; while [ ! -e release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done";
    let server = ScriptedServer::start().await.unwrap();
    server.script([shell("c1", hold), ScriptedTurn::text("Done.")]);
    let mut cmd = env.command(None);
    cmd.envs(SECRETS).arg("exec").arg("--base-url").arg(server.base_url()).arg("--workspace").arg(ws);
    let child =
        cmd.args(["--mode", "yolo", "--json", "Hold on."]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let pid = child.id().unwrap();
    let started = std::time::Instant::now();
    while !ws.join("started").exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the held line never started");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let environ = std::fs::read(format!("/proc/{pid}/environ"));
    std::fs::write(ws.join("release"), "").unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    match environ {
        Ok(environ) => {
            let environ = String::from_utf8_lossy(&environ).into_owned();
            assert!(environ.contains("QUIVER_STATE_DIR="), "not quiver's environment: {environ:?}");
            for (name, value) in SECRETS {
                assert!(!environ.contains(value), "{name}'s value in /proc/<quiver>/environ: {environ:?}");
            }
        }
        // Not root: quiver's proc files are root's (it is non-dumpable).
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            quiver_testkit::require_or_skip("root (to read quiver's own environ)", &e.to_string());
        }
        Err(e) => panic!("/proc/{pid}/environ: {e}"),
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.header("authorization"), Some("Bearer cred-corp-4821"));
    }
}

/// Whether `pid` runs (a zombie counts as gone).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// The reaper quiver started for itself (`__quiver-reaper <quiver's pid> …`).
fn reaper_of(quiver: u32) -> Option<i32> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()).find(|pid| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.get(1) == Some(&&b"__quiver-reaper"[..]) && args.get(2) == Some(&quiver.to_string().as_bytes())
    })
}

/// A yolo line's `setsid` child left quiver's process group and session, so
/// no parent-death signal or group kill reaches it: when quiver is killed
/// with SIGKILL (no cleanup runs), its reaper kills it as soon as quiver is
/// gone, not the next quiver to start.
#[tokio::test(flavor = "multi_thread")]
async fn a_yolo_lines_setsid_child_dies_soon_after_quiver_is_killed() {
    let env = Env::new();
    let ws = env.ws.path();
    let line = "setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' > /dev/null 2>&1 < /dev/null & \
                touch started; i=0; while [ ! -e release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done";
    let server = ScriptedServer::start().await.unwrap();
    server.script([shell("c1", line), ScriptedTurn::text("Done.")]);
    let mut cmd = env.command(Some("sk-test-secret"));
    cmd.arg("exec").arg("--base-url").arg(server.base_url()).arg("--workspace").arg(ws);
    cmd.args(["--mode", "yolo", "--json", "Leave something behind."]).stdout(std::process::Stdio::null());
    let mut quiver = cmd.kill_on_drop(true).spawn().unwrap();
    let started = std::time::Instant::now();
    let escaped: i32 = loop {
        let pid = std::fs::read_to_string(ws.join("escaped.pid")).ok().and_then(|s| s.trim().parse().ok());
        if let Some(pid) = pid
            && ws.join("started").exists()
        {
            break pid;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the line never started");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(running(escaped), "the setsid child {escaped} is not running");
    // quiver's own reaper does it, not another quiver's sweep at its start
    // (other tests start quivers meanwhile): it runs while quiver does...
    let reaper = reaper_of(quiver.id().unwrap()).expect("quiver started no reaper");
    quiver.start_kill().unwrap(); // SIGKILL
    quiver.wait().await.unwrap();
    let killed = std::time::Instant::now();
    while running(escaped) && killed.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let survived = running(escaped);
    if survived {
        let _ = std::process::Command::new("kill").args(["-9", &escaped.to_string()]).status();
    }
    assert!(!survived, "the setsid child {escaped} outlived a SIGKILLed quiver by 10 s");
    // ...and ends once it has swept.
    while running(reaper) && killed.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!running(reaper), "the reaper {reaper} outlived its sweep");
}
