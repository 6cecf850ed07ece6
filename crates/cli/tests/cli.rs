//! The CLI contract scripts rely on (output formats, exit codes, the metrics
//! line), through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn quiver(args: &[&str], cwd: &std::path::Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .current_dir(cwd)
        .env("QUIVER_LOG", "warn")
        // the contract tests run a fresh machine's ranker (the embedded
        // model), whatever the shell, the user's config or a pulled model say
        .env("QUIVER_SEARCH_MODEL", "embedded")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn catalog_hash_is_the_same_line_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = ["plan", "agent", "yolo"]
        .iter()
        .map(|m| {
            let (code, out, err) = quiver(&["catalog", "--mode", m, "--hash"], dir.path());
            assert_eq!(code, 0, "{err}");
            out
        })
        .collect();
    assert_eq!(lines[0], lines[1]);
    assert_eq!(lines[1], lines[2]);
    let re = regex_lite(&lines[0]);
    assert!(re, "unexpected hash line {:?}", lines[0]);
}

fn regex_lite(line: &str) -> bool {
    let parts: Vec<&str> = line.trim_end().split(' ').collect();
    parts.len() == 5
        && parts[0].starts_with("sha256:")
        && parts[0].len() == 7 + 64
        && parts[1].parse::<usize>().is_ok()
        && parts[2] == "bytes"
        && parts[3].parse::<usize>().is_ok()
        && parts[4] == "tools"
}

#[test]
fn lint_passes_and_rejects_a_bad_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = quiver(&["lint"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    std::fs::write(dir.path().join("bad.toml"), "[profiles.default]\nadd = [\"todo_write\"]\n").unwrap();
    let (code, _, err) = quiver(&["lint", "--manifest", "bad.toml"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("alias-in-active"), "{err}");
    // A retired sub-agent name may not come back, not even as an alias.
    std::fs::write(
        dir.path().join("legacy.toml"),
        "[aliases.spawn_agent]\nreplacement = \"agent_open\"\nstate = \"hidden-compatibility\"\n",
    )
    .unwrap();
    let (code, _, err) = quiver(&["lint", "--manifest", "legacy.toml"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("legacy-agent-name") && err.contains("spawn_agent"), "{err}");
}

#[test]
fn call_todo_write_matches_checklist_write_plus_notice() {
    let dir = tempfile::tempdir().unwrap();
    let args = r#"{"items":[{"content":"ship it","status":"in_progress"}]}"#;
    let (code, old, err) = quiver(&["call", "todo_write", "--args", args], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("deprecated"), "one warning is logged: {err}");
    let (_, new, _) = quiver(&["call", "checklist_write", "--args", args], dir.path());
    let old: serde_json::Value = serde_json::from_str(&old).unwrap();
    let new: serde_json::Value = serde_json::from_str(&new).unwrap();
    assert_eq!(old["content"], new["content"]);
    assert_eq!(old["metadata"]["_deprecation"]["use_instead"], "checklist_write");
    assert!(new["metadata"].get("_deprecation").is_none());
}

#[test]
fn call_reports_bad_json_and_error_results() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = quiver(&["call", "read_file", "--args", "{nope"], dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("--args is not valid JSON"), "{err}");
    let (code, out, _) = quiver(&["call", "read_file", "--args", r#"{"path":"../../etc/passwd"}"#], dir.path());
    assert_eq!(code, 1);
    assert!(out.contains("outside the workspace root"), "{out}");
}

/// A `quiver call` whose result spills leaves no spill files behind (nothing
/// can read its handle once the process ends), unless `QUIVER_SPILL_DIR`
/// names a folder to keep them in.
#[test]
fn call_removes_its_spilled_output_unless_asked_to_keep_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "a line of a large file\n".repeat(4000)).unwrap();
    let run = |var: &str, value: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_quiver"))
            .args(["call", "read_file", "--args", r#"{"path":"big.txt","limit":4000}"#])
            .current_dir(dir.path())
            .env("QUIVER_LOG", "warn")
            .env_remove("QUIVER_SPILL_DIR")
            .env(var, value)
            .output()
            .unwrap()
    };
    let out = run("QUIVER_HOME", home.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("out_1"), "{stdout}");
    let spills = home.path().join("tool_outputs");
    let left: Vec<_> = std::fs::read_dir(&spills).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "spill folders left behind: {left:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("QUIVER_SPILL_DIR"));

    let keep = tempfile::tempdir().unwrap();
    let out = run("QUIVER_SPILL_DIR", keep.path());
    assert!(out.status.success());
    assert_eq!(std::fs::read_dir(keep.path()).unwrap().count(), 1, "the named folder keeps the session's spills");
}

#[test]
fn tools_lists_every_name() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = quiver(&["tools", "--json"], dir.path());
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["tools"].as_array().unwrap();
    let todo = rows.iter().find(|r| r["name"] == "todo_write").unwrap();
    assert_eq!(todo["state"], "deprecated");
    assert_eq!(todo["canonical"], "checklist_write");
}

/// The bench catalogs and queries in the repository (`bench/search/data`).
fn bench_data() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/data")
}

/// The contract's fields first, in order (scripts match this prefix), then the
/// load figures, starting with `tail_bytes=`.
fn metrics_line_ok(line: &str) -> bool {
    let keys = ["top1=", "top5=", "mrr=", "p50_us=", "p99_us=", "n=", "tools=", "tail_bytes="];
    let parts: Vec<&str> = line.split(' ').collect();
    parts.len() > keys.len()
        && parts.iter().zip(keys).all(|(p, k)| p.starts_with(k) && p[k.len()..].parse::<f64>().is_ok())
}

#[test]
fn bench_search_prints_the_metrics_line() {
    let bench = bench_data();
    let dir = tempfile::tempdir().unwrap();
    let queries = bench.join("queries/native.jsonl");
    let (code, out, err) = quiver(&["bench", "search", "--native", "--queries", queries.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(metrics_line_ok(last), "{last:?}");
    assert!(last.contains(" n=52 "), "{last}");

    let catalogs = format!(
        "{},{}",
        bench.join("catalogs/github-mcp.json").display(),
        bench.join("catalogs/azure-mcp.json").display()
    );
    let azure_queries = bench.join("queries/azure-mcp.jsonl");
    let (code, out, err) =
        quiver(&["bench", "search", "--catalog", &catalogs, "--queries", azure_queries.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{err}");
    let last = out.lines().last().unwrap_or_default();
    assert!(metrics_line_ok(last) && last.contains(" n=501 tools=317 "), "{last}");
    // Far better than chance: the ranker works on real catalogs.
    let top5: f64 = last.split(' ').nth(1).unwrap()["top5=".len()..].parse().unwrap();
    assert!(top5 > 0.9, "{last}");
}

#[test]
fn bench_search_splits_queries_and_takes_parameter_overrides() {
    let bench = bench_data();
    let dir = tempfile::tempdir().unwrap();
    let queries = bench.join("queries/native.jsonl");
    let q = queries.to_str().unwrap();
    // the lexical ranker's parameters: meaning (the embedded model) would
    // make up for the weights turned off below
    let run = |extra: &[&str]| {
        let mut args = vec!["bench", "search", "--native", "--lexical", "--queries", q];
        args.extend_from_slice(extra);
        quiver(&args, dir.path())
    };
    let (_, odd, _) = run(&["--split", "odd"]);
    let (_, even, _) = run(&["--split", "even"]);
    assert!(odd.contains(" n=26 tools=70 ") && even.contains(" n=26 tools=70 "), "{odd}{even}");
    // an override changes the ranking: no name or description weight left
    let (code, out, err) = run(&["--set", "name=0", "--set", "desc=0", "--set", "snippet=0", "--set", "alias=0"]);
    assert_eq!(code, 0, "{err}");
    let (_, default, _) = run(&[]);
    assert_ne!(out.lines().last().map(|l| &l[..30]), default.lines().last().map(|l| &l[..30]), "{out}");
    let (code, _, err) = run(&["--set", "nonsense=1"]);
    assert_ne!(code, 0);
    assert!(err.contains("--set nonsense=1: unknown parameter nonsense"), "{err}");
    let (code, _, err) = run(&["--set", "k1"]);
    assert_ne!(code, 0);
    assert!(err.contains("expected KEY=VALUE"), "{err}");
}

#[test]
fn search_command_finds_deferred_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = quiver(&["search", "show the staged diff", "--json"], dir.path());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["matches"][0]["name"], "git_diff", "{out}");
    // it says how it ranked: as tool_search does, fused with the model in use
    assert_eq!((v["ranking"].as_str(), v["model"].as_str()), (Some("fused"), Some("embedded")), "{out}");
    let (code, out, err) = quiver(&["search", "show the staged diff"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.trim_end().ends_with(
            "ranking: fused; model: embedded (the static model in this binary, distilled from all-MiniLM-L6-v2)"
        ),
        "{out}"
    );
    let off = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["search", "show the staged diff", "--json"])
        .current_dir(dir.path())
        .env("QUIVER_SEARCH_MODEL", "off")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&off.stdout).unwrap();
    assert_eq!((v["ranking"].as_str(), v["model"].is_null()), (Some("lexical"), true), "{v}");
    let (code, _, err) = quiver(&["search", "(", "--regex"], dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("invalid regex"), "{err}");
}
