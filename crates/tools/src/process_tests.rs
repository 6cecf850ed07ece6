use super::*;

#[test]
fn explicit_variables_survive_the_scrub_and_secrets_do_not() {
    // SAFETY-free: only reads of the process environment happen elsewhere in
    // this test binary; the names are unique to this test.
    let mut cmd = tokio::process::Command::new("env");
    cmd.env("QUIVER_TEST_EXPLICIT_TOKEN", "kept");
    scrub_env(&mut cmd, &EnvPolicy::default());
    let envs: Vec<_> = cmd.as_std().get_envs().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
    assert!(envs.contains(&"QUIVER_TEST_EXPLICIT_TOKEN".to_string()));
    assert!(!envs.iter().any(|k| k == "QUIVER_MCP_TOKEN" || k.ends_with("_API_KEY")));
}
