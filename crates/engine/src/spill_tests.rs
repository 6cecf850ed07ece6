#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::*;
use crate::{Audience, Capabilities, Domain, Engine, Manifest, Registry, Risk, Tool, ToolError, ToolOutput, Workspace};

/// Produces `lines` numbered lines, or a JSON array of that many objects.
struct Big;

#[derive(Deserialize, JsonSchema)]
struct BigInput {
    lines: usize,
    #[serde(default)]
    json: bool,
    /// Padding per line (default 40).
    #[serde(default)]
    width: Option<usize>,
}

impl Tool for Big {
    type Input = BigInput;
    const NAME: &'static str = "big";
    const DOMAIN: Domain = Domain::File;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "test tool".into()
    }

    async fn run(&self, input: BigInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.json {
            let items: Vec<Value> = (1..=input.lines).map(|i| json!({"id": i, "name": format!("item {i}")})).collect();
            return Ok(ToolOutput::json(Value::Array(items)).with_meta("kept", true));
        }
        let width = input.width.unwrap_or(40);
        let text: String = (1..=input.lines).map(|i| format!("line {i} {}\n", "x".repeat(width))).collect();
        Ok(ToolOutput::text(text).with_meta("kept", true))
    }
}

fn ctx(dir: &tempfile::TempDir, threshold: usize) -> ToolContext {
    let mut registry = Registry::new();
    registry.register(Big).unwrap();
    let engine = Arc::new(Engine::new(registry, Manifest::builtin().unwrap()));
    let workspace = Workspace::new(dir.path()).unwrap();
    let ctx = engine.context(workspace, Audience::default());
    ctx.session
        .state::<SpillStore>()
        .configure(SpillConfig { root: dir.path().join("spill"), threshold_bytes: threshold });
    ctx
}

#[tokio::test]
async fn small_results_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, DEFAULT_SPILL_THRESHOLD);
    let result = ctx.call("big", json!({"lines": 10})).await.unwrap();
    assert!(result.content_text().starts_with("line 1 "));
    assert!(!result.metadata.contains_key("spilled"));
    assert!(ctx.session.state::<SpillStore>().handles().is_empty());
}

#[tokio::test]
async fn large_text_is_spilled_with_head_tail_and_handle() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, DEFAULT_SPILL_THRESHOLD);
    let result = ctx.call("big", json!({"lines": 2000})).await.unwrap();
    let summary = result.content_text();
    assert!(summary.len() < DEFAULT_SPILL_THRESHOLD, "{} bytes", summary.len());
    assert!(summary.contains("handle `out_1`") && summary.contains("2000 lines"), "{summary}");
    assert!(summary.contains("retrieve_tool_result"), "{summary}");
    assert!(summary.contains("--- lines 1-60 ---\nline 1 "), "{summary}");
    assert!(summary.contains("--- lines 61-1980 omitted ---"), "{summary}");
    assert!(summary.contains("--- lines 1981-2000 ---\nline 1981 "), "{summary}");
    assert!(summary.trim_end().ends_with(&format!("line 2000 {}", "x".repeat(40))));
    assert!(!summary.contains("line 61 "));

    let spilled = &result.metadata["spilled"];
    assert_eq!(spilled["handle"], "out_1");
    assert_eq!(spilled["lines"], 2000);
    assert_eq!(result.metadata["kept"], true, "the tool's own metadata survives");
    let path = spilled["path"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(spilled["bytes"], full.len());
    assert!(full.ends_with(&format!("line 2000 {}\n", "x".repeat(40))));
    assert!(path.contains(&format!("/spill/{}/", ctx.session.id())), "{path}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);

    // Numbering is per session and deterministic.
    let again = ctx.call("big", json!({"lines": 2000})).await.unwrap();
    assert_eq!(again.metadata["spilled"]["handle"], "out_2");
    assert_eq!(ctx.session.state::<SpillStore>().handles(), vec!["out_1", "out_2"]);
}

#[tokio::test]
async fn json_results_also_get_a_var_handle() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, 4096);
    let result = ctx.call("big", json!({"lines": 500, "json": true})).await.unwrap();
    let spilled = &result.metadata["spilled"];
    assert_eq!(spilled["var_handle"], "var_1");
    assert!(result.content_text().contains("var_handle `var_1`"));
    assert!(result.content_text().contains("\"mode\": \"lines\", \"start\": 61"), "{}", result.content_text());
    let payload = ctx.session.state::<VarHandles>().get("var_1").unwrap();
    assert_eq!(payload.as_array().unwrap().len(), 500);
    // The file holds pretty-printed JSON so that line windows make sense.
    let full = std::fs::read_to_string(spilled["path"].as_str().unwrap()).unwrap();
    assert!(full.starts_with("[\n  {\n"), "{}", &full[..40]);
}

#[tokio::test]
async fn two_sessions_with_one_id_never_overwrite_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let a = ctx(&dir, 100);
    let b = ctx(&dir, 100);
    let ra = a.call("big", json!({"lines": 10})).await.unwrap();
    let rb = b.call("big", json!({"lines": 20})).await.unwrap();
    assert_eq!(ra.metadata["spilled"]["handle"], "out_1");
    assert_eq!(rb.metadata["spilled"]["handle"], "out_1");
    assert_ne!(ra.metadata["spilled"]["path"], rb.metadata["spilled"]["path"]);
    let rec = b.session.state::<SpillStore>().get("out_1").unwrap();
    assert_eq!(std::fs::read_to_string(&rec.path).unwrap().lines().count(), 20);
}

#[tokio::test]
async fn unwritable_spill_dir_cuts_the_output_instead() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, 1000);
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let store = ctx.session.state::<SpillStore>();
    store.configure(SpillConfig { root: dir.path().join("file"), threshold_bytes: 1000 });
    let result = ctx.call("big", json!({"lines": 100})).await.unwrap();
    let text = result.content_text();
    assert!(text.len() < 1200 && text.contains("output cut at 1000"), "{text}");
    assert_eq!(result.metadata["truncated"], true);
}

#[tokio::test]
async fn text_with_huge_lines_is_also_a_var_handle() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir, 1000);
    let plain = ctx.call("big", json!({"lines": 100})).await.unwrap();
    assert_eq!(plain.metadata["spilled"]["handle"], "out_1");
    assert!(plain.metadata["spilled"].get("var_handle").is_none(), "short lines: text only");
    let wide = ctx.call("big", json!({"lines": 2, "width": 5000})).await.unwrap();
    assert_eq!(wide.metadata["spilled"]["var_handle"], "var_1");
    let payload = ctx.session.state::<VarHandles>().get("var_1").unwrap();
    assert_eq!(payload.as_str().unwrap().len(), wide.metadata["spilled"]["bytes"].as_u64().unwrap() as usize);
    // Tools that spill by themselves share the session's numbering.
    let direct = ctx.session.state::<SpillStore>().spill_text("s", "t", "x", None).await.unwrap();
    assert_eq!(direct.handle, "out_3");
}

#[test]
fn summary_of_few_long_lines_cuts_each_line() {
    let text = format!("{}\nshort\n", "y".repeat(5000));
    let record = SpillRecord {
        handle: "out_3".into(),
        tool: "t".into(),
        path: "/x".into(),
        bytes: text.len(),
        lines: 2,
        var_handle: None,
    };
    let summary = summary_text(&text, &record);
    assert!(summary.contains("[4760 more chars]"), "{summary}");
    assert!(summary.contains("--- lines 1-2 ---") && summary.ends_with("short\n"), "{summary}");
    assert!(!summary.contains("omitted"));
    assert!(summary.contains("\"mode\": \"query\""), "few lines: a query is the useful example");
}

#[test]
fn var_handles_are_numbered_and_carded() {
    let vars = VarHandles::default();
    assert_eq!(vars.register(json!([1, 2, 3])), "var_1");
    assert_eq!(vars.register(json!({"a": 1})), "var_2");
    assert_eq!(vars.handles(), vec!["var_1", "var_2"]);
    assert!(vars.get("var_3").is_none());
    assert!(vars.get("out_1").is_none());
    let payload = vars.get(" var_1 ").unwrap();
    assert_eq!(VarHandles::card("var_1", &payload), json!({"var_handle": "var_1", "type": "array", "count": 3}));
}

#[test]
fn session_ids_become_safe_folder_names() {
    assert_eq!(safe_component("abc-1_2.x"), "abc-1_2.x");
    assert_eq!(safe_component("../../etc"), ".._.._etc");
    assert_eq!(safe_component(".."), "session");
    assert_eq!(safe_component(""), "session");
}
