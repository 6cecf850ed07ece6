use super::*;

const CLAUDE: &str = r#"{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"LOG": "1"}},
    "local": {"type": "stdio", "command": "./run.sh", "cwd": "tools"},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": "Bearer ${EXAMPLE_TOKEN}", "X-Team": "core"}},
    "other": {"url": "https://other.example/mcp", "oauth": {"clientId": "x"}}
  }
}"#;

fn empty_user() -> (tempfile::TempDir, UserConfig) {
    let dir = tempfile::tempdir().unwrap();
    let config = UserConfig::open(dir.path().join("config.toml")).unwrap();
    (dir, config)
}

#[test]
fn stdio_and_http_entries_become_servers() {
    let (_dir, user) = empty_user();
    let file = Path::new("/proj/.mcp.json");
    let plan = plan(file, CLAUDE, &ImportOptions::default(), &user).unwrap();
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let names: Vec<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fs", "local", "other", "remote"]);
    let local = &plan.servers[1];
    assert!(
        matches!(&local.transport, NewTransport::Stdio { cwd: Some(cwd), .. } if cwd == Path::new("/proj/tools")),
        "{local:?}"
    );
    let remote = &plan.servers[3];
    let NewTransport::Http { headers, bearer_token_env, .. } = &remote.transport else { panic!("{remote:?}") };
    assert_eq!(bearer_token_env.as_deref(), Some("EXAMPLE_TOKEN"));
    assert_eq!(headers.keys().collect::<Vec<_>>(), ["X-Team"]);
    assert_eq!(plan.notes, ["`other`: left out `oauth`"]);
}

#[test]
fn problems_are_all_named_and_only_picks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[mcp_servers.fs]\ncommand = \"mine\"\n").unwrap();
    let user = UserConfig::open(&path).unwrap();
    let text = r#"{"mcpServers": {
        "fs": {"command": "npx"},
        "bad name": {"command": "x"},
        "legacy": {"type": "sse", "url": "https://x/sse"},
        "keyed": {"command": "x", "env": {"API_KEY": "${API_KEY}"}},
        "fine": {"command": "ok"}
    }}"#;
    let file = Path::new("/c/claude_desktop_config.json");
    let p = plan(file, text, &ImportOptions::default(), &user).unwrap();
    let problems: BTreeMap<&str, &str> = p.problems.iter().map(|(n, r)| (n.as_str(), r.as_str())).collect();
    assert_eq!(problems.len(), 4, "{problems:?}");
    assert!(problems["fs"].contains("--force"), "{problems:?}");
    assert!(problems["bad name"].contains("bad_name"), "{problems:?}");
    assert!(problems["legacy"].contains("SSE"), "{problems:?}");
    assert!(problems["keyed"].contains("--expand-env"), "{problems:?}");

    let only = ImportOptions { only: vec!["fine".into(), "missing".into()], ..Default::default() };
    let p = plan(file, text, &only, &user).unwrap();
    assert_eq!(p.servers.len(), 1);
    assert_eq!(p.problems, [("missing".to_string(), "not in /c/claude_desktop_config.json".to_string())]);

    let force = ImportOptions { force: true, only: vec!["fs".into()], ..Default::default() };
    assert!(plan(file, text, &force, &user).unwrap().problems.is_empty());
}

#[test]
fn expand_env_writes_the_value() {
    let (_dir, user) = empty_user();
    // PATH is set in every test environment.
    let path = std::env::var("PATH").unwrap();
    let text = r#"{"mcpServers": {"k": {"command": "x", "env": {"P": "${PATH}"}}}}"#;
    let options = ImportOptions { expand_env: true, ..Default::default() };
    let p = plan(Path::new("/c/a.json"), text, &options, &user).unwrap();
    let NewTransport::Stdio { env, .. } = &p.servers[0].transport else { panic!() };
    assert_eq!(env["P"], path);
}

#[test]
fn a_file_that_is_not_json_names_line_and_column() {
    let (_dir, user) = empty_user();
    let err =
        plan(Path::new("/c/a.json"), "{\n  \"mcpServers\": {,}\n}", &ImportOptions::default(), &user).unwrap_err();
    assert!(matches!(err, ManageError::Syntax { line: 2, .. }), "{err}");
    let err = plan(Path::new("/c/a.json"), "{\"servers\": {}}", &ImportOptions::default(), &user).unwrap_err();
    assert!(err.to_string().contains("mcpServers"), "{err}");
}
