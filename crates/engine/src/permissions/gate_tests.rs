use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::audience::Audience;
use crate::context::ToolContext;
use crate::domain::Domain;
use crate::engine::Engine;
use crate::manifest::Manifest;
use crate::registry::Registry;
use crate::result::{ToolError, ToolOutput};
use crate::spec::ToolSource;
use crate::tool::Tool;
use crate::workspace::Workspace;

fn spec(risk: Risk, capabilities: Capabilities) -> ToolSpec {
    ToolSpec {
        name: "t".into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
        domain: Domain::File,
        risk,
        capabilities,
        source: ToolSource::Native,
        prompt_snippet: None,
    }
}

/// Plan mode refuses every capability that writes or runs, whatever
/// the tool's risk says.
#[test]
fn plan_mode_refuses_every_capability_that_writes_or_runs() {
    for caps in [Capabilities::RUNS_COMMANDS, Capabilities::WRITES_FILES, Capabilities::PERSISTS] {
        let verdict = check(Mode::Plan, &spec(Risk::Read, caps));
        assert!(matches!(verdict, Decision::Deny(ref m) if m.contains("plan mode")), "{caps:?}: {verdict:?}");
        assert_eq!(check(Mode::Agent, &spec(Risk::Read, caps)), Decision::Allow, "{caps:?}");
    }
    for risk in [Risk::Write, Risk::Destructive] {
        assert!(matches!(check(Mode::Plan, &spec(risk, Capabilities::NONE)), Decision::Deny(_)));
    }
    for caps in [Capabilities::NONE, Capabilities::NETWORK, Capabilities::NEVER_SPILL] {
        assert_eq!(check(Mode::Plan, &spec(Risk::Read, caps)), Decision::Allow, "{caps:?}");
    }
}

#[test]
fn a_destructive_tool_is_asked_for_unless_it_gates_itself() {
    assert!(matches!(check(Mode::Agent, &spec(Risk::Destructive, Capabilities::NONE)), Decision::Ask(_)));
    assert_eq!(check(Mode::Agent, &spec(Risk::Destructive, Capabilities::GATES_ITSELF)), Decision::Allow);
    assert_eq!(check(Mode::Yolo, &spec(Risk::Destructive, Capabilities::NONE)), Decision::Allow);
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

struct Wipe;

impl Tool for Wipe {
    type Input = Empty;
    const NAME: &'static str = "wipe";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Destructive;
    const CAPABILITIES: Capabilities = Capabilities::NONE;
    fn description(&self) -> String {
        "destroys things".into()
    }
    async fn run(&self, _: Empty, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("wiped"))
    }
}

/// A project overlay once could set `domain = "shell"` on a
/// destructive tool, and the gate, which read the domain, stopped asking.
/// Domain is now a search facet only.
#[tokio::test]
async fn a_project_overlay_setting_the_domain_changes_nothing_about_approval() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".quiver")).unwrap();
    std::fs::write(ws.path().join(".quiver/manifest.toml"), "[tools.wipe]\ndomain = \"shell\"\n").unwrap();
    let manifest = Manifest::load_layered(Some(ws.path())).unwrap();
    assert_eq!(manifest.tools["wipe"].domain, Some(Domain::Shell));
    let mut registry = Registry::new();
    registry.register(Wipe).unwrap();
    let engine = Arc::new(Engine::new(registry, manifest));
    assert_eq!(engine.registry().get("wipe").unwrap().spec.domain, Domain::Shell);
    let ctx = engine.context(Workspace::new(ws.path()).unwrap(), Audience::default());
    let result = ctx.call("wipe", json!({})).await.unwrap();
    assert!(result.is_error && result.content_text().contains("needs approval"), "{}", result.content_text());
}
