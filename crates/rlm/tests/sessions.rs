//! Sessions without child queries: sources, state, limits, crashes, containment.

use std::time::Instant;

use serde_json::json;

use crate::support::{H, plain, python};

async fn open_content(h: &H, name: &str, content: &str) -> serde_json::Value {
    h.ok("rlm_open", json!({"name": name, "content": content})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_returns_metadata_and_state_persists_across_evals() {
    if !python() {
        return;
    }
    let h = plain();
    let meta = open_content(&h, "s", "alpha\nbeta\ngamma\n").await;
    assert_eq!(meta["type"], "str");
    assert_eq!(meta["lines"], 3);
    assert_eq!(meta["chars"], 17);
    assert_eq!(meta["source"], json!({"content": true}));
    assert_eq!(meta["bound_as"], json!(["_context", "_ctx", "content"]));
    assert!(meta["python"].as_str().unwrap().starts_with('3'));

    let out = h.eval_ok("s", "n = len(_context.splitlines())\nprint('lines', n)").await;
    assert_eq!(out["stdout"], "lines 3\n");
    let out = h.eval_ok("s", "n * 10").await;
    assert_eq!(out["value"], "30");
    // The aliases are the same object; `context`/`ctx` are left to the user.
    let out =
        h.eval_ok("s", "(_ctx is _context, content is _context, 'context' in globals(), 'ctx' in globals())").await;
    assert_eq!(out["value"], "(True, True, False, False)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_megabyte_file_counted_and_finalized_dict_projected_with_handle_read() {
    if !python() {
        return;
    }
    let h = plain();
    let line = "2026-11-23 INFO request served in 12ms by worker-7\n";
    let mut text = String::new();
    let mut lines = 0;
    while text.len() < 5 * 1024 * 1024 {
        text.push_str(line);
        if lines % 1000 == 0 {
            text.push_str("2026-11-23 ERROR worker-3 crashed\n");
        }
        lines += 1;
    }
    let errors = text.lines().filter(|l| l.contains("ERROR")).count();
    let total = text.lines().count();
    h.write("big.log", &text);
    let meta = h.ok("rlm_open", json!({"name": "log", "path": "big.log"})).await;
    assert_eq!(meta["source"], json!({"path": "big.log"}));
    assert_eq!(meta["lines"], total);
    assert!(meta["preview"].as_str().unwrap().len() < 200, "only a preview comes back");

    let out = h
        .eval_ok(
            "log",
            "ls = _context.splitlines()\nerr = [l for l in ls if 'ERROR' in l]\n\
             finalize({'lines': len(ls), 'errors': len(err), 'workers': sorted({l.split()[2] for l in err})}, confidence=0.9)",
        )
        .await;
    let card = &out["final"];
    assert_eq!(card["type"], "object");
    assert_eq!(card["count"], 3);
    assert_eq!(card["confidence"], 0.9);
    let handle = card["var_handle"].as_str().unwrap();
    let read = h.ok("handle_read", json!({"handle": handle, "op": "jsonpath", "path": "$.lines"})).await;
    assert_eq!(read["matches"][0]["value"], total);
    let read = h.ok("handle_read", json!({"handle": handle, "op": "jsonpath", "path": "$.errors"})).await;
    assert_eq!(read["matches"][0]["value"], errors);
    let read = h.ok("handle_read", json!({"handle": handle, "op": "jsonpath", "path": "$.workers[0]"})).await;
    assert_eq!(read["matches"][0]["value"], "worker-3");

    // A string becomes a text handle.
    let out = h.eval_ok("log", "finalize('line one\\nline two')").await;
    let handle = out["final"]["var_handle"].as_str().unwrap();
    assert_eq!(out["final"]["type"], "string");
    let read = h.call("handle_read", json!({"handle": handle, "op": "range", "offset": 2, "limit": 1})).await;
    assert!(read.content_text().contains("line two"), "{}", read.content_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_over_the_limit_is_cut_and_kept_whole_behind_a_handle() {
    if !python() {
        return;
    }
    let h = plain();
    open_content(&h, "s", "x").await;
    h.ok("rlm_configure", json!({"name": "s", "output_limit_chars": 100})).await;
    let out = h.eval_ok("s", "print('a' * 5000)").await;
    let shown = out["stdout"].as_str().unwrap();
    assert!(shown.starts_with(&"a".repeat(100)) && !shown.starts_with(&"a".repeat(101)), "{shown}");
    assert!(shown.contains("4901 more characters"), "{shown}");
    let card = &out["stdout_handle"];
    assert_eq!(card["count"], 5001);
    let read = h.ok("handle_read", json!({"handle": card["var_handle"], "op": "count"})).await;
    assert_eq!(read["chars"], 5001);

    // `handle` feedback never inlines printed output.
    h.ok("rlm_configure", json!({"name": "s", "output_feedback": "handle"})).await;
    let out = h.eval_ok("s", "print('hi')").await;
    assert!(out.get("stdout").is_none(), "{out}");
    assert_eq!(out["stdout_handle"]["count"], 3);

    // Bad settings change nothing and say what is wrong.
    let r = h.err("rlm_configure", json!({"name": "s", "output_limit_chars": 5, "eval_timeout_ms": 3000})).await;
    assert!(
        r.content_text().contains("`output_limit_chars` must be between 100 and 100000, got 5"),
        "{}",
        r.content_text()
    );
    let settings = h.ok("rlm_configure", json!({"name": "s"})).await;
    assert_eq!(settings["eval_timeout_ms"], 60000);
    assert_eq!(settings["output_limit_chars"], 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runaway_loop_is_stopped_at_the_wall_time_limit_and_the_session_goes_on() {
    if !python() {
        return;
    }
    let h = plain();
    open_content(&h, "s", "x").await;
    // In seconds, as before one vocabulary: recorded calls still set the limit.
    h.ok("rlm_configure", json!({"name": "s", "eval_timeout_secs": 1})).await;
    h.eval_ok("s", "kept = 41").await;

    let started = Instant::now();
    let r = h.err("rlm_eval", json!({"name": "s", "code": "while True:\n    pass"})).await;
    assert!(started.elapsed().as_secs_f64() < 4.0, "took {:?}", started.elapsed());
    assert_eq!(r.content["timed_out"], true);
    let error = r.content["error"].as_str().unwrap();
    assert!(error.contains("wall-time limit of 1s") && error.contains("KeyboardInterrupt"), "{error}");
    // Interrupted, not killed: the variables are still there.
    assert_eq!(h.eval_ok("s", "kept + 1").await["value"], "42");

    // A loop that swallows the interrupt is killed and the REPL restarted.
    let code = "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass";
    let r = h.err("rlm_eval", json!({"name": "s", "code": code})).await;
    assert_eq!(r.content["timed_out"], true);
    assert!(r.content["restarted"].as_str().unwrap().contains("killed and restarted"), "{}", r.content);
    let out = h.eval_ok("s", "('kept' in globals(), len(_context))").await;
    assert_eq!(out["value"], "(False, 1)");
    let stats = h.ok("rlm_close", json!({"name": "s"})).await;
    assert_eq!(stats["stats"]["timeouts"], 2);
    assert_eq!(stats["stats"]["restarts"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_errors_and_a_crashing_interpreter_are_reported_precisely() {
    if !python() {
        return;
    }
    let h = plain();
    open_content(&h, "s", "abc").await;
    h.eval_ok("s", "v = 1").await;
    let r = h.err("rlm_eval", json!({"name": "s", "code": "print('before')\n1 / 0"})).await;
    assert_eq!(r.content["stdout"], "before\n");
    let error = r.content["error"].as_str().unwrap();
    assert!(error.contains("ZeroDivisionError") && error.contains("<rlm_eval>"), "{error}");
    assert!(!error.contains("bootstrap"), "bootstrap frames are hidden: {error}");
    let r = h.err("rlm_eval", json!({"name": "s", "code": "def f(:"})).await;
    assert!(r.content["error"].as_str().unwrap().contains("SyntaxError"), "{}", r.content);
    let r = h.err("rlm_eval", json!({"name": "s", "code": "import sys; sys.exit(3)"})).await;
    assert!(r.content["error"].as_str().unwrap().contains("SystemExit(3)"), "{}", r.content);
    assert_eq!(h.eval_ok("s", "v").await["value"], "1", "errors keep the state");

    let r = h.err("rlm_eval", json!({"name": "s", "code": "import os, sys\nsys.stderr.flush()\nos.write(2, b'dying now\\n')\nos._exit(7)"})).await;
    let error = r.content["error"].as_str().unwrap();
    assert!(error.contains("exited") && error.contains("7") && error.contains("dying now"), "{error}");
    assert!(r.content["restarted"].as_str().unwrap().contains("died and was restarted"), "{}", r.content);
    assert_eq!(h.eval_ok("s", "_context.upper()").await["value"], "'ABC'");

    let r = h.err("rlm_eval", json!({"name": "s", "code": "finalize(object())"})).await;
    assert!(r.content["error"].as_str().unwrap().contains("JSON-serializable"), "{}", r.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sources_names_and_sessions_are_refused_and_nothing_is_left_open() {
    if !python() {
        return;
    }
    let h = plain();
    for path in ["../outside.txt", "/etc/passwd", "a/../../x"] {
        let r = h.err("rlm_open", json!({"name": "s", "path": path})).await;
        assert!(!r.content_text().is_empty());
    }
    std::os::unix::fs::symlink("/etc/hostname", h.dir.path().join("link")).unwrap();
    h.err("rlm_open", json!({"name": "s", "path": "link"})).await;
    let r = h.err("rlm_open", json!({"name": "s"})).await;
    assert!(r.content_text().contains("needs one source"), "{}", r.content_text());
    let r = h.err("rlm_open", json!({"name": "s", "content": "a", "path": "b"})).await;
    assert!(r.content_text().contains("got path and content"), "{}", r.content_text());
    let r = h.err("rlm_open", json!({"name": "a b", "content": "a"})).await;
    assert!(r.content_text().contains("invalid session name"), "{}", r.content_text());
    let r = h.err("rlm_open", json!({"name": "s", "path": "missing.txt"})).await;
    assert!(r.content_text().contains("missing.txt"), "{}", r.content_text());
    let r = h.err("rlm_eval", json!({"name": "s", "code": "1"})).await;
    assert!(r.content_text().contains("no RLM session `s`: open one with rlm_open"), "{}", r.content_text());

    open_content(&h, "s", "x").await;
    let r = h.err("rlm_open", json!({"name": "s", "content": "y"})).await;
    assert!(r.content_text().contains("already open"), "{}", r.content_text());
    let r = h.err("rlm_close", json!({"name": "t"})).await;
    assert!(r.content_text().contains("open sessions: s"), "{}", r.content_text());
    let closed = h.ok("rlm_close", json!({"name": "s"})).await;
    assert_eq!(closed["closed"], true);
    h.err("rlm_eval", json!({"name": "s", "code": "1"})).await;
}

/// A harness with session `s` open in the OS sandbox, or `None` after a skip.
async fn sandboxed_session() -> Option<H> {
    if !python() {
        return None;
    }
    let h = plain();
    let opened = h.call("rlm_open", json!({"name": "s", "content": "x"})).await;
    if opened.metadata["sandbox"] != "workspace-write" {
        quiver_testkit::require_or_skip("an OS sandbox (Landlock + seccomp)", "a Linux kernel with Landlock");
        return None;
    }
    Some(h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repl_writes_only_its_scratch_dir_and_opens_no_socket() {
    let Some(h) = sandboxed_session().await else { return };
    let target = h.dir.path().join("escaped.txt");
    let code = format!(
        "import os, socket\nres = {{}}\n\
         open('scratch_ok.txt', 'w').write('fine')\nres['scratch'] = open('scratch_ok.txt').read()\n\
         try:\n    open({target:?}, 'w').write('no')\n    res['workspace'] = 'written'\nexcept OSError as e:\n    res['workspace'] = type(e).__name__\n\
         try:\n    open(os.path.expanduser('~/quiver_rlm_escape'), 'w').write('no')\n    res['home'] = 'written'\nexcept OSError as e:\n    res['home'] = type(e).__name__\n\
         try:\n    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    s.settimeout(2)\n    s.connect(('127.0.0.1', 9))\n    res['socket'] = 'connected'\nexcept OSError as e:\n    res['socket'] = type(e).__name__ + ':' + str(e.errno)\n\
         finalize(res)"
    );
    let out = h.eval_ok("s", &code).await;
    let handle = out["final"]["var_handle"].as_str().unwrap();
    let res = h.ok("handle_read", json!({"handle": handle, "op": "slice"})).await;
    let res = &res["entries"];
    assert_eq!(res["scratch"], "fine");
    let socket = res["socket"].as_str().unwrap();
    if quiver_tools::process::mechanism() == quiver_sandbox::SandboxMechanism::Namespaces {
        // The namespace sandbox: what lies outside the scratch dir under /tmp
        // is not there at all, the rest of the filesystem is read-only (EROFS
        // is a plain OSError), and a socket reaches only the sandbox's own
        // loopback, where nothing listens.
        assert!(
            ["FileNotFoundError", "PermissionError", "OSError"].contains(&res["workspace"].as_str().unwrap()),
            "{res}"
        );
        assert!(["FileNotFoundError", "PermissionError", "OSError"].contains(&res["home"].as_str().unwrap()), "{res}");
        assert!(socket.starts_with("ConnectionRefusedError") || socket.starts_with("PermissionError"), "{socket}");
    } else {
        assert_eq!(res["workspace"], "PermissionError", "{res}");
        assert_eq!(res["home"], "PermissionError", "{res}");
        // EPERM/EACCES from the sandbox, not ECONNREFUSED from an empty port.
        assert!(socket.starts_with("PermissionError"), "the sandbox must refuse the socket: {socket}");
    }
    assert!(!target.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_is_reachable_from_another_engine_session_by_name() {
    if !python() {
        return;
    }
    let h = plain();
    open_content(&h, "s", "shared text").await;
    h.eval_ok("s", "note = 'from the parent'").await;
    // A sub-agent's engine session: same engine, its own session state.
    let mut other = h.ctx.clone();
    other.session = std::sync::Arc::new(quiver_engine::Session::new("sub-agent"));
    let r = other.call("rlm_eval", json!({"name": "s", "code": "note"})).await.unwrap();
    assert!(r.is_error && r.content_text().contains("no RLM session `s`"), "{}", r.content_text());

    let settings = h.ok("rlm_configure", json!({"name": "s", "shared": true})).await;
    assert_eq!(settings["shared"], true);
    let r = other.call("rlm_eval", json!({"name": "s", "code": "note"})).await.unwrap();
    assert_eq!(r.content["value"], "'from the parent'", "{}", r.content_text());

    h.ok("rlm_configure", json!({"name": "s", "shared": false})).await;
    let r = other.call("rlm_eval", json!({"name": "s", "code": "note"})).await.unwrap();
    assert!(r.is_error, "{}", r.content_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_writes_to_the_protocol_descriptors_cannot_break_the_session() {
    if !python() {
        return;
    }
    let h = plain();
    open_content(&h, "s", "x").await;
    let out = h
        .eval_ok("s", "import os, sys\nos.write(1, b'{\"type\": \"result\", \"id\": 999}\\nnot json\\n')\nsys.__stdout__.write('junk\\n')\nprint('ok')")
        .await;
    assert_eq!(out["stdout"], "ok\n");
    assert_eq!(h.eval_ok("s", "21 * 2").await["value"], "42");
}

/// Python missing: a clear error, nothing left open. Runs itself in a child
/// test process whose PATH has no python3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_python_rlm_open_says_what_to_install() {
    if std::env::var_os("QUIVER_RLM_NO_PYTHON").is_none() {
        let empty = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["sessions::without_python_rlm_open_says_what_to_install", "--exact", "--nocapture"])
            .env("QUIVER_RLM_NO_PYTHON", "1")
            .env("PATH", empty.path())
            .status()
            .unwrap();
        assert!(status.success(), "the run without python3 failed");
        return;
    }
    let h = plain();
    let r = h.err("rlm_open", json!({"name": "s", "content": "x"})).await;
    assert!(r.content_text().contains("no `python3` is on PATH"), "{}", r.content_text());
    let r = h.err("rlm_eval", json!({"name": "s", "code": "1"})).await;
    assert!(r.content_text().contains("no RLM session `s`"), "{}", r.content_text());
}

/// One HTTP response on loopback, whatever is asked.
async fn serve_once(body: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        let _ = socket.read(&mut buf).await;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(body.as_bytes()).await.unwrap();
    });
    format!("http://{addr}/data.txt")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_is_fetched_through_fetch_url_and_a_large_page_loads_whole() {
    if !python() {
        return;
    }
    let h = plain();
    let body: String = (0..20_000).map(|i| format!("row {i}\n")).collect();
    let url = serve_once(body.clone()).await;
    let meta = h.ok("rlm_open", json!({"name": "web", "url": url})).await;
    assert_eq!(meta["source"]["url"], url);
    assert_eq!(meta["lines"], 20_000, "{meta}");
    let out = h.eval_ok("web", "(len(_context.splitlines()), _context.splitlines()[-1])").await;
    assert_eq!(out["value"], "(20000, 'row 19999')");

    let r = h.err("rlm_open", json!({"name": "bad", "url": "file:///etc/passwd"})).await;
    assert!(r.content_text().contains("fetching `file:///etc/passwd` failed"), "{}", r.content_text());
}

/// A runaway eval stops at the interpreter's limits (64 tasks, 2 GiB) instead
/// of taking the machine, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_fork_bombs_stop_at_the_interpreters_limits() {
    let Some(h) = sandboxed_session().await else { return };
    let code = "import os, time\nres = {}\n\
        try:\n    big = bytearray(4 << 30)\n    res['memory'] = 'allocated'\nexcept MemoryError:\n    res['memory'] = 'MemoryError'\n\
        pids = []\nerr = None\n\
        for _ in range(300):\n    try:\n        pid = os.fork()\n    except OSError as e:\n        err = type(e).__name__\n        break\n    if pid == 0:\n        time.sleep(60)\n        os._exit(0)\n    pids.append(pid)\n\
        res['forks'] = len(pids)\nres['fork_error'] = err\n\
        for p in pids:\n    os.kill(p, 9)\n    os.waitpid(p, 0)\n\
        finalize(res)";
    let out = h.eval_ok("s", code).await;
    let handle = out["final"]["var_handle"].as_str().unwrap();
    let res = h.ok("handle_read", json!({"handle": handle, "op": "slice"})).await;
    let res = &res["entries"];
    assert_eq!(res["memory"], "MemoryError", "{res}");
    let forks = res["forks"].as_u64().unwrap();
    assert!(forks < 64, "{res}");
    assert_eq!(res["fork_error"], "BlockingIOError", "{res}");
    // The session survived both.
    let after = h.eval_ok("s", "finalize({'n': 6 * 7})").await;
    let handle = after["final"]["var_handle"].as_str().unwrap();
    let read = h.ok("handle_read", json!({"handle": handle, "op": "slice"})).await;
    assert_eq!(read["entries"]["n"], 42, "{read}");
}

/// Started by root, the REPL runs as an unprivileged user: root-only files
/// outside its scratch dir (`/etc/shadow`, a service's state) are not
/// readable to it, while its scratch dir stays writable. Not root: the
/// REPL already runs as the user, and there is nothing to map.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repl_started_by_root_cannot_read_root_only_files() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        eprintln!("SKIPPED: a_repl_started_by_root_cannot_read_root_only_files needs root");
        return;
    }
    let secret = std::path::PathBuf::from(format!("/var/lib/quiver-rlm-root-secret-{}", std::process::id()));
    std::fs::write(&secret, "root-only").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    struct Cleanup(std::path::PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _cleanup = Cleanup(secret.clone());
    let Some(h) = sandboxed_session().await else { return };
    if quiver_tools::process::mechanism() != quiver_sandbox::SandboxMechanism::Namespaces {
        // The Landlock fallback keeps the uid (a listed gap).
        return;
    }
    let code = format!(
        "import os\nres = {{'uid': os.getuid()}}\n\
         for name, path in [('secret', {secret:?}), ('shadow', '/etc/shadow')]:\n    \
         try:\n        open(path).read()\n        res[name] = 'read'\n    except OSError as e:\n        res[name] = type(e).__name__\n\
         open('scratch_ok.txt', 'w').write('fine')\nres['scratch'] = open('scratch_ok.txt').read()\n\
         finalize(res)"
    );
    let out = h.eval_ok("s", &code).await;
    let handle = out["final"]["var_handle"].as_str().unwrap();
    let res = h.ok("handle_read", json!({"handle": handle, "op": "slice"})).await;
    let res = &res["entries"];
    assert_ne!(res["uid"], 0, "{res}");
    assert_eq!(res["secret"], "PermissionError", "{res}");
    if std::path::Path::new("/etc/shadow").exists() {
        assert_eq!(res["shadow"], "PermissionError", "{res}");
    }
    assert_eq!(res["scratch"], "fine", "{res}");
}
