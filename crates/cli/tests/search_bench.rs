//! `quiver bench search` rankings (issue 13): the native dev set's quality
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

// Measured 0.904 / 1.000 / 0.935 lexical and 0.942 / 1.000 / 0.960 fused with
// 66 native tools. The lexical floor was 0.90 / 0.98 / 0.92: the everyday
// phrasings added for the third-party-style native dev set
// (bench/search/dev/native-everyday.jsonl: lexical top-1 0.59 -> 0.71, check
// set 0.69 -> 0.75) cost this set one query lexically (`which files have
// uncommitted changes` now ranks git_diff over git_status by 2%) and gained
// one fused. A loss of two queries fails. Session 31: lexical 0.942 / 1.000 /
// 0.966, fused 0.962 / 1.000 / 0.978; the fused floor raised to that less one
// query (52). Session 37 (blind synthetic example requests,
// manifest/examples.toml): lexical 0.923 / 1.000 / 0.962 (one query fewer at
// top-1; the floor holds), fused 0.981 / 1.000 / 0.990; the fused floor
// raised to that less about one query.
const NATIVE_FLOOR_LEXICAL: (f64, f64, f64) = (0.88, 0.98, 0.91);
// Session 40, the intent prior (in sample: it trains on this set): fused 1.000 / 1.000 / 1.000;
// the floor raised to that less about one query.
const NATIVE_FLOOR_FUSED: (f64, f64, f64) = (0.98, 0.98, 0.985);

/// The native *check* set (`bench/search/queries/native-check.jsonl`: 100
/// everyday requests written by a helper who saw only the tools' names and
/// descriptions, never the manifest's phrasings or the dev set) through the
/// lexical ranker. Check only: its misses are never turned into phrasings or
/// rules; the floor catches a regression.
#[test]
fn native_check_set_lexical_floor() {
    let q = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/search/queries/native-check.jsonl");
    assert_above(&native_line(&q, None, &["--lexical"]), NATIVE_CHECK_FLOOR);
}

// Measured 0.690 / 0.920 / 0.782 when the set was added (plain BM25 0.430 /
// 0.640), 0.750 / 0.930 / 0.822 after the everyday phrasings chosen on the
// dev set; a loss of two queries fails.
// Session 31: 0.780 / 0.950 / 0.852 (measured once, after the last change).
// Session 32: 0.800 / 0.940 / 0.860 (once, after the last change); the top-1
// and MRR floors raised to that less one query. Session 35 (once, after the
// last change): 0.790 / 0.950 / 0.858; the top-5 floor raised to that less
// one query. Session 36 (once, after the last change): 0.800 / 0.960 /
// 0.868; the top-5 and MRR floors raised to that less about one query.
// Session 37 (once, after the last change: the blind example requests):
// 0.840 / 0.990 / 0.902; each floor raised to that less about one query.
const NATIVE_CHECK_FLOOR: (f64, f64, f64) = (0.83, 0.98, 0.89);

/// The native daily sets (`bench/search/queries/native-daily-*.jsonl`, issue
/// 26: 165 everyday requests across every tool family, written from the
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

// Measured with the release build after the issue-26 fixes (before them:
// lexical 0.790 / 0.938 dev, 0.774 / 0.917 check; fused 0.852 / 0.988 and
// 0.786 / 0.940): lexical 0.827 / 0.975 / 0.896 dev, 0.798 / 0.940 / 0.853
// check; fused 0.889 / 1.000 / 0.937 dev, 0.833 / 0.952 / 0.882 check. Each
// floor is that less two queries (of 81 and 84).
// Raised in session 31 (command lines, named files, pause/resume, relative
// clauses; debug build with quiver-search at opt-level 3, same rankings):
// dev lexical 0.889 / 0.988 / 0.929, fused 0.951 / 1.000 / 0.972; each floor
// that less two queries. Session 32: lexical 0.901 / 0.988 / 0.936 (fused
// unchanged); the lexical floor raised to that less one query. Session 33
// (sibling penalty, completion questions, file-name lookups, value kinds in
// fusion): lexical 0.914 / 0.988 / 0.943, fused 0.963 / 1.000 / 0.978; each
// floor that less about one query. Session 34 ("yet" a stopword): lexical
// top-1 0.926; its floor raised to that less one query. Session 37 (example
// requests): lexical 0.926 / 1.000 / 0.961, fused 0.963 / 1.000 / 0.981; top-5
// and MRR floors raised to that less about one query.
const DAILY_DEV_FLOOR_LEXICAL: (f64, f64, f64) = (0.91, 0.985, 0.945);
// Session 40, the intent prior (in sample: it trains on this set): fused 1.000 / 1.000 / 1.000;
// the floor raised to that less about one query.
const DAILY_DEV_FLOOR_FUSED: (f64, f64, f64) = (0.985, 0.985, 0.99);
// The second everyday dev set (native-daily-dev2.jsonl, 166 requests, session
// 31): before the session's rules lexical 0.753 / 0.928, fused 0.813 / 0.964;
// after them lexical 0.795 / 0.982 / 0.871, fused 0.855 / 0.988 / 0.911. Each
// floor is that less two queries. Session 32 (payload after a colon, camelCase
// and scheme-less URL literals, phrasal verbs): lexical 0.807 / 0.982 /
// 0.880, fused 0.867 / 0.988 / 0.920; raised to that less one query.
// Session 33: lexical 0.837 / 0.982 / 0.899, fused 0.904 / 0.988 / 0.940;
// raised to that less about one query. Session 34 (a change inside a named
// file edits it, "yet" a stopword): lexical 0.843 / 0.994, fused 0.904 /
// 1.000; top-1 / top-5 floors raised to that less about one query. Session
// 35: lexical 0.843 / 1.000 / 0.907; the lexical top-5 floor raised to that
// less one query. Session 36 (several items against one, an instance against
// the listing): lexical 0.855 / 1.000 / 0.913, fused 0.910 / 1.000 / 0.947;
// top-1 and MRR floors raised to that less about one query. Session 37
// (example requests): lexical 0.892 / 1.000 / 0.937, fused 0.940 / 1.000 /
// 0.967; raised to that less about one query.
const DAILY_DEV2_FLOOR_LEXICAL: (f64, f64, f64) = (0.885, 0.99, 0.93);
// Session 40, the intent prior (in sample: it trains on this set): fused 0.982 / 1.000 / 0.990;
// the floor raised to that less about one query.
const DAILY_DEV2_FLOOR_FUSED: (f64, f64, f64) = (0.97, 0.99, 0.98);
// The third everyday dev set (native-daily-dev3.jsonl, 160 requests written
// blind from the tools' names and one-line descriptions, session 32): before
// the session's rules lexical 0.831 / 0.981, fused 0.856 / 0.988; after them
// lexical 0.856 / 0.981 / 0.906, fused 0.881 / 0.988 / 0.930. Each floor is
// that less two queries.
// Session 33: lexical 0.856 / 0.988 / 0.909, fused 0.887 / 0.988 / 0.932;
// raised to that less one or two queries. Session 34: lexical top-1 0.863;
// its floor raised to that less one query. Session 35 (a GitHub issue URL
// names the issue; an identifier looked for is a search pattern): lexical
// 0.869 / 0.988 / 0.916, fused 0.894 / 0.988 / 0.935; top-1 floors raised to
// that less one query. Session 36: lexical 0.887 / 0.994 / 0.931, fused
// 0.912 / 0.994 / 0.947; each floor raised to that less about one query.
// Session 37 (example requests): lexical 0.887 / 1.000 / 0.931, fused 0.931
// / 1.000 / 0.961; raised to that less about one query.
const DAILY_DEV3_FLOOR_LEXICAL: (f64, f64, f64) = (0.88, 0.99, 0.925);
// Session 40, the intent prior (in sample: it trains on this set): fused 0.994 / 1.000 / 0.997;
// the floor raised to that less about one query.
const DAILY_DEV3_FLOOR_FUSED: (f64, f64, f64) = (0.98, 0.99, 0.99);
// The fourth everyday dev set (native-daily-dev4.jsonl, 192 requests written
// blind by a new voice, session 34): before the session's rules lexical
// 0.797 / 0.964, fused 0.839 / 0.969; after them lexical 0.807 / 0.969 /
// 0.875, fused 0.849 / 0.979 / 0.903. Each floor is that less about one query.
// Session 35: lexical 0.812 / 0.969 / 0.878, fused 0.859 / 0.979 / 0.910;
// top-1 floors (and the fused MRR floor) raised to that less about one query.
// Session 36: lexical 0.823 / 0.974 / 0.886, fused 0.870 / 0.979 / 0.915;
// raised to that less about one query. Session 37 (example requests):
// lexical 0.870 / 0.974 / 0.913, fused 0.901 / 0.979 / 0.936; top-1 and MRR
// floors raised to that less about one query.
const DAILY_DEV4_FLOOR_LEXICAL: (f64, f64, f64) = (0.865, 0.965, 0.905);
// Session 40, the intent prior (in sample: it trains on this set): fused 0.943 / 0.995 / 0.963;
// the floor raised to that less about one query.
const DAILY_DEV4_FLOOR_FUSED: (f64, f64, f64) = (0.93, 0.985, 0.955);
// The fifth everyday dev set (native-daily-dev5.jsonl, 218 requests written
// blind in new voices: terse terminal, non-native English, pasted program
// output, the goal instead of the tool; session 36): before the session's
// rules lexical 0.729 / 0.954, fused 0.775 / 0.968; after them lexical 0.757
// / 0.972 / 0.849, fused 0.817 / 0.977 / 0.886. Each floor is that less about
// one query. Session 37 (example requests): lexical 0.844 / 0.986 / 0.907,
// fused 0.885 / 0.982 / 0.931; raised to that less about one query.
const DAILY_DEV5_FLOOR_LEXICAL: (f64, f64, f64) = (0.835, 0.98, 0.90);
// Session 40, the intent prior (in sample: it trains on this set): fused 0.959 / 0.995 / 0.975;
// the floor raised to that less about one query.
const DAILY_DEV5_FLOOR_FUSED: (f64, f64, f64) = (0.95, 0.985, 0.965);
// Check half, session 31 (measured once, after the last change): lexical
// 0.786 / 0.964 / 0.857, fused 0.821 / 0.976 / 0.889. Top-5 and MRR floors
// raised to that less about two queries; the top-1 floors stay (0.77, 0.80).
// Session 32 (measured once, after the last change): lexical 0.810 / 0.964 /
// 0.871, fused 0.845 / 0.976 / 0.903; each floor that less one query.
// Session 33 (once, after the last change): lexical unchanged, fused 0.833 /
// 0.976 / 0.897 (one query fewer at top-1 than session 32). The floors stay
// where they were (the measurement is deterministic, and a check set's floor
// is not lowered to let a change through).
// Session 34 (once, after the last change): lexical 0.821 / 0.976 / 0.883,
// fused 0.845 / 0.988 / 0.909; each floor raised to that less about one query.
// Session 37 (once, after the last change): lexical 0.833 / 0.988 / 0.901,
// fused 0.845 / 0.976 / 0.908 (one query fewer in the top five than session
// 34: the fused floors stay); the lexical floors raised to that less about
// one query.
const DAILY_CHECK_FLOOR_LEXICAL: (f64, f64, f64) = (0.82, 0.975, 0.89);
// Session 40, the intent prior (never trained or tuned on): fused 0.929 / 0.988 / 0.956;
// the floor raised to that less about one query.
const DAILY_CHECK_FLOOR_FUSED: (f64, f64, f64) = (0.915, 0.975, 0.945);
// The second everyday check set (native-everyday-check2.jsonl, 287 requests,
// session 37): written blind by a helper who read only the tools' names,
// descriptions and schemas (not the manifest's phrasings or examples, not
// any query set), in seven voices none of the dev sets used, frozen before
// any run. Measured once, after the session's last ranking change: lexical
// 0.819 / 0.969 / 0.883, fused 0.843 / 0.983 / 0.903 (plain BM25 0.512 /
// 0.721). Each floor is that less about two queries.
const CHECK2_FLOOR_LEXICAL: (f64, f64, f64) = (0.81, 0.96, 0.875);
// Session 40, the intent prior (never trained or tuned on): fused 0.902 / 0.990 / 0.938;
// the floor raised to that less two queries.
const CHECK2_FLOOR_FUSED: (f64, f64, f64) = (0.895, 0.98, 0.93);

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
/// change may cite it) with the test model: fused above its floor, and the
/// issue-26 bar, fused top-1 at least the model alone's plus five points. The
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

// Measured when the floor was set (issue 26): fused 0.973 / 1.000 / 0.985,
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
/// The intent prior (`crates/search/src/semantic/native_prior.json`) knows
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
