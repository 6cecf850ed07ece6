#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::permissions::Mode;
use crate::{
    Audience, Capabilities, Domain, Engine, Manifest, Registry, Risk, Tool, ToolContext, ToolError, ToolOutput,
};

#[derive(Deserialize, JsonSchema)]
struct NoteInput {
    text: String,
    #[serde(default)]
    #[allow(dead_code)] // in the schema: a null for it is what dispatch drops
    tag: Option<String>,
}

/// Declared as `checklist_write` (which the built-in manifest gives a
/// deprecated alias) or as an outside tool with the given risk.
struct Note<const DESTRUCTIVE: bool>;

impl<const DESTRUCTIVE: bool> Tool for Note<DESTRUCTIVE> {
    type Input = NoteInput;
    const NAME: &'static str = if DESTRUCTIVE { "wipe_notes" } else { "checklist_write" };
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = if DESTRUCTIVE { Risk::Destructive } else { Risk::Read };
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "test tool".into()
    }

    async fn run(&self, input: NoteInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.text))
    }
}

fn engine() -> Engine {
    let mut registry = Registry::new();
    registry.register(Note::<false>).unwrap();
    registry.register(Note::<true>).unwrap();
    Engine::new(registry, Manifest::builtin().unwrap())
}

fn session() -> crate::Session {
    crate::Session::new("test")
}

fn audience(mode: Mode) -> Audience {
    Audience { mode, ..Audience::default() }
}

#[test]
fn a_call_by_the_tools_own_name_with_good_arguments_passes_unchanged() {
    let engine = engine();
    let spec = engine.passes_unchanged("checklist_write", Some(r#"{"text": "a"}"#), &audience(Mode::Agent), &session());
    assert_eq!(spec.map(|s| s.name.as_str()), Some("checklist_write"));
}

#[test]
fn anything_dispatch_would_change_or_ask_about_does_not() {
    let engine = engine();
    let agent = audience(Mode::Agent);
    // A deprecated alias (dispatch adds its notice), an unknown name.
    assert!(engine.passes_unchanged("todo_write", Some(r#"{"text": "a"}"#), &agent, &session()).is_none());
    assert!(engine.passes_unchanged("no_such_tool", Some("{}"), &agent, &session()).is_none());
    // Arguments the schema refuses, not an object, or a null dispatch drops.
    assert!(engine.passes_unchanged("checklist_write", Some(r#"{"text": 5}"#), &agent, &session()).is_none());
    assert!(engine.passes_unchanged("checklist_write", Some(r#"["a"]"#), &agent, &session()).is_none());
    assert!(
        engine.passes_unchanged("checklist_write", Some(r#"{"text": "a", "tag": null}"#), &agent, &session()).is_none()
    );
    // A destructive tool asks in agent mode and is refused in plan mode.
    assert!(engine.passes_unchanged("wipe_notes", Some(r#"{"text": "a"}"#), &agent, &session()).is_none());
    assert!(
        engine.passes_unchanged("wipe_notes", Some(r#"{"text": "a"}"#), &audience(Mode::Plan), &session()).is_none()
    );
    // Yolo allows it, but it is deferred (no manifest entry): calling it loads it.
    let yolo = audience(Mode::Yolo);
    let spec = &engine.registry().get("wipe_notes").unwrap().spec;
    assert_eq!(crate::permissions::check(Mode::Yolo, spec), crate::permissions::Decision::Allow);
    assert_eq!(engine.lifecycle().canonical_state(spec, &yolo), crate::LifecycleState::Deferred);
    assert!(engine.passes_unchanged("wipe_notes", Some(r#"{"text": "a"}"#), &yolo, &session()).is_none());
    // Once this session has loaded it (a search, or a first call), calling it loads nothing more.
    let loaded = session();
    loaded.load(&["wipe_notes".to_string()]);
    assert!(engine.passes_unchanged("wipe_notes", Some(r#"{"text": "a"}"#), &yolo, &loaded).is_some());
}

#[tokio::test]
async fn what_passes_unchanged_dispatches_to_the_same_tool() {
    let engine = Arc::new(engine());
    let dir = tempfile::tempdir().unwrap();
    let ctx = engine.context(crate::Workspace::new(dir.path()).unwrap(), audience(Mode::Yolo));
    let args = json!({"text": "same"});
    assert!(engine.passes_unchanged("checklist_write", Some(&args.to_string()), &ctx.audience, &ctx.session).is_some());
    let result = engine.dispatch("checklist_write", args, &ctx).await.unwrap();
    assert!(!result.is_error && result.metadata.get("_deprecation").is_none(), "{result:?}");
}

#[tokio::test]
async fn a_directly_exposed_servers_tool_gets_arguments_its_schema_refuses() {
    let mut registry = Registry::new();
    let mut spec = crate::DynTool::spec(&Note::<false>);
    spec.name = "echo".into();
    spec.source = crate::ToolSource::Mcp { server: "srv".into(), direct: true };
    registry.register_with_spec(spec, Arc::new(Note::<false>)).unwrap();
    let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    let dir = tempfile::tempdir().unwrap();
    let ctx = engine.context(crate::Workspace::new(dir.path()).unwrap(), audience(Mode::Yolo));
    // The server's own schema check answers, as it would called directly.
    assert!(engine.passes_unchanged("echo", Some(r#"{"text": 5}"#), &ctx.audience, &ctx.session).is_some());
    let result = engine.dispatch("echo", json!({"text": 5}), &ctx).await.unwrap();
    assert!(result.is_error, "{result:?}");
    let text = serde_json::to_string(&result).unwrap();
    // The tool itself answered (its input type is `Note`'s), not quiver's schema check.
    assert!(text.contains("invalid arguments for checklist_write"), "{text}");
    assert!(!text.contains("invalid arguments for echo"), "quiver checked a direct server's arguments: {text}");
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordsInput {
    text: String,
}

/// A tool whose argument was once called `words`.
struct Renamed;

impl Tool for Renamed {
    type Input = WordsInput;
    const NAME: &'static str = "renamed";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    const INPUT_ALIASES: &'static [crate::InputAlias] = &[crate::InputAlias::rename("words", "text")];

    fn description(&self) -> String {
        "test tool".into()
    }

    async fn run(&self, input: WordsInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.text))
    }
}

#[tokio::test]
async fn an_old_argument_name_dispatches_though_the_schema_never_shows_it() {
    let mut registry = Registry::new();
    registry.register(Renamed).unwrap();
    let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    let schema = engine.registry().get("renamed").unwrap().spec.input_schema.to_string();
    assert!(!schema.contains("words") && schema.contains("\"additionalProperties\":false"), "{schema}");
    let dir = tempfile::tempdir().unwrap();
    let ctx = engine.context(crate::Workspace::new(dir.path()).unwrap(), audience(Mode::Agent));

    let old = engine.dispatch("renamed", json!({"words": "hi"}), &ctx).await.unwrap();
    assert!(!old.is_error, "{old:?}");
    assert_eq!(old.content_text(), "hi");
    let both = engine.dispatch("renamed", json!({"words": "hi", "text": "hi"}), &ctx).await.unwrap();
    assert!(!both.is_error, "{both:?}");
    // Dispatch rewrites what the schema would refuse: never the relayed fast path.
    assert!(engine.passes_unchanged("renamed", Some(r#"{"words": "hi"}"#), &ctx.audience, &ctx.session).is_none());

    let clash = engine.dispatch("renamed", json!({"words": "hi", "text": "ho"}), &ctx).await.unwrap();
    assert!(clash.is_error);
    let message = clash.content_text();
    assert!(message.contains("`words` is the former name of `text`"), "{message}");
    assert!(message.contains("\"hi\"") && message.contains("\"ho\""), "{message}");
}
