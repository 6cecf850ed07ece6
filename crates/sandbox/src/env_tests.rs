#![allow(clippy::unwrap_used)]

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

fn names(map: &BTreeMap<OsString, OsString>) -> Vec<String> {
    map.keys().map(|k| k.to_string_lossy().into_owned()).collect()
}

#[test]
fn globs() {
    assert!(glob_match("*_API_KEY", "OPENAI_API_KEY"));
    assert!(glob_match("*_api_key", "deepseek_API_KEY"));
    assert!(glob_match("*SECRET*", "AWS_SECRET_ACCESS_KEY"));
    assert!(glob_match("*SECRET*", "SECRET"));
    assert!(glob_match("A?C", "abc"));
    assert!(!glob_match("A?C", "abbc"));
    assert!(!glob_match("*_TOKEN", "TOKENIZER"));
    assert!(glob_match("*", ""));
    assert!(!glob_match("", "x"));
    assert!(!glob_match("*a*a*a*a*a*b", &"a".repeat(200)));
}

#[test]
fn default_policy_drops_secrets_and_keeps_the_rest() {
    let env = vars(&[
        ("PATH", "/bin"),
        ("OPENAI_API_KEY", "sk"),
        ("GITHUB_TOKEN", "gh"),
        ("QUIVER_MCP_TOKEN", "q"),
        ("MY_SECRET_THING", "s"),
        ("DB_PASSWORD", "p"),
        ("CARGO_HOME", "/c"),
    ]);
    let out = EnvPolicy::default().resolve(env);
    assert_eq!(names(&out), ["CARGO_HOME", "PATH"]);
}

#[test]
fn named_excludes_include_only_and_set() {
    let env = vars(&[("PATH", "/bin"), ("HOME", "/h"), ("CUSTOM_CRED", "x"), ("RUST_LOG", "debug")]);
    let policy = EnvPolicy::excluding(["custom_cred"]);
    assert_eq!(names(&policy.resolve(env.clone())), ["HOME", "PATH", "RUST_LOG"]);

    let policy = EnvPolicy { include_only: vec!["PATH".into(), "RUST_*".into()], ..Default::default() };
    assert_eq!(names(&policy.resolve(env.clone())), ["PATH", "RUST_LOG"]);

    let mut policy = EnvPolicy { inherit: Inherit::None, ..Default::default() };
    policy.set.insert("PAGER".into(), "cat".into());
    // `set` wins even over the default excludes: it is quiver's own choice.
    policy.set.insert("GIT_TOKEN".into(), "deliberate".into());
    assert_eq!(names(&policy.resolve(env.clone())), ["GIT_TOKEN", "PAGER"]);
}

#[test]
fn core_keeps_only_core_vars_and_still_drops_secrets() {
    let env = vars(&[("PATH", "/bin"), ("HOME", "/h"), ("RUST_LOG", "debug"), ("TERM", "xterm")]);
    let policy = EnvPolicy { inherit: Inherit::Core, ..Default::default() };
    assert_eq!(names(&policy.resolve(env)), ["HOME", "PATH", "TERM"]);
}

#[test]
fn ignore_default_excludes_is_explicit() {
    let env = vars(&[("OPENAI_API_KEY", "sk")]);
    let policy = EnvPolicy { ignore_default_excludes: true, ..Default::default() };
    assert_eq!(names(&policy.resolve(env)), ["OPENAI_API_KEY"]);
}
