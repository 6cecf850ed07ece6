//! `quiver bench search` rankings: the native dev set's quality
//! floor, the semantic and fused rankings with the test model, and the error
//! for a broken model. Tests needing the model skip with a printed reason when
//! `QUIVER_TEST_SEARCH_MODEL` is unset, and fail under `QUIVER_REQUIRE_SEARCH_MODEL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn bench(args: &[&str], model: Option<&Path>) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quiver"));
    cmd.args(["bench", "search"]).args(args).current_dir(dir.path()).env("QUIVER_LOG", "warn");
    cmd.env("QUIVER_SEARCH_CACHE", dir.path().join("vectors"));
    match model {
        Some(m) => cmd.env("QUIVER_SEARCH_MODEL", m),
        // not the user's config or pulled model either
        None => cmd.env("QUIVER_SEARCH_MODEL", "off"),
    };
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The bench catalogs and queries in the repository (`bench/search/data`).
fn bench_data() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/data")
}

fn field(line: &str, key: &str) -> f64 {
    line.split(' ')
        .find_map(|p| p.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
}

/// `bench search --native` over `queries` plus `extra`: its metrics line.
fn native_line(queries: &Path, model: Option<&Path>, extra: &[&str]) -> String {
    let mut args = vec!["--native", "--queries", queries.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = bench(&args, model);
    assert_eq!(code, 0, "{err}");
    out.lines().last().unwrap_or_default().to_string()
}

/// Top-1, top-5 and MRR of a metrics line each at least their `floor`.
fn assert_above(line: &str, floor: (f64, f64, f64)) {
    let (top1, top5, mrr) = (field(line, "top1"), field(line, "top5"), field(line, "mrr"));
    assert!(top1 >= floor.0 && top5 >= floor.1 && mrr >= floor.2, "below {floor:?}: {line}");
}

/// The native dev set through the lexical ranker, and fused with the test
/// model: floors CI enforces (today's numbers, with the manifest's phrasings,
/// less one or two queries of 52).
#[test]
fn native_quality_floors_lexical_and_fused() {
    let b = bench_data();
    let q = b.join("queries/native.jsonl");
    let check = |model: Option<&Path>, ranking: &str, extra: &[&str], floor: (f64, f64, f64)| {
        let last = native_line(&q, model, extra);
        assert!(last.ends_with(&format!(" ranking={ranking}")), "{last}");
        assert_above(&last, floor);
        // confident loads never exceed loading the whole top-k
        assert!(field(&last, "tail_bytes") <= field(&last, "tail_bytes_all"), "{last}");
    };
    check(None, "lexical", &["--lexical"], NATIVE_FLOOR_LEXICAL);
    if let Some(model) = quiver_search::semantic::test_model_dir() {
        check(Some(&model), "fused", &[], NATIVE_FLOOR_FUSED);
    }
}

// Floors are the last measurement less about one query (two on some
// sets), for top-1 / top-5 / MRR. Raise a floor when the ranker improves;
// never lower one to let a change pass without saying why in the commit. A
// check set is measured once, after the last ranking change, and its floor is
// not lowered when a later measurement comes out a query below an earlier
// one (the measurement is deterministic). bench/search/runs/ and the git
// log keep the measurements' history.
//
// The native dev set (52 requests, 66 tools), lexical with the blind
// synthetic example requests (manifest/examples.toml): 0.923 / 1.000 / 0.962.
const NATIVE_FLOOR_LEXICAL: (f64, f64, f64) = (0.88, 0.98, 0.91);
// Fused with the intent prior (in sample: it trains on this set): 1.000 /
// 1.000 / 1.000.
const NATIVE_FLOOR_FUSED: (f64, f64, f64) = (0.98, 0.98, 0.985);

/// The native *check* set (`bench/search/queries/native-check.jsonl`: 100
/// everyday requests written by an agent that saw only the tools' names and
/// descriptions, never the manifest's phrasings or the dev set) through the
/// lexical ranker. Check only: its misses are never turned into phrasings or
/// rules; the floor catches a regression.
#[test]
fn native_check_set_lexical_floor() {
    let q = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/queries/native-check.jsonl");
    assert_above(&native_line(&q, None, &["--lexical"]), NATIVE_CHECK_FLOOR);
}

// Measured once, after the blind example requests: 0.840 / 0.990 / 0.902
// (plain BM25 0.430 / 0.640; 0.690 / 0.920 / 0.782 when the set was added).
const NATIVE_CHECK_FLOOR: (f64, f64, f64) = (0.83, 0.98, 0.89);

/// The native daily sets (`bench/search/queries/native-daily-*.jsonl`: 165
/// everyday requests across every tool family, written from the
/// tools' one-line descriptions in other words than the dev sets, split into
/// a dev half and a check half nothing is tuned on; a second dev set of 166
/// written from the tools' snippets; a third of 160, a fourth of 192 and a
/// fifth of 218 written blind from the names and one-line descriptions; a
/// second check set of 287 written blind from the names, descriptions and
/// schemas), lexical and fused.
#[test]
fn native_daily_sets_lexical_and_fused_floors() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/queries");
    let model = quiver_search::semantic::test_model_dir();
    for (set, lexical, fused) in [
        ("native-daily-dev.jsonl", DAILY_DEV_FLOOR_LEXICAL, DAILY_DEV_FLOOR_FUSED),
        ("native-daily-dev2.jsonl", DAILY_DEV2_FLOOR_LEXICAL, DAILY_DEV2_FLOOR_FUSED),
        ("native-daily-dev3.jsonl", DAILY_DEV3_FLOOR_LEXICAL, DAILY_DEV3_FLOOR_FUSED),
        ("native-daily-dev4.jsonl", DAILY_DEV4_FLOOR_LEXICAL, DAILY_DEV4_FLOOR_FUSED),
        ("native-daily-dev5.jsonl", DAILY_DEV5_FLOOR_LEXICAL, DAILY_DEV5_FLOOR_FUSED),
        ("native-daily-check.jsonl", DAILY_CHECK_FLOOR_LEXICAL, DAILY_CHECK_FLOOR_FUSED),
        ("native-everyday-check2.jsonl", CHECK2_FLOOR_LEXICAL, CHECK2_FLOOR_FUSED),
        ("native-blind-dev6.jsonl", BLIND_DEV6_FLOOR_LEXICAL, BLIND_DEV6_FLOOR_FUSED),
        ("native-blind-dev8.jsonl", BLIND_DEV8_FLOOR_LEXICAL, BLIND_DEV8_FLOOR_FUSED),
        ("native-blind-check3.jsonl", BLIND_CHECK3_FLOOR_LEXICAL, BLIND_CHECK3_FLOOR_FUSED),
    ] {
        let q = dir.join(set);
        let last = native_line(&q, None, &["--lexical"]);
        assert!(last.ends_with(" ranking=lexical"), "{set}: {last}");
        assert_above(&last, lexical);
        if let Some(model) = &model {
            let last = native_line(&q, Some(model), &[]);
            assert!(last.ends_with(" ranking=fused"), "{set}: {last}");
            assert_above(&last, fused);
        }
    }
}

// The daily dev half (81 requests), with the example requests: lexical
// 0.926 / 1.000 / 0.961 (a release build; a debug build with quiver-search
// at opt-level 3 ranks the same). With the four GitHub list/create tools
// added (issue 44) and no ranking change: 0.901 / 1.000 / 0.948 (two
// requests for one PR's reviews or a pull request's diff now rank
// github_pr_list first); the top-1 floor follows it down, a deliberate move
// reported with the change, not tuned back.
const DAILY_DEV_FLOOR_LEXICAL: (f64, f64, f64) = (0.89, 0.985, 0.945);
// Fused with the intent prior (in sample: it trains on this set): 1.000 / 1.000 / 1.000.
const DAILY_DEV_FLOOR_FUSED: (f64, f64, f64) = (0.985, 0.985, 0.99);
// The second everyday dev set (native-daily-dev2.jsonl, 166 requests written
// from the tools' snippets), with the example requests: lexical 0.892 /
// 1.000 / 0.937.
const DAILY_DEV2_FLOOR_LEXICAL: (f64, f64, f64) = (0.885, 0.99, 0.93);
// Fused with the intent prior (in sample): 0.982 / 1.000 / 0.990.
const DAILY_DEV2_FLOOR_FUSED: (f64, f64, f64) = (0.97, 0.99, 0.98);
// The third everyday dev set (native-daily-dev3.jsonl, 160 requests written
// blind from the tools' names and one-line descriptions), with the example
// requests: lexical 0.887 / 1.000 / 0.931.
const DAILY_DEV3_FLOOR_LEXICAL: (f64, f64, f64) = (0.88, 0.99, 0.925);
// Fused with the intent prior (in sample): 0.994 / 1.000 / 0.997.
const DAILY_DEV3_FLOOR_FUSED: (f64, f64, f64) = (0.98, 0.99, 0.99);
// The fourth everyday dev set (native-daily-dev4.jsonl, 192 requests written
// blind in another voice), with the example requests: lexical 0.870 / 0.974
// / 0.913. With the four GitHub list/create tools added (issue 44) and no
// ranking change: 0.859 / 0.974 / 0.907 (two issue-by-URL or issue-with-
// comments requests now rank github_issue_list or github_comment first);
// the top-1 floor follows it down, reported with the change.
const DAILY_DEV4_FLOOR_LEXICAL: (f64, f64, f64) = (0.85, 0.965, 0.905);
// Fused with the intent prior (in sample): 0.943 / 0.995 / 0.963.
const DAILY_DEV4_FLOOR_FUSED: (f64, f64, f64) = (0.93, 0.985, 0.955);
// The fifth everyday dev set (native-daily-dev5.jsonl, 218 requests written
// blind in new voices: terse terminal, non-native English, pasted program
// output, the goal instead of the tool), with the example requests: lexical
// 0.844 / 0.986 / 0.907.
const DAILY_DEV5_FLOOR_LEXICAL: (f64, f64, f64) = (0.835, 0.98, 0.90);
// Fused with the intent prior (in sample): 0.959 / 0.995 / 0.975.
const DAILY_DEV5_FLOOR_FUSED: (f64, f64, f64) = (0.95, 0.985, 0.965);
// The daily check half (84 requests), measured once after the example
// requests: lexical 0.833 / 0.988 / 0.901.
const DAILY_CHECK_FLOOR_LEXICAL: (f64, f64, f64) = (0.82, 0.975, 0.89);
// Fused with the intent prior (never trained or tuned on): 0.929 / 0.988 / 0.956;
// with the embedded model's prior read for MiniLM too (one prior for every
// model): 0.976 / 1.000 / 0.988; trained on blind dev11 and dev12 too, 0.988
// / 1.000 / 0.994.
const DAILY_CHECK_FLOOR_FUSED: (f64, f64, f64) = (0.95, 0.985, 0.975);
// The second everyday check set (native-everyday-check2.jsonl, 287
// requests): written blind by an agent that read only the tools' names,
// descriptions and schemas (not the manifest's phrasings or examples, not
// any query set), in seven voices none of the dev sets used, frozen before
// any run. Measured once: lexical 0.819 / 0.969 / 0.883 (plain BM25 0.512 /
// 0.721). Each floor is that less about two queries.
const CHECK2_FLOOR_LEXICAL: (f64, f64, f64) = (0.81, 0.96, 0.875);
// Fused with the intent prior (never trained or tuned on): 0.902 / 0.990 / 0.938;
// with one prior for every model: 0.944 / 0.997 / 0.967; with that prior
// trained on blind dev11 and dev12 too (decided on the dev sets), 0.934 /
// 0.997 / 0.961. The floor is that less about one query.
const CHECK2_FLOOR_FUSED: (f64, f64, f64) = (0.93, 0.99, 0.955);

// The blind sets (bench/search/queries/src/blind-2026-12-05/): requests
// written by writers who never saw the repository, labelled after. dev6 and
// dev8 (two of the five dev sets; the intent prior trains on all five, so
// their fused figures are in sample): lexical 0.606 / 0.842 / 0.695 and
// 0.523 / 0.741 / 0.605; fused with all-MiniLM-L6-v2 0.911 / 0.990 / 0.946
// and 0.882 / 0.973 / 0.924. Each floor is that less about two requests.
const BLIND_DEV6_FLOOR_LEXICAL: (f64, f64, f64) = (0.595, 0.83, 0.685);
const BLIND_DEV6_FLOOR_FUSED: (f64, f64, f64) = (0.90, 0.98, 0.935);
const BLIND_DEV8_FLOOR_LEXICAL: (f64, f64, f64) = (0.51, 0.73, 0.595);
const BLIND_DEV8_FLOOR_FUSED: (f64, f64, f64) = (0.87, 0.96, 0.915);
// The blind check set (writer B, 204 requests; never trained or tuned on),
// measured once after the last change of the pass: lexical 0.495 / 0.745 /
// 0.596; fused with all-MiniLM-L6-v2 0.701 / 0.897 / 0.784 (before the
// pass: 0.554 / 0.784 / 0.649); with one prior for every model 0.716 /
// 0.941 / 0.812, trained on blind dev11 and dev12 too 0.730 / 0.951 / 0.816.
const BLIND_CHECK3_FLOOR_LEXICAL: (f64, f64, f64) = (0.485, 0.735, 0.585);
const BLIND_CHECK3_FLOOR_FUSED: (f64, f64, f64) = (0.705, 0.93, 0.80);

/// Phrasings are search text: a manifest laid over the built-in one (bench
/// `--manifest`) changes what finds a tool, and none of it reaches the catalog.
#[test]
fn phrasings_find_a_native_tool_and_stay_out_of_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("q.jsonl");
    std::fs::write(&queries, "{\"query\": \"quokka zeppelin marmalade\", \"expected\": [\"git_diff\"]}\n").unwrap();
    let overlay = dir.path().join("m.toml");
    std::fs::write(&overlay, "[tools.git_diff]\nphrasings = [\"quokka zeppelin marmalade\"]\n").unwrap();
    let q = queries.to_str().unwrap();
    let (code, out, err) = bench(&["--native", "--queries", q, "--lexical"], None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("top1=0.000"), "no built-in phrasing says this: {out}");
    let (code, out, err) =
        bench(&["--native", "--queries", q, "--lexical", "--manifest", overlay.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("top1=1.000"), "{out}");
    let (code, _, err) = bench(&["--native", "--queries", q, "--manifest", "/nonexistent/m.toml"], None);
    assert_ne!(code, 0);
    assert!(err.contains("/nonexistent/m.toml"), "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["catalog", "--loaded", "git_diff,read_file"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let catalog = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && catalog.contains("\"git_diff\""), "{catalog}");
    // phrasings and the example requests (`manifest/examples.toml`) alike
    for phrasing in [
        "what did I change",
        "show my uncommitted changes",
        "cat a file",
        "cat pyproject.toml",
        "show the diff of src/app.ts",
    ] {
        assert!(!catalog.contains(phrasing), "{phrasing:?} reached the catalog");
    }
}

/// The frozen third-party check set (`bench/search/frozen`, Seal-Tools: no
/// change may cite it) with the test model: fused above its floor, and
/// fused top-1 at least the model alone's plus five points. The
/// two runs share one vector cache, so the 595 tools are encoded once.
#[test]
fn frozen_check_set_fused_beats_the_model_alone() {
    let Some(model) = quiver_search::semantic::test_model_dir() else { return };
    let frozen = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/frozen");
    let (cat, q) = (frozen.join("seal-tools.json"), frozen.join("seal-tools.jsonl"));
    let cache = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
            .args(["bench", "search", "--catalog", cat.to_str().unwrap(), "--queries", q.to_str().unwrap()])
            .args(extra)
            .current_dir(cache.path())
            .env("QUIVER_LOG", "warn")
            .env("QUIVER_SEARCH_CACHE", cache.path().join("vectors"))
            .env("QUIVER_SEARCH_MODEL", &model)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string()
    };
    let fused = run(&[]);
    let semantic = run(&["--semantic"]);
    assert!(fused.ends_with("ranking=fused") && semantic.ends_with("ranking=semantic"), "{fused}\n{semantic}");
    assert_above(&fused, FROZEN_FLOOR_FUSED);
    assert!(field(&fused, "top1") >= field(&semantic, "top1") + 0.05, "fused {fused}\nsemantic {semantic}");
}

// Measured when the floor was set: fused 0.973 / 1.000 / 0.985,
// the model alone 0.867 / 0.973; the floor is fused less three queries of 294.
const FROZEN_FLOOR_FUSED: (f64, f64, f64) = (0.962, 0.99, 0.975);

#[test]
fn semantic_and_fused_rankings_with_the_test_model() {
    let Some(model) = quiver_search::semantic::test_model_dir() else { return };
    let b = bench_data();
    let cat = b.join("catalogs/github-mcp.json");
    let q = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/queries/github-sanity.jsonl");
    let args = ["--catalog", cat.to_str().unwrap(), "--queries", q.to_str().unwrap()];
    let run = |extra: &[&str]| {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        let (code, out, err) = bench(&a, Some(&model));
        assert_eq!(code, 0, "{err}");
        out
    };
    let fused = run(&[]);
    assert!(fused.lines().any(|l| l.starts_with("semantic: model=")), "{fused}");
    let fused = fused.lines().last().unwrap().to_string();
    let semantic = run(&["--semantic"]).lines().last().unwrap().to_string();
    let lexical = run(&["--lexical"]).lines().last().unwrap().to_string();
    assert!(fused.ends_with("ranking=fused") && semantic.ends_with("ranking=semantic"), "{fused}\n{semantic}");
    assert!(lexical.ends_with("ranking=lexical"), "{lexical}");
    // the model finds most of these requests alone, and fusing never costs top-5
    assert!(field(&semantic, "top5") >= 0.6, "{semantic}");
    assert!(field(&fused, "top5") >= field(&lexical, "top5"), "fused {fused}\nlexical {lexical}");
}

#[test]
fn a_broken_model_is_a_clear_error() {
    let b = bench_data();
    let q = b.join("queries/native.jsonl");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{}").unwrap();
    let (code, _, err) = bench(&["--native", "--queries", q.to_str().unwrap()], Some(dir.path()));
    assert_ne!(code, 0);
    assert!(err.contains("search model") && err.contains("config.json"), "{err}");
    let (code, _, err) = bench(&["--native", "--queries", q.to_str().unwrap(), "--semantic"], None);
    assert_ne!(code, 0);
    assert!(err.contains("QUIVER_SEARCH_MODEL"), "{err}");
}

#[cfg(feature = "semantic")]
/// The intent prior (`crates/search/src/semantic/static_prior.json`) knows
/// exactly quiver's own searchable tools: a tool added, renamed or removed
/// without retraining it fails here, not silently in the rankings.
#[test]
fn the_intent_prior_knows_every_built_in_tool() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs.json");
    let queries = bench_data().join("queries/native.jsonl");
    let args = ["--native", "--queries", queries.to_str().unwrap(), "--export-docs", docs.to_str().unwrap()];
    let (code, _, err) = bench(&args, None);
    assert_eq!(code, 0, "{err}");
    let exported: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&docs).unwrap()).unwrap();
    let mut tools: Vec<&str> =
        exported["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    tools.sort_unstable();
    let prior = quiver_search::semantic::IntentPrior::embedded().expect("the committed prior parses");
    let mut classes: Vec<&str> = prior.tools().collect();
    classes.sort_unstable();
    assert_eq!(
        classes, tools,
        "the intent prior is stale: retrain it with bench/search/prior/retrain.sh (bench/search/README.md)"
    );
}

/// The ranking a newcomer gets with nothing downloaded: fused with the
/// static model compiled into the binary (`QUIVER_SEARCH_MODEL` unset means
/// it; `embedded` names it). No test model needed, so it always runs.
#[test]
fn the_embedded_model_ranks_fused_with_nothing_downloaded() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/queries");
    let embedded = Path::new("embedded");
    for (set, floor) in [
        ("native-check.jsonl", EMBEDDED_CHECK_FLOOR),
        ("native-daily-check.jsonl", EMBEDDED_DAILY_CHECK_FLOOR),
        ("native-everyday-check2.jsonl", EMBEDDED_CHECK2_FLOOR),
        ("native-daily-dev5.jsonl", EMBEDDED_DAILY_DEV5_FLOOR),
        ("native-blind-check3.jsonl", EMBEDDED_BLIND_CHECK3_FLOOR),
        ("native-blind-dev7.jsonl", EMBEDDED_BLIND_DEV7_FLOOR),
    ] {
        let q = dir.join(set);
        let (code, out, err) = bench(&["--native", "--queries", q.to_str().unwrap()], Some(embedded));
        assert_eq!(code, 0, "{set}: {err}");
        assert!(out.contains("semantic: model=embedded id=static-"), "{set}: {out}");
        let last = out.lines().last().unwrap_or_default();
        assert!(last.ends_with(" ranking=fused"), "{set}: {last}");
        assert_above(last, floor);
        // the lexical ranking of the same set stays below it: meaning adds
        let lexical = native_line(&q, None, &["--lexical"]);
        assert!(field(last, "top1") > field(&lexical, "top1"), "{set}: {last} vs {lexical}");
    }
}

// Measured once, after the embedded model's last decision (w_semantic 0.15,
// its own intent prior), 70 tools: native-check 0.920 / 0.990 / 0.946, daily
// check 0.869 / 0.988 / 0.924, check2 0.889 / 0.979 / 0.929, daily dev5 (in
// the prior's training data) 0.931 / 0.995 / 0.958. With the table tuned on
// requests and tool texts (`distill_static --tune`, chosen on the dev sets;
// the check sets measured once after): 0.930 / 0.990 / 0.958, 0.917 / 0.988
// / 0.952, 0.892 / 0.990 / 0.935, 0.950 / 0.995 / 0.971.
// With a request's objects embedded as their kind and the prior trained on
// the five blind dev sets too (no weight decay; check sets measured once
// after): 0.970 / 0.980 / 0.975, 0.976 / 1.000 / 0.986, 0.930 / 0.990 /
// 0.957, dev5 0.986 / 1.000 / 0.993; the blind check set 0.701 / 0.897 /
// 0.784 (0.588 / 0.799 / 0.675 before); blind dev7 (in sample) 0.878 /
// 0.977 / 0.922. With the prior's hidden layer and log, then trained on blind
// dev11 and dev12 too (check sets measured once after): 0.980 / 1.000 /
// 0.988, 0.976 / 1.000 / 0.988, 0.923 / 0.997 / 0.954; the blind check set
// 0.730 / 0.961 / 0.824.
const EMBEDDED_CHECK_FLOOR: (f64, f64, f64) = (0.95, 0.97, 0.96);
const EMBEDDED_DAILY_CHECK_FLOOR: (f64, f64, f64) = (0.95, 0.985, 0.97);
const EMBEDDED_CHECK2_FLOOR: (f64, f64, f64) = (0.92, 0.98, 0.95);
const EMBEDDED_DAILY_DEV5_FLOOR: (f64, f64, f64) = (0.975, 0.99, 0.985);
const EMBEDDED_BLIND_CHECK3_FLOOR: (f64, f64, f64) = (0.72, 0.95, 0.81);
const EMBEDDED_BLIND_DEV7_FLOOR: (f64, f64, f64) = (0.865, 0.965, 0.91);
