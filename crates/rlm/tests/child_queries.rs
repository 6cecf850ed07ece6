//! `sub_query*` and `sub_rlm` through the scripted model server: what it
//! receives, the concurrency of a batch, the cap, the session's timeout.

use std::time::{Duration, Instant};

use quiver_agent::Usage;
use quiver_agent::scripted::{Quirk, ScriptedServer, ScriptedTurn};
use serde_json::{Value, json};

use crate::support::{H, harness, python, scripted_child};

async fn setup() -> (ScriptedServer, H) {
    let server = ScriptedServer::start().await.unwrap();
    let h = harness(scripted_child(&server, vec!["DEEPSEEK_API_KEY".into()]));
    h.ok("rlm_open", json!({"name": "s", "content": "apples: 3\npears: 5\n"})).await;
    (server, h)
}

fn usage(input: u64, output: u64, hit: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_hit_tokens: hit,
        cache_miss_tokens: input - hit,
        cache_write_tokens: 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_a_server_does_not_report_is_unknown_not_zero() {
    if !python() {
        return;
    }
    let (server, h) = setup().await;
    server.quirk(Quirk::NoUsage);
    server.push(ScriptedTurn::text("8"));
    let r = h.call("rlm_eval", json!({"name": "s", "code": "sub_query('How many fruits?', context=_context)"})).await;
    assert!(!r.is_error, "{}", r.content_text());
    let child = &r.metadata["child_usage"];
    assert_eq!(child["queries"], 1);
    assert!(child["input_tokens"].is_null() && child["output_tokens"].is_null(), "{child}");
    assert_eq!(child["usage_unreported"], 1);
    let stats = h.ok("rlm_close", json!({"name": "s"})).await;
    assert!(stats["stats"]["input_tokens"].is_null(), "{stats}");
    assert_eq!(stats["stats"]["usage_unreported"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_query_sends_one_non_streaming_request_to_the_child_model() {
    if !python() {
        return;
    }
    let (server, h) = setup().await;
    server.push(ScriptedTurn::text("8").with_usage(usage(40, 1, 32)));
    let out =
        h.eval_ok("s", "total = sub_query('How many fruits in all?', context=_context, timeout_secs=999)\ntotal").await;
    assert_eq!(out["value"], "'8'");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].json();
    assert_eq!(requests[0].path, "/chat/completions");
    assert_eq!(body["model"], "deepseek-v4-flash");
    assert_ne!(body["stream"], true);
    assert!(body.get("tools").is_none(), "{body}");
    let user = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap();
    let text = user["content"].as_str().unwrap();
    assert!(text.starts_with("How many fruits in all?") && text.contains("apples: 3\npears: 5"), "{text}");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test-key"));

    let r = h.call("rlm_eval", json!({"name": "s", "code": "1"})).await;
    assert_eq!(r.metadata["child_usage"]["queries"], 0);
    let stats = h.ok("rlm_close", json!({"name": "s"})).await;
    assert_eq!(stats["stats"]["child_queries"], 1);
    assert_eq!(stats["stats"]["input_tokens"], 40);
    assert_eq!(stats["stats"]["output_tokens"], 1);
    assert_eq!(stats["stats"]["cache_hit_tokens"], 32);
    assert_eq!(stats["stats"]["evals"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_sixteen_runs_concurrently_and_seventeen_is_refused_naming_the_cap() {
    if !python() {
        return;
    }
    let (server, h) = setup().await;
    let delay = Duration::from_millis(400);
    for i in 0..16 {
        server.push(ScriptedTurn::text(format!("answer-{i}")).with_delay(delay));
    }
    let started = Instant::now();
    let r = h.call("rlm_eval", json!({"name": "s", "code": "out = sub_query_batch([f'q{i}' for i in range(16)])\nlen(out), sorted(out)[:2]"})).await;
    let wall = started.elapsed();
    assert!(!r.is_error, "{}", r.content_text());
    assert_eq!(r.content["value"], "(16, ['answer-0', 'answer-1'])");
    assert_eq!(r.metadata["child_usage"]["queries"], 16);
    // Sequential would take 16 × 400 ms; overlapping calls take about one delay.
    assert!(wall < delay * 4, "16 delayed child queries took {wall:?}: they did not overlap");
    assert_eq!(server.requests().len(), 16);
    let mut prompts: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.json()["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string())
        .collect();
    prompts.sort();
    assert_eq!(prompts.len(), 16);
    assert!(prompts.contains(&"q15".to_string()), "{prompts:?}");

    let r = h.err("rlm_eval", json!({"name": "s", "code": "sub_query_batch(['q'] * 17)"})).await;
    let error = r.content["error"].as_str().unwrap();
    assert!(error.contains("at most 16 prompts per call (got 17)"), "{error}");
    assert_eq!(server.requests().len(), 16, "nothing was sent for the refused batch");

    // sub_query_map batches a longer list by itself (16 + 4).
    for i in 0..20 {
        server.push(ScriptedTurn::text(format!("m{i}")));
    }
    let out = h.eval_ok("s", "len(sub_query_map('Classify this line:', [str(i) for i in range(20)]))").await;
    assert_eq!(out["value"], "20");
    assert_eq!(server.requests().len(), 36);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_timeout_cuts_a_slow_child_query_whatever_the_call_asked() {
    if !python() {
        return;
    }
    let (server, h) = setup().await;
    h.ok("rlm_configure", json!({"name": "s", "sub_query_timeout_ms": 1000})).await;
    server.push(ScriptedTurn::text("late").with_delay(Duration::from_secs(6)));
    let started = Instant::now();
    let out = h
        .eval_ok(
            "s",
            "try:\n    sub_query('slow?', timeout_secs=60)\nexcept SubQueryError as e:\n    print('failed:', e)",
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.contains("timed out after 1s") && stdout.contains("sub_query_timeout_ms"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_rlm_runs_a_nested_session_the_child_model_drives_and_depth_is_limited() {
    if !python() {
        return;
    }
    let (server, h) = setup().await;
    server.push(ScriptedTurn::text("Let me look.\n```python\nprint(len(_context))\n```"));
    server.push(ScriptedTurn::text("```python\nfinalize({'chars': len(_context), 'first': _context[:3]})\n```"));
    let out = h.eval_ok("s", "r = sub_rlm('How long is it?', context='abcdefgh')\nr").await;
    assert_eq!(out["value"], "{'chars': 8, 'first': 'abc'}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The second step saw the first step's printed output.
    let second: Value = requests[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(last.contains("Output:\n8"), "{last}");

    h.ok("rlm_configure", json!({"name": "s", "max_depth": 0})).await;
    let r = h.err("rlm_eval", json!({"name": "s", "code": "sub_rlm('x', context='y')"})).await;
    assert!(r.content["error"].as_str().unwrap().contains("max_depth is 0"), "{}", r.content);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_child_model_raises_in_python_with_the_provider_error() {
    if !python() {
        return;
    }
    let (server, h) = setup().await;
    server.push(ScriptedTurn::status(400, None));
    let r = h.err("rlm_eval", json!({"name": "s", "code": "sub_query('x')"})).await;
    let error = r.content["error"].as_str().unwrap();
    assert!(error.contains("SubQueryError") && error.contains("HTTP 400"), "{error}");
    assert_eq!(h.eval_ok("s", "2 + 2").await["value"], "4");
}

/// The provider key (under its built-in name and under a custom name from the
/// config) never reaches the REPL. Runs itself in a child test process, so
/// the keys are in quiver's environment without touching this process's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_keys_never_reach_the_python_environment() {
    if !python() {
        return;
    }
    if std::env::var_os("QUIVER_RLM_PROBE").is_none() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["child_queries::provider_keys_never_reach_the_python_environment", "--exact", "--nocapture"])
            .env("QUIVER_RLM_PROBE", "1")
            .env("DEEPSEEK_API_KEY", "sk-probe-deepseek")
            .env("MYLLM_KEYVAR", "sk-probe-custom")
            .env("QUIVER_RLM_HARMLESS", "visible")
            .status()
            .unwrap();
        assert!(status.success(), "the probe run failed");
        return;
    }
    assert_eq!(std::env::var("DEEPSEEK_API_KEY").unwrap(), "sk-probe-deepseek");
    let server = ScriptedServer::start().await.unwrap();
    let h = harness(scripted_child(&server, vec!["DEEPSEEK_API_KEY".into(), "MYLLM_KEYVAR".into()]));
    h.ok("rlm_open", json!({"name": "s", "content": "x"})).await;
    // `GIT_CONFIG_KEY_0` is git's `safe.directory` for a root command (the
    // sandbox's idmap), not a key.
    let out = h.eval_ok("s", "import os\n(sorted(k for k in os.environ if 'KEY' in k and not k.startswith('GIT_CONFIG_')), 'sk-probe' in repr(dict(os.environ)), os.environ.get('QUIVER_RLM_HARMLESS'))").await;
    assert_eq!(out["value"], "([], False, 'visible')");
}
