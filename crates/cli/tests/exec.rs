//! `quiver exec`, `exec resume` and `audit` end to end: the real binary
//! against the scripted model server (a faithful DeepSeek wire), with the
//! user's config, state and cache directories isolated in temp dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use quiver_agent::scripted::{Fault, ScriptedServer, ScriptedTurn};
use quiver_engine::transcript::Event;
use serde_json::Value;

pub(crate) struct Env {
    pub(crate) config: tempfile::TempDir,
    pub(crate) state: tempfile::TempDir,
    cache: tempfile::TempDir,
    pub(crate) ws: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Env {
        let env = Env {
            config: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        };
        std::fs::write(env.ws.path().join("notes.txt"), "hello\n").unwrap();
        env
    }

    pub(crate) fn command(&self, key: Option<&str>) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_quiver"));
        cmd.env("QUIVER_CONFIG_DIR", self.config.path())
            .env("QUIVER_STATE_DIR", self.state.path())
            .env("QUIVER_CACHE_DIR", self.cache.path())
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(Stdio::null());
        if let Some(key) = key {
            cmd.env("DEEPSEEK_API_KEY", key);
        }
        cmd
    }

    pub(crate) async fn exec(&self, server: &ScriptedServer, args: &[&str]) -> Output {
        let mut cmd = self.command(Some("sk-test-secret"));
        cmd.arg("exec").arg("--base-url").arg(server.base_url()).arg("--workspace").arg(self.ws.path());
        cmd.args(args).output().await.unwrap()
    }

    /// `quiver exec PROMPT` against `server` on the Anthropic wire.
    pub(crate) async fn exec_anthropic(&self, server: &ScriptedServer, prompt: &str) -> Output {
        let mut cmd = self.command(None);
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-test")
            .args(["exec", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--base-url"])
            .arg(server.base_url())
            .arg("--workspace")
            .arg(self.ws.path())
            .arg(prompt);
        cmd.output().await.unwrap()
    }

    fn sessions(&self) -> Vec<PathBuf> {
        let dir = self.state.path().join("sessions");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    }

    pub(crate) fn only_session(&self) -> PathBuf {
        let sessions = self.sessions();
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        sessions[0].clone()
    }
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) fn events(o: &Output) -> Vec<Value> {
    stdout(o).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

pub(crate) fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

/// The tool results the model was sent in the last request.
pub(crate) fn tool_messages(server: &ScriptedServer) -> Vec<String> {
    let last = server.requests().last().unwrap().json();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn audit(transcript: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_quiver")).arg("audit").arg(transcript).output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn search_load_call_deprecated_alias_then_answer() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"project map overview of the repository"}"#),
        ScriptedTurn::tool_call("c2", "project_map", "{}"),
        ScriptedTurn::tool_call("c3", "todo_write", r#"{"items":[{"content":"ship","status":"pending"}]}"#),
        ScriptedTurn::text("All done."),
    ]);
    let out = env.exec(&server, &["--json", "Map the project and plan."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = events(&out);
    assert_eq!(events[0]["type"], "session_started");
    assert!(events[0]["head_hash"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(of_type(&events, "turn_started").len(), 4);
    let ended: Vec<(&str, bool)> = of_type(&events, "tool_call_ended")
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["error"].is_null()))
        .collect();
    assert_eq!(ended, [("tool_search", true), ("project_map", true), ("todo_write", true)]);
    assert!(of_type(&events, "usage")[1]["usage"]["cache_hit_tokens"].as_u64().unwrap() > 0);
    assert_eq!(of_type(&events, "model_message").last().unwrap()["text"], "All done.");
    assert_eq!(events.last().unwrap()["status"], "done");
    // The loaded tool rode in the tail of the next request, after the head.
    let second = server.requests()[1].json();
    let names: Vec<&str> =
        second["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names[names.iter().position(|n| *n == "tool_search").unwrap()..].contains(&"project_map"), "{names:?}");
    assert!(tool_messages(&server).last().unwrap().contains("_deprecation"));

    // The transcript: no key, audit says the head never changed, replay works.
    let transcript = env.only_session();
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(!text.contains("sk-test-secret"));
    let audited = audit(&transcript);
    assert_eq!(audited.status.code(), Some(0));
    let summary = stdout(&audited).lines().last().unwrap().to_string();
    assert!(summary.starts_with("requests=4 head_changes=0 prefix_breaks=0"), "{summary}");
    let replay = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .arg("replay")
        .arg(&transcript)
        .arg("--workspace")
        .arg(env.ws.path())
        .output()
        .unwrap();
    assert!(stdout(&replay).contains("project_map") || stderr(&replay).contains("project_map"), "{}", stdout(&replay));
}

#[tokio::test(flavor = "multi_thread")]
async fn human_mode_prints_the_answer_and_tool_lines_and_writes_the_last_message() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::status(429, Some("0")),
        ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#),
        ScriptedTurn::text("It says hello."),
    ]);
    let last = env.ws.path().join("last.txt");
    let out = env.exec(&server, &["--output-last-message", last.to_str().unwrap(), "Read notes."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It says hello.\n");
    assert!(stderr(&out).contains("· read_file"), "{}", stderr(&out));
    assert!(stderr(&out).contains("retrying"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(last).unwrap(), "It says hello.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_mid_tool_call_exits_1_naming_the_provider() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let cut =
        || ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#).with_fault(Fault::CutMidToolCall);
    server.script([cut(), cut(), cut(), cut(), cut()]);
    let out = env.exec(&server, &["Read notes."]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("deepseek"), "{}", stderr(&out));
    let transcript = quiver_engine::transcript::Transcript::read(env.only_session()).unwrap();
    assert!(transcript.torn_tail.is_none());
    assert!(transcript.start().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tools_and_broken_arguments_are_results_the_model_reads() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "no_such_tool", "{}").and_call("c2", "read_file", r#"{"path": "notes.txt"#),
        ScriptedTurn::text("Sorry."),
    ]);
    let out = env.exec(&server, &["--json", "Go."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_messages(&server);
    assert_eq!(results.len(), 2);
    assert!(results[0].contains("no_such_tool"), "{}", results[0]);
    assert!(results[1].contains("not valid JSON"), "{}", results[1]);
    let errors = of_type(&events(&out), "tool_call_ended").iter().filter(|e| !e["error"].is_null()).count();
    assert_eq!(errors, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_refuses_a_write() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "write_file", r#"{"path":"new.txt","content":"x"}"#),
        ScriptedTurn::text("I may not write in plan mode."),
    ]);
    let out = env.exec(&server, &["--mode", "plan", "Write new.txt."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.ws.path().join("new.txt").exists());
    assert!(tool_messages(&server)[0].contains("plan"), "{:?}", tool_messages(&server));
}

/// The head's size in bytes, from `quiver catalog --hash`.
fn head_bytes() -> u64 {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["catalog", "--format", "openai", "--hash"])
        .output()
        .unwrap();
    stdout(&out).split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_small_window_compacts_and_resume_continues_with_the_same_head() {
    let env = Env::new();
    // Room for the head and the prompt, not for a big file on top.
    let window = ((head_bytes() / 4 + 500) as f64 / 0.8) as u64;
    std::fs::write(env.config.path().join("config.toml"), format!("[model]\ncontext_window = {window}\n")).unwrap();
    let server = ScriptedServer::start().await.unwrap();
    std::fs::write(env.ws.path().join("big.txt"), "a line of text that fills the context\n".repeat(200)).unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "tool_search", r#"{"query":"project map"}"#).and_call(
            "c2",
            "read_file",
            r#"{"path":"big.txt"}"#,
        ),
        ScriptedTurn::text("# Session relay\nGoal: plan. Next action: answer."),
        ScriptedTurn::text("Planned."),
    ]);
    let out = env.exec(&server, &["--json", "Plan the work."]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    assert_eq!(of_type(&evs, "compaction").len(), 1, "{}", stdout(&out));
    // The compaction's relay is also the workspace's hand-off file, in full shape.
    let handoff = std::fs::read_to_string(env.ws.path().join(".quiver/handoff.md")).unwrap();
    assert!(handoff.starts_with("# Session relay\n") && handoff.contains("## Next action\n"), "{handoff}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].json()["messages"].to_string().contains("# Session relay"));
    // After compaction the relay replaces the history and the tail is empty again.
    let after = requests[2].json();
    assert_eq!(after["messages"].as_array().unwrap().len(), 2, "{after}");
    assert!(after["messages"][1]["content"].as_str().unwrap().contains("Session relay"));
    assert_eq!(after["tools"], requests[0].json()["tools"]);
    assert_ne!(requests[1].json()["tools"], requests[0].json()["tools"]);
    let transcript = env.only_session();
    // The summary request is recorded like every model request, then the
    // compaction with the estimated request size before and after.
    let recorded = quiver_engine::transcript::Transcript::read(&transcript).unwrap();
    let kinds: Vec<&str> = recorded
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ModelRequest { .. } => Some("request"),
            Event::Compaction { before_tokens: Some(before), after_tokens: Some(after) } => {
                assert!(before > after && *after > 0, "{before} -> {after}");
                Some("compaction")
            }
            Event::Compaction { .. } => panic!("a compaction without token counts"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["request", "request", "compaction", "request"]);
    let compaction_event = of_type(&evs, "compaction")[0];
    assert!(compaction_event["before_tokens"].as_u64().unwrap() > compaction_event["after_tokens"].as_u64().unwrap());
    let summary = stdout(&audit(&transcript)).lines().last().unwrap().to_string();
    assert!(summary.starts_with("requests=3 head_changes=0 prefix_breaks=0 compactions=1"), "{summary}");

    // Resume: the history comes back and the next request extends it.
    let id = transcript.file_stem().unwrap().to_str().unwrap().to_string();
    server.script([ScriptedTurn::text("Resumed.")]);
    let out = env.exec(&server, &["resume", &id, "And now?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Resumed.\n");
    let requests = server.requests();
    let (before, resumed) = (requests[2].json(), requests[3].json());
    let old = before["messages"].as_array().unwrap();
    let new = resumed["messages"].as_array().unwrap();
    assert_eq!(&new[..old.len()], &old[..]);
    assert_eq!(new.last().unwrap()["content"], "And now?");
    assert_eq!(resumed["tools"], before["tools"]);
    assert_eq!(env.sessions().len(), 1);
    let summary = stdout(&audit(&transcript)).lines().last().unwrap().to_string();
    assert!(summary.starts_with("requests=4 head_changes=0 prefix_breaks=0"), "{summary}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_key_exits_2_naming_the_variable() {
    let env = Env::new();
    let out = env.command(None).args(["exec", "hello"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("DEEPSEEK_API_KEY"), "{err}");
}

#[test]
fn exec_help_documents_the_flags_and_exit_codes() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quiver")).args(["exec", "--help"]).output().unwrap();
    let help = stdout(&out);
    for word in [
        "--provider",
        "--model",
        "--base-url",
        "--mode",
        "--workspace",
        "--max-turns",
        "--effort",
        "--json",
        "--output-last-message",
        "resume",
        "130",
        "DEEPSEEK_API_KEY",
        "fim_edit",
    ] {
        assert!(help.contains(word), "`{word}` missing from:\n{help}");
    }
}

/// An RLM session inside `quiver exec`: the child query goes to the same
/// (scripted) provider the run was given with `--base-url`, as a one-shot
/// non-streaming `deepseek-v4-flash` call; its tokens land in the transcript.
#[tokio::test(flavor = "multi_thread")]
async fn an_rlm_session_in_exec_sends_its_child_query_through_the_runs_provider() {
    if quiver_testkit::program_or_skip("python3", "apt-get install python3").is_none() {
        return;
    }
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    server.script([
        ScriptedTurn::tool_call("c1", "rlm_open", r#"{"name":"doc","path":"notes.txt"}"#),
        ScriptedTurn::tool_call(
            "c2",
            "rlm_eval",
            r#"{"name":"doc","code":"print(sub_query('One word for this?', context=_context))"}"#,
        ),
        ScriptedTurn::text("greeting"),
        ScriptedTurn::text("It is a greeting."),
    ]);
    let out = env.exec(&server, &["--json", "What is notes.txt?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = events(&out);
    let ended: Vec<(&str, bool)> = of_type(&events, "tool_call_ended")
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["error"].is_null()))
        .collect();
    assert_eq!(ended, [("rlm_open", true), ("rlm_eval", true)]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let child = requests[2].json();
    assert_eq!(child["model"], "deepseek-v4-flash");
    assert_ne!(child["stream"], true);
    assert!(child["messages"].to_string().contains("hello"), "{child}");
    assert_eq!(requests[2].header("authorization"), Some("Bearer sk-test-secret"));
    assert!(tool_messages(&server).last().unwrap().contains("greeting"));

    let text = std::fs::read_to_string(env.only_session()).unwrap();
    let eval_result = text.lines().find(|l| l.contains("\"tool_result\"") && l.contains("\"rlm_eval\"")).unwrap();
    let eval_result: Value = serde_json::from_str(eval_result).unwrap();
    let usage = &eval_result["result"]["metadata"]["child_usage"];
    assert_eq!(usage["queries"], 1);
    assert!(usage["input_tokens"].as_u64().unwrap() > 0, "{eval_result}");
    // The same accounting in the run's events; other tools' events have none.
    let eval_ended = of_type(&events, "tool_call_ended")[1];
    assert_eq!(&eval_ended["child_usage"], usage);
    assert!(of_type(&events, "tool_call_ended")[0].get("child_usage").is_none());
    assert!(!text.contains("sk-test-secret"));
}

/// An image a tool returns reaches a vision model as an image (Anthropic:
/// inside the tool_result) and a text model as a one-line stand-in.
#[tokio::test(flavor = "multi_thread")]
async fn tool_images_reach_vision_models_and_text_models_read_a_stand_in() {
    let env = Env::new();
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
    png.extend_from_slice(b"IHDR");
    png.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0, 0, 0, 0]);
    std::fs::write(env.ws.path().join("shot.png"), &png).unwrap();
    let script = || {
        [ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"shot.png"}"#), ScriptedTurn::text("A one-pixel image.")]
    };

    let server = ScriptedServer::start().await.unwrap();
    server.script(script());
    let out = env.exec_anthropic(&server, "Describe shot.png").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second = server.requests()[1].json();
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    assert_eq!(result["content"][1]["type"], "image", "{result}");
    assert_eq!(result["content"][1]["source"]["media_type"], "image/png");
    use base64::Engine as _;
    let sent =
        base64::engine::general_purpose::STANDARD.decode(result["content"][1]["source"]["data"].as_str().unwrap());
    assert_eq!(sent.unwrap(), png);

    // DeepSeek (no vision): the stand-in only, no image bytes in the request.
    let server = ScriptedServer::start().await.unwrap();
    server.script(script());
    let out = env.exec(&server, &["Describe shot.png"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second = server.requests()[1].json();
    let tool = second["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    assert!(tool["content"].as_str().unwrap().contains("[image image/png"), "{tool}");
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    assert!(!second.to_string().contains(&data), "image bytes sent to a text model");
}

/// Anthropic documents that an error can come after the 200, as an `error`
/// event in the stream (its example is `overloaded_error`): the overload it
/// would otherwise have answered with 529, and retried the same way.
#[tokio::test]
async fn an_overload_in_the_middle_of_an_anthropic_stream_is_retried() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let overloaded = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}"#,
        "\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: error\n",
        r#"data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
        "\n\n",
    );
    server.script([
        ScriptedTurn::raw(overloaded),
        ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#),
        ScriptedTurn::text("It says hello."),
    ]);
    let out = env.exec_anthropic(&server, "What does notes.txt say?").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("overloaded_error"), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It says hello.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body, requests[1].body, "the same request again");

    // A refusal of the request itself is not retried.
    let server = ScriptedServer::start().await.unwrap();
    let invalid = overloaded.replace("overloaded_error", "invalid_request_error");
    server.script([ScriptedTurn::raw(invalid), ScriptedTurn::text("unreachable")]);
    let out = env.exec_anthropic(&server, "What does notes.txt say?").await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("invalid_request_error"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1);
}

/// The same on the Chat Completions wire: an error chunk after the 200 whose
/// kind OpenAI documents as temporary (`server_error`) is retried like a 500;
/// another kind ends the run with the provider's words.
#[tokio::test]
async fn a_server_error_in_the_middle_of_a_chat_stream_is_retried() {
    let env = Env::new();
    let server = ScriptedServer::start().await.unwrap();
    let broken = concat!(
        r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
        "\n\n",
        r#"data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#,
        "\n\n",
    );
    server.script([
        ScriptedTurn::raw(broken),
        ScriptedTurn::tool_call("c1", "read_file", r#"{"path":"notes.txt"}"#),
        ScriptedTurn::text("It says hello."),
    ]);
    let out = env.exec(&server, &["What does notes.txt say?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("server_error"), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It says hello.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body, requests[1].body, "the same request again");

    let server = ScriptedServer::start().await.unwrap();
    let refused = broken.replace("server_error", "invalid_request_error");
    server.script([ScriptedTurn::raw(refused), ScriptedTurn::text("unreachable")]);
    let out = env.exec(&server, &["What does notes.txt say?"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("invalid_request_error"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1);
}
