//! Semantic ranking inside the engine: a search never waits for the model,
//! says which ranking it used, fuses once a catalog's vectors are ready, and
//! loads only its confident matches. The engine sees the model through the
//! `MeaningModel` seam: `Scripted` below is a model whose scores and
//! readiness the test decides; the real model runs in the last test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quiver_engine::{
    Audience, CatalogMeaning, EngineHost, Manifest, MeaningModel, MeaningState, Mode, ToolContext, Workspace,
};
use quiver_search::{PriorScores, SearchDoc};
use serde_json::{Value, json};

/// Similarity 1 for `favourite`, 0 for every other tool, once `ready`.
struct Scripted {
    favourite: &'static str,
    ready: Arc<AtomicBool>,
}

struct ScriptedCatalog {
    names: Vec<String>,
    favourite: &'static str,
    ready: Arc<AtomicBool>,
}

impl CatalogMeaning for ScriptedCatalog {
    fn scores(&self, _query: &str) -> Option<Vec<f32>> {
        self.ready
            .load(Ordering::SeqCst)
            .then(|| self.names.iter().map(|n| if n == self.favourite { 1.0 } else { 0.0 }).collect())
    }

    fn state(&self) -> MeaningState {
        if self.ready.load(Ordering::SeqCst) { MeaningState::Ready } else { MeaningState::Building }
    }
}

impl MeaningModel for Scripted {
    fn index(&self, docs: &[SearchDoc]) -> Arc<dyn CatalogMeaning> {
        Arc::new(ScriptedCatalog {
            names: docs.iter().map(|d| d.name.clone()).collect(),
            favourite: self.favourite,
            ready: Arc::clone(&self.ready),
        })
    }
}

/// Ready at once: the same similarity for every tool, and an intent prior
/// sure of `sure_of`.
struct WithPrior {
    sure_of: &'static str,
}

struct WithPriorCatalog {
    names: Vec<String>,
    sure_of: &'static str,
}

impl CatalogMeaning for WithPriorCatalog {
    fn scores(&self, _query: &str) -> Option<Vec<f32>> {
        Some(vec![0.5; self.names.len()])
    }

    fn scores_and_prior(&self, query: &str) -> Option<(Vec<f32>, Option<PriorScores>)> {
        let per_doc = self.names.iter().map(|n| Some(if n == self.sure_of { 1.0 } else { 0.0 })).collect();
        Some((self.scores(query)?, Some(PriorScores { per_doc })))
    }

    fn state(&self) -> MeaningState {
        MeaningState::Ready
    }
}

impl MeaningModel for WithPrior {
    fn index(&self, docs: &[SearchDoc]) -> Arc<dyn CatalogMeaning> {
        Arc::new(WithPriorCatalog { names: docs.iter().map(|d| d.name.clone()).collect(), sure_of: self.sure_of })
    }
}

fn host() -> Arc<EngineHost> {
    EngineHost::new(quiver_tools::native_registry().unwrap(), Manifest::builtin().unwrap(), vec![]).unwrap()
}

fn ctx(host: &Arc<EngineHost>, dir: &std::path::Path) -> ToolContext {
    host.context(Workspace::new(dir).unwrap(), Audience { provider: "default".into(), model: None, mode: Mode::Agent })
}

fn names(r: &Value, key: &str) -> Vec<String> {
    r[key].as_array().unwrap().iter().map(|m| m.get("name").unwrap_or(m).as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn lexical_until_the_vectors_are_ready_then_fused() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let query = json!({"query": "run the test suite"});
    let without = ctx(&host, dir.path()).call("tool_search", query.clone()).await.unwrap();
    assert_eq!(without.content["ranking"], "lexical", "{}", without.content);
    assert_eq!(host.engine().meaning_state(), None);

    // The model favours lexical ranking's third match: fusion can only lift it.
    let favourite: &'static str = names(&without.content, "matches")[2].clone().leak();
    let ready = Arc::new(AtomicBool::new(false));
    host.set_meaning(Arc::new(Scripted { favourite, ready: Arc::clone(&ready) }));

    // building: the search answers at once, lexically, with the same bytes
    let building = ctx(&host, dir.path()).call("tool_search", query.clone()).await.unwrap();
    assert_eq!(host.engine().meaning_state(), Some(MeaningState::Building));
    assert_eq!(building.content, without.content);

    ready.store(true, Ordering::SeqCst);
    let fused = ctx(&host, dir.path()).call("tool_search", query.clone()).await.unwrap();
    assert_eq!(fused.content["ranking"], "fused", "{}", fused.content);
    let rank = names(&fused.content, "matches").iter().position(|n| n == favourite);
    assert!(rank.is_some_and(|r| r <= 2), "{favourite} in {}", fused.content);

    // select: and regex searches say so
    let select = ctx(&host, dir.path()).call("tool_search", json!({"query": "select:web_fetch"})).await.unwrap();
    assert_eq!(select.content["ranking"], "select");
    let regex = ctx(&host, dir.path()).call("tool_search", json!({"query": "^web_", "mode": "regex"})).await.unwrap();
    assert_eq!(regex.content["ranking"], "regex");
}

/// The engine hands the intent prior to fusion: with every similarity alike,
/// the lexical ranking's third match, which the prior is sure of, comes first.
#[tokio::test]
async fn the_intent_prior_reaches_the_engines_fusion() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let query = json!({"query": "run the test suite"});
    let lexical = ctx(&host, dir.path()).call("tool_search", query.clone()).await.unwrap();
    let third: &'static str = names(&lexical.content, "matches")[2].clone().leak();
    host.set_meaning(Arc::new(WithPrior { sure_of: third }));
    let fused = ctx(&host, dir.path()).call("tool_search", query).await.unwrap();
    assert_eq!(fused.content["ranking"], "fused", "{}", fused.content);
    assert_eq!(names(&fused.content, "matches")[0], third, "{}", fused.content);
}

#[tokio::test]
async fn a_query_that_pastes_a_whole_log_gets_a_clear_error_and_loads_nothing() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(&host, dir.path());
    let limit = quiver_engine::tool_search::MAX_QUERY_CHARS;
    let log = "error: connection refused\n".repeat(limit / 10);
    let r = c.call("tool_search", json!({ "query": format!("why does this fail?\n{log}") })).await.unwrap();
    assert!(r.is_error, "{:?}", r.content);
    let text = r.content.to_string();
    assert!(text.contains("characters") && text.contains(&limit.to_string()), "{text}");
    assert!(c.session.loaded().is_empty());
    // at the limit (characters, not bytes) it searches
    let at_limit: String = "é".repeat(limit - 20) + " run the test suite";
    assert_eq!(at_limit.chars().count(), limit - 1);
    let ok = c.call("tool_search", json!({ "query": at_limit })).await.unwrap();
    assert!(!ok.is_error, "{:?}", ok.content);
}

#[tokio::test]
async fn only_confident_matches_load_and_select_loads_the_rest() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(&host, dir.path());
    let r = c.call("tool_search", json!({"query": "fetch a web page", "limit": 10})).await.unwrap();
    let matches = names(&r.content, "matches");
    let loaded = names(&r.content, "loadedAfter");
    assert!(!loaded.is_empty() && loaded.len() < matches.len(), "{}", r.content);
    let lazy: Vec<String> = r.content["matches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["status"] == "available_lazy")
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(lazy.len() + loaded.len(), matches.len());
    let next = r.content["nextInstruction"].as_str().unwrap();
    assert!(next.contains("not loaded") && next.contains(&format!("select:{}", lazy[0])), "{next}");
    assert_eq!(c.session.loaded(), loaded);

    let again = c.call("tool_search", json!({"query": format!("select:{}", lazy[0])})).await.unwrap();
    assert_eq!(names(&again.content, "loadedAfter").last(), Some(&lazy[0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_model_builds_in_the_background_and_caches_its_vectors() {
    let Some(model) = quiver_search::semantic::test_model_dir() else { return };
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = host();
    let start = Instant::now();
    host.set_meaning(Arc::new(quiver_search::semantic::BackgroundModel::new(&model, Some(cache.path()))));
    assert!(start.elapsed() < Duration::from_secs(1), "attaching a model must not wait for it");
    let deadline = Instant::now() + Duration::from_secs(300);
    while host.engine().meaning_state() == Some(MeaningState::Building) {
        assert!(Instant::now() < deadline, "vectors not ready after 5 minutes");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(host.engine().meaning_state(), Some(MeaningState::Ready));
    let r =
        ctx(&host, dir.path()).call("tool_search", json!({"query": "what changed in my working tree"})).await.unwrap();
    assert_eq!(r.content["ranking"], "fused", "{}", r.content);
    let files: Vec<_> = std::fs::read_dir(cache.path()).unwrap().filter_map(|e| e.ok()).collect();
    assert_eq!(files.len(), 1, "one .qvec store per model");

    // A broken model fails clearly and search stays lexical.
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("config.json"), "{}").unwrap();
    let host = self::host();
    host.set_meaning(Arc::new(quiver_search::semantic::BackgroundModel::new(broken.path(), None)));
    while host.engine().meaning_state() == Some(MeaningState::Building) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match host.engine().meaning_state() {
        Some(MeaningState::Failed(e)) => assert!(e.contains("config.json"), "{e}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    let r = ctx(&host, dir.path()).call("tool_search", json!({"query": "what changed"})).await.unwrap();
    assert_eq!(r.content["ranking"], "lexical");
}

fn quiver(args: &[&str], models: &std::path::Path, extra: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"));
    cmd.args(args).env("QUIVER_MODELS_DIR", models).env("QUIVER_SEARCH_MODEL", "off").env("QUIVER_LOG", "warn");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn models_pull_refuses_unknown_names_broken_copies_and_an_unreachable_hub() {
    let models = tempfile::tempdir().unwrap();
    let (code, _, err) = quiver(&["models", "pull", "gpt-17"], models.path(), &[]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown model `gpt-17`") && err.contains("all-minilm-l6-v2"), "{err}");
    let (code, _, err) = quiver(&["models", "pull", "../x", "--from", "/"], models.path(), &[]);
    assert!(code != 0 && err.contains("not a model name"), "{err}");

    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("config.json"), "{}").unwrap();
    let from = broken.path().to_str().unwrap();
    let (code, _, err) = quiver(&["models", "pull", "mine", "--from", from], models.path(), &[]);
    assert!(code != 0 && err.contains("has no tokenizer.json"), "{err}");
    assert!(!models.path().join("mine").exists(), "nothing installed from a broken copy");

    // a port nothing listens on: a clear error naming the way around it
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let hub = format!("http://127.0.0.1:{port}");
    let (code, _, err) = quiver(&["models", "pull"], models.path(), &[("QUIVER_MODELS_HUB", &hub)]);
    assert!(code != 0 && err.contains("cannot reach") && err.contains("--from DIR"), "{err}");
    assert!(!models.path().join("all-minilm-l6-v2").exists());
}

#[test]
fn models_pull_from_a_local_copy_installs_what_search_then_uses() {
    let Some(model) = quiver_search::semantic::test_model_dir() else { return };
    let models = tempfile::tempdir().unwrap();
    let from = model.to_str().unwrap();
    let (code, out, err) = quiver(&["models", "pull", "all-minilm-l6-v2", "--from", from], models.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("installed all-minilm-l6-v2"), "{out}");
    let installed = models.path().join("all-minilm-l6-v2");
    assert!(installed.join("model.safetensors").is_file() && installed.join("1_Pooling/config.json").is_file());
    // already there: nothing to do
    let (code, out, _) = quiver(&["models", "pull", "all-minilm-l6-v2", "--from", from], models.path(), &[]);
    assert!(code == 0 && out.contains("already installed"), "{out}");
    // with no setting, the pulled default model is the one search uses
    let config = tempfile::tempdir().unwrap();
    let env = [("QUIVER_CONFIG_DIR", config.path().to_str().unwrap())];
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_quiver"));
    cmd.args(["models", "list"]).env("QUIVER_MODELS_DIR", models.path()).env_remove("QUIVER_SEARCH_MODEL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let list = String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned();
    assert!(list.contains("all-minilm-l6-v2\tsentence-transformers/all-MiniLM-L6-v2\tinstalled"), "{list}");
    assert!(list.contains(&format!("search model: {}", installed.display())), "{list}");
}
