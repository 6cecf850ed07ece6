use quiver_engine::{Capabilities, Domain, Risk, ToolSource, ToolSpec};

use super::role::Role;

fn spec(name: &str, risk: Risk, caps: Capabilities) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: String::new(),
        input_schema: serde_json::json!({}),
        domain: Domain::File,
        risk,
        capabilities: caps,
        source: ToolSource::Native,
        prompt_snippet: None,
    }
}

#[test]
fn aliases_parse_case_insensitively_and_unknown_lists_the_set() {
    assert_eq!(Role::parse("Explorer").unwrap(), Role::Explore);
    assert_eq!(Role::parse("TESTER").unwrap(), Role::Verifier);
    assert_eq!(Role::parse("general-purpose").unwrap(), Role::General);
    assert_eq!(Role::parse("code-review").unwrap(), Role::Review);
    let e = Role::parse("wizard").unwrap_err();
    assert!(e.contains("wizard") && e.contains("explore|explorer|exploration") && e.contains("custom"), "{e}");
}

#[test]
fn roles_enforce_their_limits() {
    let read = spec("read_file", Risk::Read, Capabilities::NONE);
    let write = spec("write_file", Risk::Write, Capabilities::WRITES_FILES);
    let shell = spec("exec_shell", Risk::Destructive, Capabilities::RUNS_COMMANDS);
    let git = spec("git_status", Risk::Read, Capabilities::RUNS_COMMANDS);
    let tests = spec("run_tests", Risk::Destructive, Capabilities::RUNS_COMMANDS);
    for role in [Role::Explore, Role::Plan, Role::Review, Role::Verifier] {
        assert!(role.refusal(&read, &[]).is_none(), "{role}");
        assert!(role.refusal(&write, &[]).unwrap().contains("write_file"), "{role}");
        assert!(role.refusal(&shell, &[]).is_some(), "{role}");
    }
    assert!(Role::Explore.refusal(&git, &[]).is_none());
    assert!(Role::Review.refusal(&git, &[]).unwrap().contains("runs no commands"));
    assert!(Role::Verifier.refusal(&tests, &[]).is_none());
    assert!(Role::Explore.refusal(&tests, &[]).is_some());
    for role in [Role::General, Role::Implementer] {
        assert!(role.refusal(&write, &[]).is_none());
        assert!(role.refusal(&shell, &[]).is_none());
    }
    let allowed = vec!["read_file".to_string()];
    assert!(Role::Custom.refusal(&read, &allowed).is_none());
    assert!(Role::Custom.refusal(&write, &allowed).unwrap().contains("allowed_tools"));
}
