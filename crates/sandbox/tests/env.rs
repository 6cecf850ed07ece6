//! Environment scrubbing, seen from a real child's `env`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::process::Command;

use quiver_sandbox::{EnvPolicy, Inherit, SandboxPolicy};

use crate::support::*;

const SECRETS: &[(&str, &str)] = &[
    ("QUIVER_MCP_TOKEN", "tok-quiver"),
    ("OPENAI_API_KEY", "sk-openai"),
    ("DEEPSEEK_API_KEY", "sk-deepseek"),
    ("GITHUB_TOKEN", "ghp-secret"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
    ("MY_CONFIGURED_NAME", "named-in-config"),
];

fn env_of_child(policy: &EnvPolicy, parent: Vec<(OsString, OsString)>) -> String {
    let mut cmd = Command::new("env");
    cmd.env_clear().envs(policy.resolve(parent));
    String::from_utf8(cmd.output().unwrap().stdout).unwrap()
}

#[test]
fn no_secret_reaches_a_child() {
    let mut parent: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    parent.extend(SECRETS.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
    let policy = EnvPolicy::excluding(["MY_CONFIGURED_NAME"]);
    let env = env_of_child(&policy, parent);
    let mut held = 0;
    for (name, value) in SECRETS {
        assert!(!env.contains(value), "{name} reached the child:\n{env}");
        held += 1;
    }
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "PATH must survive");
    eprintln!("secrets in a child's env: tried {}, held {held}", SECRETS.len());
}

#[test]
fn apply_to_replaces_the_environment_and_sandbox_sets_tmpdir_after() {
    let mut policy = EnvPolicy { inherit: Inherit::Core, ..Default::default() };
    policy.set.insert("PAGER".into(), "cat".into());
    let mut cmd = Command::new("env");
    cmd.env("SET_BEFORE", "dropped");
    policy.apply_to(&mut cmd);
    if let Ok(sb) = quiver_sandbox::Sandbox::new(SandboxPolicy::ReadOnly, true) {
        sb.apply_to(&mut cmd).unwrap();
        let env = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        let tmp = sb.command_tmp_dir().unwrap().display().to_string();
        assert!(env.lines().any(|l| l == format!("TMPDIR={tmp}")), "{env}");
        assert!(env.lines().any(|l| l == "PAGER=cat"));
        assert!(!env.contains("SET_BEFORE"));
        for line in env.lines() {
            let name = line.split('=').next().unwrap();
            // A root command gets git's `safe.directory` too (see the
            // namespace sandbox's idmap).
            let sandbox_own =
                ["PAGER", "TMPDIR", "TMP", "TEMP", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"];
            assert!(policy.keeps(name.as_ref()) || sandbox_own.contains(&name), "{name}");
        }
    } else {
        sandbox_available("apply_to_replaces_the_environment_and_sandbox_sets_tmpdir_after");
    }
}
