#![allow(clippy::unwrap_used)]

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

#[test]
fn secrets_are_what_a_child_would_not_get() {
    let policy = EnvPolicy::excluding(["CORP_LLM_CRED"]);
    let env = vars(&[
        ("PATH", "/usr/bin"),
        ("OPENAI_API_KEY", "sk-1"),
        ("GH_TOKEN", "ghp_1"),
        ("CORP_LLM_CRED", "named-in-config"),
        ("DATABASE_URL", "postgres://u:pw@db/x"),
        ("https_proxy", "http://u:pw@proxy:3128"),
        ("OPENAI_API_KEY", "sk-second"),
    ]);
    let secrets = secrets_of(&policy, env);
    let names: Vec<&str> = secrets.keys().map(|k| k.to_str().unwrap()).collect();
    assert_eq!(names, ["CORP_LLM_CRED", "DATABASE_URL", "GH_TOKEN", "OPENAI_API_KEY"]);
    // The first value, as getenv reads it.
    assert_eq!(secrets[OsStr::new("OPENAI_API_KEY")], "sk-1");
}

#[test]
fn spans_cover_the_values_of_every_record_of_a_withheld_name() {
    let block = b"PATH=/bin\0OPENAI_API_KEY=sk-1\0EMPTY_TOKEN=\0HOME=/root\0OPENAI_API_KEY=sk-22\0";
    let spans = secret_spans(block, |n| n == b"OPENAI_API_KEY" || n == b"EMPTY_TOKEN");
    let values: Vec<&[u8]> = spans.iter().map(|s| &block[s.clone()]).collect();
    assert_eq!(values, [&b"sk-1"[..], &b"sk-22"[..]]);
    // A block without a final NUL (as a truncated read would give) still parses.
    let spans = secret_spans(b"A=1\0GH_TOKEN=ghp", |n| n == b"GH_TOKEN");
    assert_eq!(spans, vec![Range { start: 13, end: 16 }]);
}

#[cfg(target_os = "linux")]
#[test]
fn env_bounds_are_fields_50_and_51_after_a_name_with_spaces() {
    let mut fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
    fields[50 - 3] = "1000".into();
    fields[51 - 3] = "1200".into();
    let stat = format!("42 (a) b (c) {}", fields.join(" "));
    assert_eq!(linux::env_bounds(&stat), Some((1000, 1200)));
    let own = std::fs::read_to_string("/proc/self/stat").unwrap();
    let (start, end) = linux::env_bounds(&own).unwrap();
    assert_eq!(end - start, std::fs::read("/proc/self/environ").unwrap().len());
}

/// The test harness runs tests on threads of its own: too late to touch the
/// environment, and nothing is touched.
#[test]
fn with_threads_running_nothing_is_withheld() {
    let _other = std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(200)));
    let before: Vec<_> = std::env::vars_os().collect();
    let refused = withhold_own_secrets(&[]);
    #[cfg(target_os = "linux")]
    assert!(matches!(refused, Err(WithholdError::TooLate(n)) if n > 1), "{refused:?}");
    #[cfg(not(target_os = "linux"))]
    assert!(matches!(refused, Err(WithholdError::UnsupportedPlatform)), "{refused:?}");
    assert_eq!(std::env::vars_os().collect::<Vec<_>>(), before);
    assert!(withheld_env().is_empty());
    assert_eq!(secret_env_os("PATH"), std::env::var_os("PATH"));
}
