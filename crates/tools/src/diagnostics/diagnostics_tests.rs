use serde_json::{Value, json};

use crate::git::repo::test_git;
use crate::test_support::Harness;

fn toolchain<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["toolchains"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()
}

#[tokio::test]
async fn reports_environment_outside_a_repo() {
    let h = Harness::new();
    h.write("Cargo.toml", "[package]\n");
    let result = h.call("diagnostics", json!({})).await;
    assert!(!result.is_error, "{}", result.content_text());
    let r = &result.content;
    assert_eq!(r["workspace"], h.ctx.workspace.root().display().to_string());
    assert_eq!(r["git"], "not a git repo");
    assert_eq!(r["mode"], "agent");
    assert_eq!(r["os"], std::env::consts::OS);
    assert_eq!(r["arch"], std::env::consts::ARCH);
    assert_eq!(r["project_files"], json!(["Cargo.toml"]));
    assert!(r["approvals"].as_str().unwrap().contains("nobody can be asked"));
    // Every probe answers in the same shape; the ones this test suite relies on exist.
    assert_eq!(r["toolchains"].as_array().unwrap().len(), super::TOOLCHAINS.len());
    for t in r["toolchains"].as_array().unwrap() {
        assert!(t["found"].is_boolean(), "{t}");
        if t["found"] == true {
            assert!(t["version"].is_string() || t["error"].is_string(), "{t}");
        }
    }
    let cargo = toolchain(r, "cargo");
    assert!(cargo["version"].as_str().unwrap().starts_with("cargo "), "{cargo}");
    assert!(toolchain(r, "git")["version"].as_str().unwrap().starts_with("git version"));
    assert!(result.metadata["duration_ms"].as_u64().unwrap() < 10_000);
}

#[tokio::test]
async fn git_state_and_plan_mode() {
    let h = Harness::with_mode(quiver_engine::Mode::Plan);
    let root = h.ctx.workspace.root().to_path_buf();
    test_git(&root, &["init", "-q"]);
    h.write("a.txt", "a\n");
    test_git(&root, &["add", "."]);
    test_git(&root, &["commit", "-qm", "one"]);
    let clean = h.call("diagnostics", json!({})).await.content;
    assert_eq!(clean["mode"], "plan");
    assert_eq!(clean["git"]["branch"], "main");
    assert_eq!(clean["git"]["dirty"], false);
    h.write("b.txt", "b\n");
    let dirty = h.call("diagnostics", json!({})).await.content;
    assert_eq!(dirty["git"]["dirty"], true);
    assert_eq!(dirty["git"]["changed_files"], 1);
}

#[tokio::test]
async fn missing_program_and_bad_input() {
    let h = Harness::new();
    let grant = crate::process::Grant {
        permit: quiver_engine::permissions::exec_policy::Permit::Trusted,
        sandbox: crate::process::SandboxKind::Full,
    };
    let launch = std::sync::Arc::new(crate::process::Launch::new(&h.ctx, grant).unwrap());
    let missing = super::probe(launch, "quiver-no-such-program", &["--version"]).await;
    assert_eq!(missing, json!({"name": "quiver-no-such-program", "found": false}));
    let err = h.err("diagnostics", json!({"verbose": true})).await;
    assert!(err.contains("verbose"), "{err}");
}
