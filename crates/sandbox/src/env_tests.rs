#![allow(clippy::unwrap_used)]

use super::*;
use crate::policy::user_home_allow;

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
    // Not glob syntax in a variable name: taken literally.
    assert!(glob_match("A[1]", "a[1]") && !glob_match("A[1]", "A1"));
    assert!(glob_match("X{Y}*", "x{y}z") && glob_match("B\\C", "b\\c"));
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

#[test]
fn user_scrub_list_reads_the_sandbox_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    assert_eq!(user_scrub_list(&path).unwrap(), Vec::<String>::new(), "no file: nothing extra");
    std::fs::write(&path, "[model]\nname = \"x\"\n").unwrap();
    assert_eq!(user_scrub_list(&path).unwrap(), Vec::<String>::new(), "no table: nothing extra");
    std::fs::write(&path, "[sandbox]\nscrub_env = [\"CORP_DB_URL\", \"VAULT_*\"]\n").unwrap();
    let names = user_scrub_list(&path).unwrap();
    assert_eq!(names, ["CORP_DB_URL", "VAULT_*"]);
    let policy = EnvPolicy::excluding(names);
    assert!(!policy.keeps(OsStr::new("CORP_DB_URL")));
    assert!(!policy.keeps(OsStr::new("vault_addr")));
    assert!(policy.keeps(OsStr::new("PATH")));
    std::fs::write(&path, "[sandbox]\nscrub_env = \"CORP_DB_URL\"\n").unwrap();
    assert!(user_scrub_list(&path).unwrap_err().contains("scrub_env` must be a list"));
    std::fs::write(&path, "[sandbox]\nscrub_env = [1]\n").unwrap();
    assert!(user_scrub_list(&path).unwrap_err().contains("must be a list of variable names"));
    std::fs::write(&path, "not toml [").unwrap();
    assert!(user_scrub_list(&path).is_err());
}

/// Secrets under names the first patterns missed: each of these reached a
/// sandboxed command (and its output, the model) before.
#[test]
fn common_secret_spellings_and_urls_with_passwords_are_dropped() {
    let env = vars(&[
        ("API_KEY", "k"),
        ("MYSQL_PWD", "p"),
        ("SSHPASS", "p"),
        ("GITHUB_PAT", "p"),
        ("DOCKER_AUTH_CONFIG", "{}"),
        ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T/B/x"),
        ("GPG_PASSPHRASE", "p"),
        ("DEPLOY_PRIVATE_KEY", "k"),
        ("DATABASE_URL", "postgres://app:hunter2@db.internal/app"),
        ("REDIS_URL", "redis://:hunter2@cache:6379"),
        // Kept: no password in it, a proxy, and the ordinary rest.
        ("PUBLIC_URL", "https://example.com/a@b"),
        ("GIT_REPO_URL", "ssh://git@github.com/o/r.git"),
        ("HTTPS_PROXY", "http://u:p@proxy:8080"),
        ("PWD", "/w"),
        ("OLDPWD", "/"),
        ("GIT_AUTHOR_NAME", "a"),
        ("AWS_PROFILE", "dev"),
    ]);
    let out = EnvPolicy::default().resolve(env.clone());
    assert_eq!(
        names(&out),
        ["AWS_PROFILE", "GIT_AUTHOR_NAME", "GIT_REPO_URL", "HTTPS_PROXY", "OLDPWD", "PUBLIC_URL", "PWD"]
    );
    // The user's explicit choice still hands everything over.
    let all = EnvPolicy { ignore_default_excludes: true, ..Default::default() }.resolve(env);
    assert!(all.contains_key(OsStr::new("DATABASE_URL")));
}

#[test]
fn user_home_allow_takes_paths_inside_the_home_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[sandbox]\nhome_allow = [\".m2/repository\", \"~/.gradle/caches/\"]\n").unwrap();
    assert_eq!(user_home_allow(&path).unwrap(), vec![".m2/repository", ".gradle/caches"]);
    for bad in ["\"/etc\"", "\"~\"", "\"../x\"", "\"a/../../b\"", "3"] {
        std::fs::write(&path, format!("[sandbox]\nhome_allow = [{bad}]\n")).unwrap();
        assert!(user_home_allow(&path).unwrap_err().contains("home_allow"), "{bad}");
    }
    assert!(user_home_allow(&dir.path().join("absent.toml")).unwrap().is_empty());
}
