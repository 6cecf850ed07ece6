//! `quiver mcp add|list|get|remove|enable|disable|validate|tools|import`
//! through the real binary, with a private home: `HOME` and
//! `XDG_CONFIG_HOME` point into a temporary directory (and
//! `QUIVER_CONFIG_DIR` is unset), so the user's config these commands edit is
//! `$XDG_CONFIG_HOME/quiver/config.toml` there, found the way a user's is.
//! Nothing outside the temporary directories is read or written.
//!
//! The working stdio server is quiver itself (`quiver mcp serve`), with a
//! config directory of its own so it does not start the servers it is one of.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

struct Home {
    dir: tempfile::TempDir,
}

struct Run {
    code: i32,
    out: String,
    err: String,
}

impl Home {
    fn new() -> Home {
        let home = Home { dir: tempfile::tempdir().unwrap() };
        std::fs::create_dir_all(home.workspace()).unwrap();
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where quiver must find the user's config: `$XDG_CONFIG_HOME/quiver/config.toml`.
    fn config(&self) -> PathBuf {
        self.path().join("xdg-config/quiver/config.toml")
    }

    fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.config().parent().unwrap()).unwrap();
        std::fs::write(self.config(), text).unwrap();
    }

    fn read_config(&self) -> String {
        std::fs::read_to_string(self.config()).unwrap()
    }

    /// The directory commands run in (a workspace with no project config
    /// unless a test writes one).
    fn workspace(&self) -> PathBuf {
        self.path().join("ws")
    }

    fn quiver(&self, args: &[&str]) -> Run {
        self.quiver_env(&[], args)
    }

    fn quiver_env(&self, envs: &[(&str, &str)], args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(self.workspace())
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join("xdg-config"))
            .env("XDG_STATE_HOME", self.path().join("xdg-state"))
            .env("XDG_CACHE_HOME", self.path().join("xdg-cache"))
            .env("QUIVER_CACHE_DIR", self.path().join("cache"))
            .env("QUIVER_STATE_DIR", self.path().join("state"))
            .env("QUIVER_LOG", "warn")
            .env_remove("QUIVER_CONFIG_DIR")
            .env_remove("QUIVER_SEARCH_MODEL")
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            out: String::from_utf8_lossy(&out.stdout).into_owned(),
            err: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs and expects exit 0.
    fn ok(&self, args: &[&str]) -> String {
        let run = self.quiver(args);
        assert_eq!(run.code, 0, "quiver {args:?}\nstdout:\n{}\nstderr:\n{}", run.out, run.err);
        run.out
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.ok(args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }
}

const COMMENTED: &str = "\
# my quiver settings
# (written by hand; quiver must keep every line of this)

# the docs server I use every day
[mcp_servers.docs] # on PATH
command = \"docs-mcp\"
args = [\"--port\", \"0\"]   # any free port

# keep this table last
[sandbox]
scrub_env = [\"CORP_*\"]
";

#[test]
fn add_list_get_disable_enable_remove_keep_the_users_comments() {
    let home = Home::new();
    home.write_config(COMMENTED);

    let out = home.ok(&[
        "mcp",
        "add",
        "fs",
        "--env",
        "LOG_LEVEL=debug",
        "--env",
        "GH_TOKEN=ghp_secret",
        "--",
        "npx",
        "-y",
        "server-fs",
        "/tmp",
    ]);
    assert!(out.contains("added `fs`") && out.contains("mcp__fs__<tool>"), "{out}");
    let added = home.read_config();
    let (head, tail) = COMMENTED.split_once("# keep this table last").unwrap();
    assert!(added.starts_with(head), "the text before the new table is unchanged:\n{added}");
    assert!(added.ends_with(&format!("# keep this table last{tail}")), "and so is the text after it:\n{added}");
    assert!(
        added.contains(
            "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"server-fs\", \"/tmp\"]\n\
             env = { GH_TOKEN = \"ghp_secret\", LOG_LEVEL = \"debug\" }\n"
        ),
        "{added}"
    );
    home.ok(&[
        "mcp",
        "add",
        "api",
        "--url",
        "https://api.example.com/mcp",
        "--header",
        "X-Team: core",
        "--bearer-token-env",
        "API_TOKEN",
    ]);

    let list = home.ok(&["mcp", "list"]);
    let config = home.config().display().to_string();
    let line =
        |name: &str| list.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{list}"));
    for (name, parts) in [
        ("docs", vec!["enabled", "stdio", "docs-mcp --port 0"]),
        ("fs", vec!["enabled", "stdio", "npx -y server-fs /tmp"]),
        ("api", vec!["enabled", "http", "https://api.example.com/mcp"]),
    ] {
        let l = line(name);
        for part in parts.into_iter().chain([config.as_str()]) {
            assert!(l.contains(part), "{name}: `{part}` missing from {l:?}\n{list}");
        }
    }
    let listed = home.json(&["mcp", "list", "--json"]);
    let names: Vec<&str> = listed.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["api", "docs", "fs"]);
    assert_eq!(listed[2]["scope"], "user");
    assert_eq!(listed[2]["source"], config.as_str());

    let get = home.ok(&["mcp", "get", "fs"]);
    assert!(get.contains("LOG_LEVEL=debug") && get.contains("GH_TOKEN=********"), "secrets masked:\n{get}");
    assert!(!get.contains("ghp_secret"), "{get}");
    assert!(get.contains("mcp__fs__<tool>") && get.contains("(your home)"), "{get}");
    let api = home.json(&["mcp", "get", "api", "--json", "--show-secrets"]);
    assert_eq!(api["headers"]["X-Team"], "core");
    assert_eq!(api["bearer_token_env"], "API_TOKEN");
    home.ok(&["mcp", "remove", "api"]);
    assert_eq!(home.read_config(), added);

    let out = home.ok(&["mcp", "disable", "fs"]);
    assert!(out.contains("disabled `fs`"), "{out}");
    assert!(
        home.read_config()
            .contains("\"/tmp\"]\nenv = { GH_TOKEN = \"ghp_secret\", LOG_LEVEL = \"debug\" }\nenabled = false\n")
    );
    assert!(line_of(&home.ok(&["mcp", "list"]), "fs").contains("disabled"));
    assert_eq!(home.json(&["mcp", "get", "fs", "--json"])["enabled"], false);
    assert!(home.ok(&["mcp", "disable", "fs"]).contains("already disabled"));

    home.ok(&["mcp", "enable", "fs"]);
    assert_eq!(home.read_config(), added, "enable takes back what disable wrote");
    home.ok(&["mcp", "remove", "fs"]);
    assert_eq!(home.read_config(), COMMENTED, "every byte the user wrote is back");
}

fn line_of<'a>(list: &'a str, name: &str) -> &'a str {
    list.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no {name} in {list}"))
}

#[test]
fn names_that_exist_or_do_not_fit_are_refused_with_the_file_untouched() {
    let home = Home::new();
    home.write_config(COMMENTED);
    for (args, expect) in [
        (vec!["mcp", "add", "docs", "--", "other"], "already exists"),
        (vec!["mcp", "add", "my server", "--", "x"], "not a usable server name"),
        (vec!["mcp", "add", "a__b", "--", "x"], "`__`"),
        (vec!["mcp", "add", "web", "--url", "ftp://example.com"], "not an http:// or https:// URL"),
        (vec!["mcp", "add", "nothing"], "nothing to run"),
        (vec!["mcp", "add", "e", "--env", "NOEQUALS", "--", "x"], "NAME=VALUE"),
        (vec!["mcp", "remove", "nope"], "no MCP server named `nope`"),
        (vec!["mcp", "enable", "nope"], "(it defines `docs`)"),
        (vec!["mcp", "get", "nope"], "configured: `docs`"),
        (vec!["mcp", "tools", "nope"], "no MCP server named `nope`"),
        (vec!["mcp", "validate", "nope"], "no MCP server named `nope`"),
    ] {
        let run = home.quiver(&args);
        assert_ne!(run.code, 0, "{args:?} must fail:\n{}", run.out);
        assert!(run.err.contains(expect), "{args:?}: `{expect}` missing from:\n{}", run.err);
        assert_eq!(home.read_config(), COMMENTED, "{args:?} changed the file");
    }
    // --force replaces, in place.
    home.ok(&["mcp", "add", "docs", "--force", "--", "docs-mcp", "--port", "9"]);
    let text = home.read_config();
    assert!(text.contains("# the docs server I use every day\n[mcp_servers.docs] # on PATH\ncommand = \"docs-mcp\"\nargs = [\"--port\", \"9\"]\n"), "{text}");
}

#[test]
fn add_protocol_auto_is_written_listed_and_a_bad_value_names_the_good_ones() {
    let home = Home::new();
    home.write_config(COMMENTED);
    let run = home.quiver(&["mcp", "add", "next", "--protocol", "2026-07-28", "--url", "http://127.0.0.1:1/mcp"]);
    assert_eq!(run.code, 2, "{}", run.err);
    assert!(
        run.err.contains("2026-07-28") && run.err.contains("initialize") && run.err.contains("auto"),
        "{}",
        run.err
    );
    assert_eq!(home.read_config(), COMMENTED);

    home.ok(&["mcp", "add", "next", "--protocol", "auto", "--url", "http://127.0.0.1:1/mcp"]);
    let text = home.read_config();
    assert!(text.contains("[mcp_servers.next]\nurl = \"http://127.0.0.1:1/mcp\"\nprotocol = \"auto\"\n"), "{text}");
    let list = home.ok(&["mcp", "list"]);
    assert!(list.lines().next().unwrap().contains("PROTOCOL"), "{list}");
    assert!(line_of(&list, "next").contains(" auto "), "{list}");
    assert!(line_of(&list, "docs").contains(" initialize "), "the default is shown too:\n{list}");
    assert_eq!(home.json(&["mcp", "list", "--json"])[1]["protocol"], "auto");
    let get = home.ok(&["mcp", "get", "next"]);
    assert!(get.lines().any(|l| l.trim_start().starts_with("protocol") && l.contains("auto (MCP 2026-07-28")), "{get}");
    assert_eq!(home.json(&["mcp", "get", "docs", "--json"])["protocol"], "initialize");
}

#[test]
fn a_malformed_config_is_named_with_line_and_column_and_never_written() {
    let home = Home::new();
    let broken = "# mine\n[mcp_servers.a]\ncommand = \"a\nargs = []\n";
    home.write_config(broken);
    let config = home.config().display().to_string();
    for args in [
        vec!["mcp", "add", "b", "--", "b"],
        vec!["mcp", "remove", "a"],
        vec!["mcp", "disable", "a"],
        vec!["mcp", "enable", "a"],
        vec!["mcp", "import", "x.json"],
        vec!["mcp", "list"],
        vec!["mcp", "get", "a"],
        vec!["mcp", "validate"],
    ] {
        let run = home.quiver(&args);
        assert_eq!(run.code, 2, "{args:?}:\n{}{}", run.out, run.err);
        assert!(run.err.contains(&config), "{args:?} names the file:\n{}", run.err);
        assert!(run.err.contains(":3:") || run.err.contains("line 3"), "{args:?} names the line:\n{}", run.err);
        assert_eq!(std::fs::read(home.config()).unwrap(), broken.as_bytes(), "{args:?} touched the file");
    }
}

#[test]
fn a_claude_json_is_imported_all_or_nothing() {
    let home = Home::new();
    home.write_config("# servers below\n[mcp_servers.mine]\ncommand = \"mine\"\n");
    let claude = home.path().join("claude_desktop_config.json");
    std::fs::write(
        &claude,
        r#"{"mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
                       "headers": {"Authorization": "Bearer ${EXAMPLE_TOKEN}"}},
            "mine": {"command": "theirs"}
        }}"#,
    )
    .unwrap();
    let before = home.read_config();
    let run = home.quiver(&["mcp", "import", claude.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert!(run.err.contains("nothing was imported") && run.err.contains("mine: already in"), "{}", run.err);
    assert_eq!(home.read_config(), before);

    let out = home.ok(&["mcp", "import", "--from-claude", claude.to_str().unwrap(), "--only", "filesystem,remote"]);
    assert!(out.contains("imported 2 servers"), "{out}");
    let text = home.read_config();
    assert!(text.starts_with("# servers below\n[mcp_servers.mine]\ncommand = \"mine\"\n"), "{text}");
    assert!(text.contains("[mcp_servers.filesystem]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]\n"), "{text}");
    assert!(
        text.contains(
            "[mcp_servers.remote]\nurl = \"https://mcp.example.com/mcp\"\nbearer_token_env = \"EXAMPLE_TOKEN\"\n"
        ),
        "{text}"
    );
    let listed = home.json(&["mcp", "list", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 3);

    let out = home.ok(&["mcp", "import", claude.to_str().unwrap(), "--force", "--only", "mine", "--dry-run"]);
    assert!(out.contains("would import `mine` (replaced)"), "{out}");
    assert_eq!(home.read_config(), text, "a dry run writes nothing");
    home.ok(&["mcp", "import", claude.to_str().unwrap(), "--force", "--only", "mine"]);
    assert!(home.read_config().starts_with("# servers below\n[mcp_servers.mine]\ncommand = \"theirs\"\n"));
}

/// quiver itself as a stdio MCP server, reading an empty config of its own.
fn add_quiver_server(home: &Home, name: &str, wrapper: Option<&str>) {
    let empty = home.path().join(format!("{name}-config"));
    std::fs::create_dir_all(&empty).unwrap();
    let env = format!("QUIVER_CONFIG_DIR={}", empty.display());
    let ws = home.workspace().display().to_string();
    let quiver = env!("CARGO_BIN_EXE_quiver");
    let mut args = vec!["mcp", "add", name, "--env", env.as_str(), "--timeout", "120", "--"];
    let line;
    match wrapper {
        // `sh -c 'touch MARKER; exec quiver ...'`: the marker shows the server was started.
        Some(marker) => {
            line = format!("touch '{marker}'; exec '{quiver}' mcp serve --task-workers 0 --workspace '{ws}'");
            args.extend(["sh", "-c", line.as_str()]);
        }
        None => args.extend([quiver, "mcp", "serve", "--task-workers", "0", "--workspace", ws.as_str()]),
    }
    home.ok(&args);
}

#[test]
fn validate_starts_servers_names_the_broken_one_and_leaves_disabled_ones_alone() {
    let home = Home::new();
    add_quiver_server(&home, "self", None);
    home.ok(&["mcp", "add", "broken", "--", "sh", "-c", "echo 'cannot open the database' >&2; exit 3"]);
    let marker = home.path().join("off-started");
    add_quiver_server(&home, "off", Some(marker.to_str().unwrap()));
    home.ok(&["mcp", "disable", "off"]);

    let run = home.quiver(&["mcp", "validate"]);
    assert_eq!(run.code, 1, "a broken server fails validation:\n{}{}", run.out, run.err);
    let ok = line_of_status(&run.out, "ok", "self");
    assert!(ok.contains(" tools in ") && ok.contains(" ms"), "{ok}\n{}", run.out);
    assert!(
        run.out.lines().any(|l| l.starts_with("    mcp__self__read_file ") && l.contains("  [")),
        "tools under their runtime names:\n{}",
        run.out
    );
    let failed = line_of_status(&run.out, "FAILED", "broken");
    assert!(failed.contains("sh -c"), "{failed}");
    assert!(run.out.contains("cannot open the database"), "the server's own stderr says why:\n{}", run.out);
    assert!(line_of_status(&run.out, "disabled", "off").contains("not started"), "{}", run.out);
    assert!(run.out.contains("3 servers checked: 1 ok, 1 failed, 1 not started"), "{}", run.out);

    assert_eq!(home.quiver(&["mcp", "validate", "self"]).code, 0);
    assert_eq!(home.quiver(&["mcp", "validate", "broken"]).code, 1);
    let report = home.quiver(&["mcp", "validate", "--json"]);
    let report: Value = serde_json::from_str(&report.out).unwrap();
    assert_eq!(report["ok"], false);
    let broken = report["servers"].as_array().unwrap().iter().find(|s| s["server"] == "broken").unwrap();
    assert_eq!(broken["status"], "failed");
    assert!(broken["reason"].as_str().unwrap().contains("cannot open the database"), "{broken}");

    let tools = home.ok(&["mcp", "tools", "self"]);
    assert!(tools.lines().any(|l| l.starts_with("mcp__self__read_file ") && l.contains("  [")), "{tools}");
    assert!(tools.lines().any(|l| l.starts_with("mcp__self__tool_search  ")), "{tools}");
    let listed = home.json(&["mcp", "tools", "self", "--json", "--cached"]);
    assert_eq!(listed["from"], "cache", "validate's live list was cached");
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp__self__read_file" && t["server_name"] == "read_file")
    );
    let run = home.quiver(&["mcp", "tools", "broken"]);
    assert_eq!(run.code, 1);
    assert!(run.err.contains("`broken` failed to start"), "{}", run.err);

    // Disabled means never started, by any path.
    let run = home.quiver(&["mcp", "tools", "off"]);
    assert!(run.code != 0 && run.err.contains("disabled"), "{}", run.err);
    let discover = home.quiver(&["call", "mcp_discover", "--args", r#"{"server": "off"}"#]);
    assert!(discover.out.contains("disabled"), "{}{}", discover.out, discover.err);
    assert!(!marker.exists(), "a disabled server was started");
    home.ok(&["mcp", "enable", "off"]);
    home.ok(&["mcp", "validate", "off"]);
    assert!(marker.exists(), "an enabled one is started");
}

/// A stdio server starts in a PID namespace of its own: its `/proc` holds
/// its own tree only. Where user namespaces are refused it starts as before,
/// and the log says so once, however many servers start.
#[test]
fn servers_start_in_a_pid_namespace_of_their_own_or_the_log_says_why_not() {
    let home = Home::new();
    let quiver = env!("CARGO_BIN_EXE_quiver");
    let ws = home.workspace().display().to_string();
    let empty = home.path().join("empty-config");
    std::fs::create_dir_all(&empty).unwrap();
    let env = format!("QUIVER_CONFIG_DIR={}", empty.display());
    let counts = |name: &str| home.path().join(format!("{name}.procs"));
    for name in ["one", "two"] {
        let line = format!(
            "ls /proc | grep -c '^[0-9]' > '{}'; exec '{quiver}' mcp serve --task-workers 0 --workspace '{ws}'",
            counts(name).display()
        );
        home.ok(&["mcp", "add", name, "--env", &env, "--timeout", "120", "--", "sh", "-c", &line]);
    }
    let seen = |name: &str| -> usize { std::fs::read_to_string(counts(name)).unwrap().trim().parse().unwrap() };
    const WARNING: &str = "MCP servers start in quiver's own PID namespace";

    let run = home.quiver(&["mcp", "validate"]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    match &quiver_sandbox::probe().namespaces {
        Ok(()) => {
            // P1 (the namespace's init), sh, ls and grep.
            assert!(seen("one") <= 5 && seen("two") <= 5, "{} and {} processes in sight", seen("one"), seen("two"));
            assert!(!run.err.contains(WARNING), "{}", run.err);
        }
        Err(why) => quiver_testkit::require_or_skip("user namespaces", &why.to_string()),
    }

    let run = home.quiver_env(&[(quiver_sandbox::NO_USERNS_VAR, "1")], &["mcp", "validate"]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert_eq!(run.err.matches(WARNING).count(), 1, "{}", run.err);
    // The host's processes, this test's own among them.
    assert!(seen("one") > 5, "{} processes in sight", seen("one"));
}

#[test]
fn validate_fails_a_direct_server_whose_tool_names_are_taken() {
    let home = Home::new();
    // quiver's own tools under their own names clash with quiver's native ones.
    add_quiver_server(&home, "twin", None);
    home.ok(&[
        "mcp",
        "add",
        "twin",
        "--force",
        "--expose",
        "direct",
        "--env",
        &format!("QUIVER_CONFIG_DIR={}", home.path().join("twin-config").display()),
        "--",
        env!("CARGO_BIN_EXE_quiver"),
        "mcp",
        "serve",
        "--task-workers",
        "0",
    ]);
    let run = home.quiver(&["mcp", "validate"]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    let failed = line_of_status(&run.out, "FAILED", "twin");
    assert!(failed.contains("failed"), "{failed}");
    assert!(run.out.contains("read_file"), "the clash is named:\n{}", run.out);
}

fn line_of_status<'a>(out: &'a str, status: &str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().take(2).eq([status, name]))
        .unwrap_or_else(|| panic!("no `{status} {name}` line in:\n{out}"))
}

#[test]
fn a_projects_servers_are_listed_but_never_edited_or_started_unapproved() {
    let home = Home::new();
    home.write_config("[mcp_servers.mine]\ncommand = \"sh\"\nargs = [\"-c\", \"exit 0\"]\nenabled = false\n");
    let project = r#"{"mcpServers": {"proj": {"command": "sh", "args": ["-c", "touch started"]}}}"#;
    std::fs::write(home.workspace().join(".mcp.json"), project).unwrap();
    let list = home.ok(&["mcp", "list"]);
    let line = line_of(&list, "proj");
    assert!(line.contains(".mcp.json (project: `quiver mcp trust proj` to allow it)"), "{list}");
    let run = home.quiver(&["mcp", "disable", "proj"]);
    assert_eq!(run.code, 2);
    assert!(run.err.contains("defined by the project's") && run.err.contains(".mcp.json"), "{}", run.err);
    assert_eq!(std::fs::read_to_string(home.workspace().join(".mcp.json")).unwrap(), project);

    let run = home.quiver(&["mcp", "validate"]);
    assert_eq!(run.code, 0, "an unapproved project server is not a failure:\n{}{}", run.out, run.err);
    assert!(line_of_status(&run.out, "skipped", "proj").contains("quiver mcp trust proj"), "{}", run.out);
    assert_eq!(home.quiver(&["mcp", "validate", "proj"]).code, 1, "named, it must be checkable");
    assert!(!home.workspace().join("started").exists(), "an unapproved project server was started");
}

#[test]
fn validate_against_server_everything_when_installed() {
    let Some(js) = quiver_testkit::npm_package_or_skip("@modelcontextprotocol/server-everything/dist/index.js") else {
        return;
    };
    let home = Home::new();
    home.ok(&["mcp", "add", "everything", "--", "node", js.to_str().unwrap(), "stdio"]);
    let out = home.ok(&["mcp", "validate"]);
    assert!(out.contains("    mcp__everything__echo "), "{out}");
}

#[test]
fn mcp_help_lists_the_manager() {
    let home = Home::new();
    let help = home.ok(&["mcp", "--help"]);
    for command in ["add", "list", "get", "remove", "enable", "disable", "validate", "tools", "import", "serve"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(&format!("{command} "))), "{command}:\n{help}");
    }
    assert!(help.contains("mcp__NAME__<tool>") && help.contains("config.toml"), "{help}");
}
