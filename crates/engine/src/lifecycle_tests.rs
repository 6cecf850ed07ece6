use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::*;
use crate::capabilities::Capabilities;
use crate::context::ToolContext;
use crate::domain::Domain;
use crate::engine::Engine;
use crate::result::{ToolError, ToolOutput};
use crate::spec::{Risk, ToolSource};
use crate::tool::Tool;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

macro_rules! fake_tool {
    ($ty:ident, $name:literal) => {
        struct $ty;
        impl Tool for $ty {
            type Input = Empty;
            const NAME: &'static str = $name;
            const DOMAIN: Domain = Domain::File;
            const RISK: Risk = Risk::Read;
            const CAPABILITIES: Capabilities = Capabilities::NONE;
            fn description(&self) -> String {
                concat!("fake ", $name).into()
            }
            async fn run(&self, _: Empty, _: &ToolContext) -> Result<ToolOutput, ToolError> {
                Ok(ToolOutput::text($name))
            }
        }
    };
}
fake_tool!(A, "alpha");
fake_tool!(B, "beta");
fake_tool!(G, "gamma");

fn engine(manifest: &str) -> Engine {
    let mut r = Registry::new();
    r.register(A).unwrap();
    r.register(B).unwrap();
    r.register(G).unwrap();
    let mcp = Arc::new(B);
    let mut spec = crate::tool::DynTool::spec(&B);
    spec.name = "mcp__srv__thing".into();
    spec.source = ToolSource::Mcp { server: "srv".into(), direct: false };
    r.register_with_spec(spec, mcp).unwrap();
    Engine::new(r, Manifest::parse(manifest).unwrap())
}

const MANIFEST: &str = r#"
[profiles.default]
active = ["alpha", "gamma"]
[profiles.small]
active = ["alpha"]
[gates.gamma]
models = ["big-*"]
[aliases.old_alpha]
replacement = "alpha"
state = "deprecated"
[aliases.gone]
replacement = "beta"
state = "removed"
planned_removal_version = "0.0.1"
"#;

fn audience(provider: &str, model: Option<&str>, mode: Mode) -> Audience {
    Audience { provider: provider.into(), model: model.map(String::from), mode }
}

#[test]
fn states_per_audience() {
    let e = engine(MANIFEST);
    let lc = e.lifecycle();
    let a = audience("default", Some("big-1"), Mode::Agent);
    assert_eq!(lc.state_of("alpha", e.registry(), &a), Some(LifecycleState::Active));
    assert_eq!(lc.state_of("beta", e.registry(), &a), Some(LifecycleState::Deferred));
    assert_eq!(lc.state_of("old_alpha", e.registry(), &a), Some(LifecycleState::Deprecated));
    assert_eq!(lc.state_of("gone", e.registry(), &a), Some(LifecycleState::Removed));
    assert_eq!(lc.state_of("nope", e.registry(), &a), None);
    let small = audience("small", None, Mode::Agent);
    assert_eq!(lc.state_of("gamma", e.registry(), &small), Some(LifecycleState::Deferred));
    // A provider without a profile of its own gets the default one.
    let other = audience("someone-else", None, Mode::Agent);
    assert_eq!(lc.state_of("alpha", e.registry(), &other), Some(LifecycleState::Active));
}

#[test]
fn mcp_tools_are_active_only_in_yolo_and_follow_native_tools() {
    let e = engine(MANIFEST);
    let agent = e.catalog(&audience("default", Some("big-1"), Mode::Agent), &[]);
    assert_eq!(agent.names(), vec!["alpha", "gamma"]);
    let yolo = e.catalog(&audience("default", Some("big-1"), Mode::Yolo), &[]);
    assert_eq!(yolo.names(), vec!["alpha", "gamma", "mcp__srv__thing"]);
}

#[test]
fn a_direct_servers_tools_are_in_the_head_in_every_mode() {
    let mut e_registry = Registry::new();
    e_registry.register(A).unwrap();
    let mut spec = crate::tool::DynTool::spec(&B);
    spec.name = "thing".into();
    spec.source = ToolSource::Mcp { server: "srv".into(), direct: true };
    e_registry.register_with_spec(spec, Arc::new(B)).unwrap();
    let e = Engine::new(e_registry, Manifest::parse(MANIFEST).unwrap());
    for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
        let head = e.catalog(&audience("default", Some("big-1"), mode), &[]);
        assert_eq!(head.names(), vec!["alpha", "thing"], "{mode:?}: native first, then the direct tool");
    }
    // Serialized specs of ordinary MCP tools do not change shape.
    let plain = serde_json::to_value(ToolSource::Mcp { server: "srv".into(), direct: false }).unwrap();
    assert_eq!(plain, serde_json::json!({"kind": "mcp", "server": "srv"}));
}

#[test]
fn gated_tool_is_hidden_from_other_models_but_dispatchable() {
    let e = engine(MANIFEST);
    let small_model = audience("default", Some("small-1"), Mode::Agent);
    assert_eq!(e.catalog(&small_model, &[]).names(), vec!["alpha"]);
    assert_eq!(e.catalog(&audience("default", None, Mode::Agent), &[]).names(), vec!["alpha"]);
    assert!(!e.lifecycle().visible("gamma", &small_model));
    assert!(matches!(e.lifecycle().resolve("gamma", e.registry()), Resolution::Canonical("gamma")));
    // Loading it by name does not smuggle it into the tail either.
    assert_eq!(e.catalog(&small_model, &["gamma".into()]).names(), vec!["alpha"]);
}

#[test]
fn tail_is_load_order_and_head_unchanged() {
    let e = engine(MANIFEST);
    let a = audience("small", None, Mode::Agent);
    let before = e.catalog(&a, &[]);
    let after = e.catalog(&a, &["mcp__srv__thing".into(), "beta".into(), "alpha".into(), "beta".into()]);
    assert_eq!(after.head, before.head);
    assert_eq!(after.names(), vec!["alpha", "mcp__srv__thing", "beta"]);
}

#[test]
fn lint_catches_each_rule() {
    use crate::lint::lint;
    let bad = r#"
[profiles.default]
active = ["alpha", "old_alpha", "missing"]
head_budget_bytes = 10
[aliases.old_alpha]
replacement = "alpha"
state = "deprecated"
[aliases.to_nothing]
replacement = "nothing"
state = "hidden-compatibility"
[aliases.gone_tbd]
replacement = "beta"
state = "removed"
planned_removal_version = "TBD"
[aliases.gone_future]
replacement = "beta"
state = "removed"
planned_removal_version = "99.0.0"
[aliases.spawn_agent]
replacement = "alpha"
state = "hidden-compatibility"
"#;
    let e = engine(bad);
    let rules: Vec<&str> = lint(&e, "0.1.0").iter().map(|f| f.rule).collect();
    for rule in [
        "alias-in-active",
        "unregistered-active",
        "unregistered-replacement",
        "removed-without-version",
        "removed-too-early",
        "head-over-budget",
        "legacy-agent-name",
    ] {
        assert!(rules.contains(&rule), "missing {rule} in {rules:?}");
    }
    assert!(lint(&engine(MANIFEST), "0.1.0").is_empty(), "{:?}", lint(&engine(MANIFEST), "0.1.0"));
    let gate_only = "[gates.not_built]\nmodels = [\"x*\"]\n";
    let findings = lint(&engine(gate_only), "0.1.0");
    assert!(findings.iter().all(|f| f.warning && f.rule == "unregistered-gate"), "{findings:?}");
}

#[test]
fn lint_catches_shared_handlers() {
    let mut r = Registry::new();
    let shared: crate::tool::SharedTool = Arc::new(A);
    r.register_shared(shared.clone()).unwrap();
    let mut spec = shared.spec();
    spec.name = "alpha_again".into();
    r.register_with_spec(spec, shared).unwrap();
    let e = Engine::new(r, Manifest::default());
    let findings = crate::lint::lint(&e, "0.1.0");
    assert!(findings.iter().any(|f| f.rule == "shared-handler"), "{findings:?}");
}

#[test]
fn an_alias_cannot_take_over_a_registered_name() {
    let e = engine("[aliases.beta]\nreplacement = \"alpha\"\nstate = \"hidden-compatibility\"\n");
    assert!(matches!(e.lifecycle().resolve("beta", e.registry()), Resolution::Canonical("beta")));
    let findings = crate::lint::lint(&e, "0.1.0");
    assert!(findings.iter().any(|f| f.rule == "alias-shadows-tool"), "{findings:?}");
}

#[test]
fn a_session_head_stays_pinned_when_the_engine_grows() {
    let session = crate::session::Session::new("s");
    let yolo = audience("default", Some("big-1"), Mode::Yolo);
    // First engine: no MCP tools yet.
    let mut r = Registry::new();
    r.register(A).unwrap();
    r.register(G).unwrap();
    let before = Engine::new(r, Manifest::parse(MANIFEST).unwrap()).session_catalog(&yolo, &session);
    assert_eq!(before.names(), vec!["alpha", "gamma"]);
    // Rebuilt engine with a new MCP tool that yolo makes active: it joins the tail.
    let after = engine(MANIFEST).session_catalog(&yolo, &session);
    assert_eq!(after.head, before.head);
    assert_eq!(after.names(), vec!["alpha", "gamma", "mcp__srv__thing"]);
}
