//! The product surface as a whole: the real native registry under the built-in
//! manifest. Pins the first-turn head to the byte and checks the lifecycle
//! guarantees (no alias visible anywhere, every alias dispatchable).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use quiver_engine::{Audience, CatalogFormat, Engine, Manifest, Mode, ToolContext, Workspace};
use quiver_engine::{Scope, SearchOptions};
use serde_json::json;

/// The native registry as the CLI composes it: the tools crate's, plus the sub-agent tools.
fn registry() -> quiver_engine::Registry {
    let mut registry = quiver_tools::native_registry().unwrap();
    quiver_agent::subagent::register_tools(&quiver_agent::subagent::AgentHub::new(), &mut registry).unwrap();
    registry
}

fn engine() -> Arc<Engine> {
    Arc::new(Engine::new(registry(), Manifest::builtin().unwrap()))
}

fn audience(provider: &str, mode: Mode) -> Audience {
    Audience { provider: provider.into(), model: None, mode }
}

#[test]
fn default_head_is_byte_identical_across_modes_and_builds() {
    let first = engine();
    let second = engine();
    for format in [CatalogFormat::OpenAi, CatalogFormat::Anthropic, CatalogFormat::Mcp] {
        let reference = first.catalog(&audience("default", Mode::Agent), &[]).to_canonical_string(format);
        for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
            for e in [&first, &second] {
                let bytes = e.catalog(&audience("default", mode), &[]).to_canonical_string(format);
                assert_eq!(bytes, reference, "{format:?} head differs in {mode}");
            }
        }
    }
}

#[test]
fn golden_heads() {
    let e = engine();
    let default = e.catalog(&audience("default", Mode::Agent), &[]);
    insta::assert_snapshot!("default_head_openai", default.to_canonical_string(CatalogFormat::OpenAi));
    insta::assert_snapshot!("default_head_anthropic", default.to_canonical_string(CatalogFormat::Anthropic));
    let arcee = e.catalog(&audience("arcee", Mode::Agent), &[]);
    insta::assert_snapshot!("arcee_head_openai", arcee.to_canonical_string(CatalogFormat::OpenAi));
}

#[test]
fn heads_hold_no_alias_and_fit_the_budget() {
    let e = engine();
    let aliases: Vec<&String> = e.manifest().aliases.keys().collect();
    for provider in ["default", "arcee"] {
        for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
            let catalog = e.catalog(&audience(provider, mode), &[]);
            for name in catalog.names() {
                assert!(!aliases.contains(&&name), "alias {name} in the {provider} head");
            }
        }
    }
    let arcee = e.catalog(&audience("arcee", Mode::Agent), &[]);
    assert_eq!(arcee.head.len(), 8, "{:?}", arcee.names());
    assert!(arcee.names().contains(&"tool_search".to_string()));
    assert!(arcee.head.iter().all(|t| t.risk == quiver_engine::Risk::Read), "arcee is read-only");
    let default = e.catalog(&audience("default", Mode::Agent), &[]);
    let bytes = default.fingerprint(CatalogFormat::OpenAi).bytes;
    assert!(bytes <= 10 * 1024, "default head is {bytes} bytes");
}

#[test]
fn manifest_lints_clean() {
    let findings = quiver_engine::lint::lint(&engine(), quiver_engine::VERSION);
    let errors: Vec<_> = findings.iter().filter(|f| !f.warning).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Nothing about lifecycle state may leak into what a model sees.
#[test]
fn no_lifecycle_words_in_catalog_text() {
    let e = engine();
    let text = e.catalog(&audience("default", Mode::Agent), &[]).to_canonical_string(CatalogFormat::OpenAi);
    for word in ["deprecated", "hidden-compatibility", "todo_write", "exec_wait", "tts\""] {
        assert!(!text.contains(word), "catalog mentions {word}");
    }
}

#[test]
fn search_never_returns_aliases_but_finds_their_canonical_tools() {
    let e = engine();
    let a = audience("default", Mode::Agent);
    let options = SearchOptions { limit: 20, scope: Scope::All, ..Default::default() };
    let aliases: Vec<&String> = e.manifest().aliases.keys().collect();
    for query in ["todo", "todo_write", "exec_wait", "tts speak text", "wait for shell output", "checklist"] {
        let hits = e.search_tools(query, &options, &a, &[]).unwrap();
        for hit in &hits {
            assert!(!aliases.contains(&&hit.spec.name), "{query} returned alias {}", hit.spec.name);
        }
    }
    let hits = e.search_tools("todo_write", &options, &a, &[]).unwrap();
    assert_eq!(hits.first().map(|t| t.spec.name.as_str()), Some("checklist_write"));
}

fn ctx(e: &Arc<Engine>, dir: &std::path::Path) -> ToolContext {
    e.context(Workspace::new(dir).unwrap(), audience("default", Mode::Agent))
}

#[tokio::test]
async fn tool_search_loads_into_the_tail_and_the_head_never_moves() {
    let e = engine();
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(&e, dir.path());
    let a = audience("default", Mode::Agent);
    let head_before = e.catalog(&a, &c.session.loaded()).to_canonical_string(CatalogFormat::OpenAi);

    let r = c.call("tool_search", json!({"query": "add an item to the checklist"})).await.unwrap();
    assert!(!r.is_error, "{}", r.content_text());
    let names: Vec<String> =
        r.content["matches"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names.first().map(String::as_str), Some("checklist_add"), "{names:?}");
    // Only the confident matches load; the rest are listed, not loaded.
    let loaded_after: Vec<&str> =
        r.content["loadedAfter"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(!loaded_after.is_empty() && loaded_after.len() <= names.len(), "{loaded_after:?}");
    assert_eq!(loaded_after, names[..loaded_after.len()].iter().map(String::as_str).collect::<Vec<_>>());
    for m in r.content["matches"].as_array().unwrap() {
        let listed_only = !loaded_after.contains(&m["name"].as_str().unwrap());
        assert_eq!(m["status"] == "available_lazy", listed_only, "{m}");
    }
    assert_eq!(r.content["ranking"], "lexical");

    let loaded = c.session.loaded();
    let after = e.catalog(&a, &loaded);
    let head_after =
        quiver_engine::Catalog { head: after.head.clone(), tail: vec![] }.to_canonical_string(CatalogFormat::OpenAi);
    assert_eq!(head_after, head_before, "head changed after a load");
    assert_eq!(after.tail.iter().map(|t| t.name.clone()).collect::<Vec<_>>(), loaded);

    // A second search appends; earlier loads keep their place.
    let r2 = c.call("tool_search", json!({"query": "select:update_plan,todo_list"})).await.unwrap();
    assert!(!r2.is_error, "{}", r2.content_text());
    let loaded2 = c.session.loaded();
    assert_eq!(&loaded2[..loaded.len()], &loaded[..]);
    assert_eq!(r2.content["matches"][1]["status"], "deprecated_alias");
    assert_eq!(r2.content["matches"][1]["name"], "checklist_list");
}

#[tokio::test]
async fn tool_search_is_deterministic_and_validates_input() {
    let e = engine();
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = json!({"query": "write a note for later", "limit": 3});
    let a = ctx(&e, d1.path()).call("tool_search", args.clone()).await.unwrap();
    let b = ctx(&e, d2.path()).call("tool_search", args).await.unwrap();
    assert_eq!(quiver_engine::canonical::to_string(&a.content), quiver_engine::canonical::to_string(&b.content));
    let c = ctx(&e, d1.path());
    assert!(c.call("tool_search", json!({"query": ""})).await.unwrap().is_error);
    assert!(c.call("tool_search", json!({"query": "x", "limit": 50})).await.unwrap().is_error);
    let bad_domain = c.call("tool_search", json!({"query": "x", "domain": "cooking"})).await.unwrap();
    assert!(bad_domain.is_error && bad_domain.content_text().contains("domain"), "{}", bad_domain.content_text());
    let bad_regex = c.call("tool_search", json!({"query": "(", "mode": "regex"})).await.unwrap();
    assert!(bad_regex.content_text().contains("invalid regex"), "{}", bad_regex.content_text());
    // The hidden regex alias forces regex mode.
    let via_alias =
        c.call("tool_search_tool_regex", json!({"query": "^checklist_(add|update)$", "limit": 5})).await.unwrap();
    let names: Vec<&str> =
        via_alias.content["matches"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["checklist_add", "checklist_update"]);
}

#[tokio::test]
async fn unknown_and_removed_names_explain_themselves() {
    let e = engine();
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(&e, dir.path());
    let r = c.call("read_fil", json!({})).await.unwrap();
    assert!(r.is_error && r.content_text().contains("`read_file`"), "{}", r.content_text());
    let r = c.call("completely_made_up_thing", json!({})).await.unwrap();
    assert!(r.is_error && r.content_text().contains("tool_search"), "{}", r.content_text());

    let mut manifest = Manifest::builtin().unwrap();
    manifest
        .overlay_toml(
            "[aliases.old_note]\nreplacement = \"note\"\nstate = \"removed\"\nplanned_removal_version = \"0.1.0\"\n",
        )
        .unwrap();
    let e2 = Arc::new(Engine::new(registry(), manifest));
    let r = ctx(&e2, dir.path()).call("old_note", json!({"text": "x"})).await.unwrap();
    assert!(r.is_error);
    assert_eq!(r.content_text(), "Tool 'old_note' was removed in version 0.1.0; use 'note' instead.");
}

#[tokio::test]
async fn calling_a_deferred_tool_directly_runs_and_loads_it() {
    let e = engine();
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(&e, dir.path());
    let r = c.call("note", json!({"text": "direct"})).await.unwrap();
    assert!(!r.is_error);
    assert_eq!(c.session.loaded(), vec!["note"]);
}

#[tokio::test]
async fn tool_agent_is_gated_to_deepseek_v4_yet_dispatchable_by_all() {
    let e = engine();
    let options = SearchOptions { limit: 20, scope: Scope::All, ..Default::default() };
    let who = |model: &str| Audience { provider: "default".into(), model: Some(model.into()), mode: Mode::Agent };
    let found = |model: &str| {
        e.search_tools("delegate concrete tool steps to an executor", &options, &who(model), &[])
            .unwrap()
            .iter()
            .any(|t| t.spec.name == "tool_agent")
    };
    assert!(found("deepseek-v4-flash"), "tool_agent is searchable for deepseek-v4-flash");
    assert!(!found("deepseek-chat"), "tool_agent is hidden from deepseek-chat");
    let head = e.catalog(&who("deepseek-chat"), &[]).names();
    assert!(!head.contains(&"tool_agent".to_string()));
    for name in ["agent_open", "agent_eval", "agent_close"] {
        assert!(head.contains(&name.to_string()), "{name} is in the default head: {head:?}");
    }
    // Dispatchable for deepseek-chat too: without a provider it answers with what to configure.
    let dir = tempfile::tempdir().unwrap();
    let c = e.context(Workspace::new(dir.path()).unwrap(), who("deepseek-chat"));
    let r = c.call("tool_agent", json!({"prompt": "list the files"})).await.unwrap();
    assert!(r.is_error && r.content_text().contains("model provider"), "{}", r.content_text());
    let r = c.call("agent_open", json!({"prompt": "look around", "agent_type": "explore"})).await.unwrap();
    assert!(
        r.content_text().contains("[model]") && r.content_text().contains("DEEPSEEK_API_KEY"),
        "{}",
        r.content_text()
    );
}

#[test]
fn no_retired_sub_agent_name_is_registered_or_aliased() {
    let e = engine();
    for name in quiver_engine::lint::LEGACY_AGENT_NAMES {
        assert!(e.registry().get(name).is_none(), "{name} is registered");
        assert!(!e.manifest().aliases.contains_key(*name), "{name} is an alias");
    }
}
