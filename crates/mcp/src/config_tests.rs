use std::path::Path;

use super::*;

fn toml(text: &str) -> Result<McpConfig, ConfigError> {
    parse_file(Path::new("/proj/quiver.toml"), text)
}

fn json(text: &str) -> Result<McpConfig, ConfigError> {
    parse_file(Path::new("/proj/.mcp.json"), text)
}

fn err_text(r: Result<McpConfig, ConfigError>) -> String {
    match r {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn stdio_server_with_everything() -> anyhow::Result<()> {
    let c = toml(
        r#"
        [provider]            # someone else's table: ignored
        name = "x"

        [mcp_servers.files]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
        env = { DEBUG = "1" }
        cwd = "sub"
        enabled_tools = ["read_file"]
        disabled_tools = ["write_file"]
        startup_timeout_ms = 5000
        tool_timeout_ms = 1500
        "#,
    )?;
    let s = &c.servers["files"];
    assert_eq!(s.name, "files");
    assert!(s.enabled);
    assert_eq!(s.startup_timeout, Duration::from_millis(5000));
    assert_eq!(s.tool_timeout, Duration::from_millis(1500));
    match &s.transport {
        Transport::Stdio { command, args, env, cwd } => {
            assert_eq!(command, "npx");
            assert_eq!(args.len(), 3);
            assert_eq!(env["DEBUG"], "1");
            assert_eq!(cwd.as_deref(), Some(Path::new("/proj/sub")));
        }
        other => panic!("expected stdio, got {other:?}"),
    }
    assert!(s.allows_tool("read_file"));
    assert!(!s.allows_tool("write_file"));
    assert!(!s.allows_tool("other"));
    assert_eq!(s.transport.to_string(), "stdio: npx -y @modelcontextprotocol/server-filesystem .");
    Ok(())
}

#[test]
fn http_server_and_defaults() -> anyhow::Result<()> {
    let c = toml(
        r#"
        [mcp_servers.remote]
        url = "https://example.com/mcp"
        headers = { "X-Team" = "core" }
        bearer_token_env = "REMOTE_TOKEN"
        enabled = false
        "#,
    )?;
    let s = &c.servers["remote"];
    assert!(!s.enabled);
    assert_eq!(s.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(s.tool_timeout, DEFAULT_TOOL_TIMEOUT);
    assert!(s.allows_tool("anything"));
    assert_eq!(s.transport.to_string(), "http: https://example.com/mcp");
    Ok(())
}

#[test]
fn codex_style_keys_are_accepted() -> anyhow::Result<()> {
    let c = toml("[mcp_servers.a]\ncommand = \"x\"\nstartup_timeout_sec = 2.5\ntool_timeout_sec = 1\n")?;
    assert_eq!(c.servers["a"].startup_timeout, Duration::from_millis(2500));
    assert_eq!(c.servers["a"].tool_timeout, Duration::from_secs(1));
    Ok(())
}

#[test]
fn errors_name_file_and_key() {
    let e = err_text(toml("[mcp_servers.a]\ncomand = \"x\"\n"));
    assert!(e.contains("/proj/quiver.toml") && e.contains("mcp_servers.a.comand") && e.contains("`command`"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\nargs = [\"x\"]\n"));
    assert!(e.contains("mcp_servers.a") && e.contains("needs `command`"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n"));
    assert!(e.contains("both `command` and `url`"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\nargs = \"not a list\"\n"));
    assert!(e.contains("mcp_servers.a") && e.contains("sequence"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\nurl = \"ftp://h\"\n"));
    assert!(e.contains("mcp_servers.a.url"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\nurl = \"http://h\"\nenv = { A = \"1\" }\n"));
    assert!(e.contains("mcp_servers.a.env") && e.contains("only applies to `command`"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\nheaders = { A = \"1\" }\n"));
    assert!(e.contains("mcp_servers.a.headers") && e.contains("only applies to `url`"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_ms = 0\n"));
    assert!(e.contains("mcp_servers.a.tool_timeout_ms") && e.contains("greater than 0"), "{e}");

    let e = err_text(toml("[mcp_servers.a]\nurl = \"http://h\"\nheaders = { \"bad header\" = \"1\" }\n"));
    assert!(e.contains("headers.bad header"), "{e}");

    let e = err_text(toml("mcp_servers = 3\n"));
    assert!(e.contains("mcp_servers") && e.contains("table"), "{e}");

    let e = err_text(toml("[mcp_servers\n"));
    assert!(e.contains("/proj/quiver.toml") && e.contains("(syntax)"), "{e}");
}

#[test]
fn claude_json_is_read() -> anyhow::Result<()> {
    let c = json(
        r#"{"mcpServers": {
            "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
            "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-A": "b"}},
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "x": {"command": "y", "someOtherClientKey": true}
        }}"#,
    )?;
    assert_eq!(c.servers.len(), 4);
    assert_eq!(c.servers["everything"].transport.kind(), "stdio");
    assert_eq!(c.servers["web"].transport.kind(), "http");
    assert!(matches!(&c.servers["old"].transport, Transport::Unsupported { .. }));
    Ok(())
}

#[test]
fn claude_json_errors() {
    let e = err_text(json(r#"{"servers": {}}"#));
    assert!(e.contains("/proj/.mcp.json") && e.contains("mcpServers"), "{e}");
    let e = err_text(json(r#"{"mcpServers": {"a": {"type": "http", "command": "x"}}}"#));
    assert!(e.contains("mcpServers.a") && e.contains("no `url`"), "{e}");
    let e = err_text(json(r#"{"mcpServers": {"a": {"type": "carrier-pigeon", "command": "x"}}}"#));
    assert!(e.contains("mcpServers.a.type") && e.contains("carrier-pigeon"), "{e}");
    let e = err_text(json(r#"{"mcpServers": {"a": {"command": 3}}}"#));
    assert!(e.contains("mcpServers.a") && e.contains("invalid type"), "{e}");
    let e = err_text(json(r#"{"mcpServers": {"a": {"args": ["x"]}}}"#));
    assert!(e.contains("mcpServers.a:") && e.contains("needs `command`"), "{e}");
    let e = err_text(json("{oops"));
    assert!(e.contains("(syntax)"), "{e}");
}

#[test]
fn env_references_expand() {
    // PATH is set in every test environment; a made-up name is not.
    let path = std::env::var("PATH").unwrap_or_default();
    assert_eq!(claude::expand("a${PATH}b").ok(), Some(format!("a{path}b")));
    assert_eq!(claude::expand("${QUIVER_SURELY_UNSET_VAR:-fallback}").ok(), Some("fallback".into()));
    assert!(claude::expand("${QUIVER_SURELY_UNSET_VAR}").is_err_and(|e| e.contains("QUIVER_SURELY_UNSET_VAR")));
    assert!(claude::expand("${unterminated").is_err());
    assert_eq!(claude::expand("no refs $HOME").ok(), Some("no refs $HOME".into()));
}

#[test]
fn layering_project_wins_per_server() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let user = dir.path().join("user.toml");
    std::fs::write(
        &user,
        "[mcp_servers.shared]\ncommand = \"user-version\"\n[mcp_servers.only_user]\ncommand = \"u\"\n",
    )?;
    let claude = dir.path().join(".mcp.json");
    std::fs::write(&claude, r#"{"mcpServers": {"shared": {"command": "claude-version"}, "c": {"command": "c"}}}"#)?;
    let project = dir.path().join("quiver.toml");
    std::fs::write(&project, "[mcp_servers.shared]\ncommand = \"project-version\"\ntool_timeout_ms = 7\n")?;
    let sources = ConfigSources { files: vec![user.clone(), claude, project.clone()], ..Default::default() };
    let c = McpConfig::load(&sources)?;
    assert_eq!(c.servers.keys().collect::<Vec<_>>(), ["c", "only_user", "shared"]);
    let shared = &c.servers["shared"];
    assert!(matches!(&shared.transport, Transport::Stdio { command, .. } if command == "project-version"));
    assert_eq!(shared.source, project);
    assert_eq!(c.servers["only_user"].source, user);
    Ok(())
}

#[test]
fn discover_skips_missing_files_but_not_a_missing_explicit_one() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("quiver.toml"), "[mcp_servers.a]\ncommand = \"x\"\n")?;
    let sources = ConfigSources::discover(Some(dir.path()), None);
    assert!(sources.files.iter().any(|f| f.ends_with("quiver.toml")));
    assert!(!sources.files.iter().any(|f| f.ends_with(".mcp.json")));

    let missing = dir.path().join("nope.toml");
    let e = McpConfig::load(&ConfigSources::discover(Some(dir.path()), Some(&missing)));
    let e = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("nope.toml") && e.contains("cannot read"), "{e}");
    Ok(())
}

#[test]
fn prefix_collisions_are_refused() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("quiver.toml");
    std::fs::write(&file, "[mcp_servers.\"a.b\"]\ncommand = \"x\"\n[mcp_servers.a_b]\ncommand = \"y\"\n")?;
    let e = McpConfig::load(&ConfigSources { files: vec![file], ..Default::default() })
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("mcp__a_b__"), "{e}");
    Ok(())
}

#[test]
fn explicit_file_format_is_sniffed() -> anyhow::Result<()> {
    let c = parse_file(Path::new("servers.conf"), r#"{"mcpServers": {"a": {"command": "x"}}}"#)?;
    assert!(c.servers.contains_key("a"));
    let c = parse_file(Path::new("servers.conf"), "[mcp_servers.b]\ncommand = \"x\"\n")?;
    assert!(c.servers.contains_key("b"));
    Ok(())
}

#[test]
fn expose_is_search_by_default_direct_on_request_and_checked() -> anyhow::Result<()> {
    let c = toml("[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.b]\ncommand = \"y\"\nexpose = \"direct\"\n")?;
    assert_eq!(c.servers["a"].expose, Expose::Search);
    assert_eq!(c.servers["b"].expose, Expose::Direct);
    let c = json(r#"{"mcpServers": {"b": {"command": "y", "expose": "direct"}}}"#)?;
    assert_eq!(c.servers["b"].expose, Expose::Direct);
    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\nexpose = \"inline\"\n"));
    assert!(e.contains("mcp_servers.a.expose") && e.contains("`inline`") && e.contains("\"direct\""), "{e}");
    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\nexposed = \"direct\"\n"));
    assert!(e.contains("did you mean `expose`"), "{e}");
    Ok(())
}

#[test]
fn protocol_is_initialize_by_default_auto_on_request_and_checked() -> anyhow::Result<()> {
    let c = toml("[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.b]\nurl = \"http://h/mcp\"\nprotocol = \"auto\"\n")?;
    assert_eq!(c.servers["a"].protocol, Protocol::Initialize);
    assert_eq!(c.servers["b"].protocol, Protocol::Auto);
    let c = json(r#"{"mcpServers": {"b": {"command": "y", "protocol": "auto"}}}"#)?;
    assert_eq!(c.servers["b"].protocol, Protocol::Auto);
    let e = err_text(toml("[mcp_servers.a]\ncommand = \"x\"\nprotocol = \"2026-07-28\"\n"));
    assert!(e.contains("mcp_servers.a.protocol") && e.contains("`2026-07-28`") && e.contains("\"auto\""), "{e}");
    Ok(())
}

#[test]
fn a_project_cannot_expose_a_server_directly() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let user = dir.path().join("user.toml");
    std::fs::write(&user, "[mcp_servers.mine]\ncommand = \"mine\"\nexpose = \"direct\"\n")?;
    let project = dir.path().join("quiver.toml");
    std::fs::write(&project, "[mcp_servers.theirs]\ncommand = \"theirs\"\nexpose = \"direct\"\n")?;
    let sources = ConfigSources {
        files: vec![user, project.clone()],
        project_files: vec![project],
        workspace: Some(dir.path().to_path_buf()),
    };
    let c = McpConfig::load(&sources)?;
    assert_eq!(c.servers["mine"].expose, Expose::Direct, "the user's own config may");
    assert_eq!(c.servers["theirs"].expose, Expose::Search, "a cloned repository's config may not");
    assert_eq!(c.servers["theirs"].trust, Source::Project);
    Ok(())
}

#[test]
fn a_broken_project_file_is_left_out_and_the_users_servers_stay() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let user = dir.path().join("user.toml");
    std::fs::write(&user, "[mcp_servers.mine]\ncommand = \"u\"\n[mcp_servers.a_b]\ncommand = \"u\"\n")?;
    let claude = dir.path().join(".mcp.json");
    let project = dir.path().join("quiver.toml");
    for (json_text, toml_text) in [
        (r#"{"mcpServers": {"#, "[mcp_servers.p]\ncommand = \"p\"\n"),
        (r#"{"mcpServers": {"c": {"command": "c"}}}"#, "[mcp_servers.p]\ncommand = \"p\"\nbogus = 1\n"),
        // A project server whose prefix collides with the user's is left out, not fatal.
        (r#"{"mcpServers": {"c": {"command": "c"}}}"#, "[mcp_servers.\"a.b\"]\ncommand = \"p\"\n"),
    ] {
        std::fs::write(&claude, json_text)?;
        std::fs::write(&project, toml_text)?;
        let sources = ConfigSources {
            files: vec![user.clone(), claude.clone(), project.clone()],
            project_files: vec![claude.clone(), project.clone()],
            workspace: Some(dir.path().to_path_buf()),
        };
        let c = McpConfig::load(&sources)?;
        assert!(c.servers.contains_key("mine"), "{json_text} / {toml_text}");
        assert_eq!(c.servers.len(), 3, "the one good project file still counts: {:?}", c.servers.keys());
    }
    // The user's own broken file is still an error: only they can fix it.
    std::fs::write(&user, "[mcp_servers.mine\n")?;
    assert!(McpConfig::load(&ConfigSources { files: vec![user], ..Default::default() }).is_err());
    Ok(())
}

#[test]
fn a_secret_held_in_memory_never_shows_in_debug_output() {
    let oauth = OAuthSettings { client_secret: Some(Secret("hunter2".into())), ..OAuthSettings::default() };
    let shown = format!("{oauth:?}");
    assert!(!shown.contains("hunter2") && shown.contains("<redacted>"), "{shown}");
}
