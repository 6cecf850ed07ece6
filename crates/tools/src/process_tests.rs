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

#[test]
fn a_cargo_target_dir_outside_the_sandbox_is_dropped_one_inside_kept() {
    let ws = tempfile::tempdir().unwrap();
    let roots = vec![ws.path().to_path_buf()];
    let value = |cmd: &tokio::process::Command| {
        cmd.as_std().get_envs().find(|(k, _)| *k == "CARGO_TARGET_DIR").map(|(_, v)| v.map(|v| v.to_os_string()))
    };
    let mut cmd = tokio::process::Command::new("true");
    cmd.env("CARGO_TARGET_DIR", "/somewhere/shared/target");
    keep_cargo_target_writable(&mut cmd, &roots);
    assert_eq!(value(&cmd), Some(None), "removed");

    let inside = ws.path().join("build/target");
    let mut cmd = tokio::process::Command::new("true");
    cmd.env("CARGO_TARGET_DIR", &inside);
    keep_cargo_target_writable(&mut cmd, &roots);
    assert_eq!(value(&cmd), Some(Some(inside.into_os_string())));

    let mut cmd = tokio::process::Command::new("true");
    cmd.current_dir(ws.path()).env("CARGO_TARGET_DIR", "rel/target");
    keep_cargo_target_writable(&mut cmd, &roots);
    assert_eq!(value(&cmd), Some(Some("rel/target".into())), "relative to a cwd in the workspace");
}
