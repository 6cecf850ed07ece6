use std::path::PathBuf;

use super::*;

fn gate(deny: &[&str]) -> CommandGate {
    let rules = ExecRules { deny_prefixes: deny.iter().map(|s| s.to_string()).collect(), trusted_prefixes: vec![] };
    CommandGate::new(&rules, TrustStore::ephemeral())
}

fn project_server() -> CommandRequest {
    let key = TrustKey { workspace: PathBuf::from("/ws"), subject: "srv".into(), fingerprint: "f".into() };
    CommandRequest { line: "node server.js".into(), origin: CommandOrigin::Config { source: Source::Project, key } }
}

#[test]
fn deny_rules_hold_for_every_origin_in_every_mode() {
    let g = gate(&["echo", "node"]);
    for mode in [Mode::Plan, Mode::Agent, Mode::Yolo] {
        for request in [CommandRequest::model("echo hi"), CommandRequest::tool("echo hi"), project_server()] {
            assert!(matches!(g.judge(mode, &request), GateVerdict::Deny(m) if m.contains("deny rule")), "{mode}");
        }
    }
}

#[test]
fn a_project_server_is_asked_for_and_a_user_server_is_not() {
    let g = gate(&[]);
    assert!(matches!(g.judge(Mode::Agent, &project_server()), GateVerdict::Ask { remember: Some(_), .. }));
    assert!(matches!(g.judge(Mode::Plan, &project_server()), GateVerdict::Ask { .. }));
    assert_eq!(g.judge(Mode::Yolo, &project_server()), GateVerdict::Allow(Permit::Yolo));
    let mut user = project_server();
    if let CommandOrigin::Config { source, .. } = &mut user.origin {
        *source = Source::User;
    }
    assert_eq!(g.judge(Mode::Agent, &user), GateVerdict::Allow(Permit::Trusted));
}

#[test]
fn model_lines_follow_the_mode_and_trusted_rules() {
    let g = gate(&[]);
    assert!(matches!(g.judge(Mode::Plan, &CommandRequest::model("ls")), GateVerdict::Deny(_)));
    assert_eq!(g.judge(Mode::Agent, &CommandRequest::model("ls -la")), GateVerdict::Allow(Permit::Trusted));
    assert!(matches!(g.judge(Mode::Agent, &CommandRequest::model("make deploy")), GateVerdict::Ask { .. }));
    assert_eq!(g.judge(Mode::Yolo, &CommandRequest::model("make deploy")), GateVerdict::Allow(Permit::Yolo));
    assert_eq!(g.judge(Mode::Plan, &CommandRequest::tool("git status")), GateVerdict::Allow(Permit::Trusted));
}

#[test]
fn argv_is_shown_quoted() {
    assert_eq!(shown_argv(&["git", "log", "a b"]), "git log 'a b'");
}
