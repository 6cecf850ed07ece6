use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::manage::NewTransport;

const COMMENTED: &str = "\
# my quiver settings
model = \"deepseek-chat\" # the default

# servers I use every day
[mcp_servers.docs] # the docs server
command = \"docs-mcp\"   # on PATH
args = [\"--port\", \"0\"]

# keep this last
[sandbox]
scrub_env = [\"CORP_*\"]
";

fn file_with(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn edit(path: &Path, f: impl FnOnce(&mut UserConfig)) {
    let mut config = UserConfig::open(path).unwrap();
    f(&mut config);
    config.save().unwrap();
}

#[test]
fn add_disable_enable_remove_gives_the_same_bytes_back() {
    let (_dir, path) = file_with(COMMENTED);
    let mut server = NewServer::stdio("fs", "npx", vec!["-y".into(), "server-fs".into()]);
    if let NewTransport::Stdio { env, .. } = &mut server.transport {
        env.insert("LOG".into(), "1".into());
    }
    edit(&path, |c| assert_eq!(c.add(&server, false).unwrap(), Added::New));
    let added = std::fs::read_to_string(&path).unwrap();
    assert!(added.starts_with(COMMENTED.split("# keep this last").next().unwrap()), "{added}");
    assert!(
        added.contains("[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"server-fs\"]\nenv = { LOG = \"1\" }\n"),
        "{added}"
    );
    assert!(added.ends_with("# keep this last\n[sandbox]\nscrub_env = [\"CORP_*\"]\n"), "{added}");
    let read = UserConfig::open(&path).unwrap().config().unwrap();
    assert_eq!(read.servers.keys().collect::<Vec<_>>(), ["docs", "fs"]);

    edit(&path, |c| assert!(c.set_enabled("docs", false).unwrap()));
    let disabled = std::fs::read_to_string(&path).unwrap();
    assert!(disabled.contains("args = [\"--port\", \"0\"]\nenabled = false\n"), "{disabled}");
    assert!(!UserConfig::open(&path).unwrap().config().unwrap().servers["docs"].enabled);
    // Disabling twice changes nothing.
    let mut again = UserConfig::open(&path).unwrap();
    assert!(!again.set_enabled("docs", false).unwrap());
    assert!(!again.save().unwrap());

    edit(&path, |c| assert!(c.set_enabled("docs", true).unwrap()));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), added);
    edit(&path, |c| c.remove("fs").unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), COMMENTED);
}

#[test]
fn a_protocol_is_written_as_the_reader_takes_it() {
    let (_dir, path) = file_with(COMMENTED);
    let mut server = NewServer::http("next", "http://127.0.0.1:1/mcp");
    server.protocol = Some(crate::config::Protocol::Auto);
    edit(&path, |c| assert_eq!(c.add(&server, false).unwrap(), Added::New));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("[mcp_servers.next]\nurl = \"http://127.0.0.1:1/mcp\"\nprotocol = \"auto\"\n"), "{text}");
    let read = UserConfig::open(&path).unwrap().config().unwrap();
    assert_eq!(read.servers["next"].protocol, crate::config::Protocol::Auto);
}

#[test]
fn a_commented_enabled_line_is_set_in_place() {
    let (_dir, path) = file_with("[mcp_servers.a]\ncommand = \"a\"\nenabled = false # flaky since May\n");
    edit(&path, |c| assert!(c.set_enabled("a", true).unwrap()));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "[mcp_servers.a]\ncommand = \"a\"\nenabled = true # flaky since May\n"
    );
}

#[test]
fn force_replaces_in_place_and_keeps_the_comment_above() {
    let (_dir, path) = file_with(COMMENTED);
    let server = NewServer::http("docs", "https://docs.example/mcp");
    let mut config = UserConfig::open(&path).unwrap();
    let err = config.add(&server, false).unwrap_err();
    assert!(matches!(err, ManageError::Exists { .. }) && err.to_string().contains("--force"), "{err}");
    assert_eq!(config.add(&server, true).unwrap(), Added::Replaced);
    config.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("# servers I use every day\n[mcp_servers.docs] # the docs server\nurl = \"https://docs.example/mcp\"\n\n# keep this last"),
        "{text}"
    );
}

#[test]
fn an_inline_servers_table_gets_an_inline_entry() {
    let (_dir, path) = file_with("mcp_servers = { a = { command = \"a\" } }\n");
    edit(&path, |c| {
        c.add(&NewServer::http("b", "http://127.0.0.1:1/mcp"), false).unwrap();
        c.set_enabled("a", false).unwrap();
    });
    let config = UserConfig::open(&path).unwrap().config().unwrap();
    assert!(!config.servers["a"].enabled);
    assert_eq!(config.servers["b"].transport.kind(), "http");
}

#[test]
fn a_new_file_is_private_and_an_old_one_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/config.toml");
    edit(&path, |c| assert_eq!(c.add(&NewServer::stdio("a", "a", vec![]), false).unwrap(), Added::New));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "[mcp_servers.a]\ncommand = \"a\"\n");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    edit(&path, |c| assert!(c.set_enabled("a", false).unwrap()));
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
    // No temporary file is left beside it.
    let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["config.toml"]);
}

#[test]
fn a_symlinked_config_is_written_where_it_points() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles/quiver.toml");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "# mine\n").unwrap();
    let link = dir.path().join("config.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    edit(&link, |c| assert_eq!(c.add(&NewServer::stdio("a", "a", vec![]), false).unwrap(), Added::New));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    // A comment after everything stays after everything (toml_edit keeps
    // the file's trailing text last), and leaves with nothing on removal.
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "[mcp_servers.a]\ncommand = \"a\"\n# mine\n");
    edit(&link, |c| c.remove("a").unwrap());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "# mine\n");
}

#[test]
fn a_file_that_is_not_toml_names_line_and_column_and_is_left_alone() {
    let text = "# fine\n[mcp_servers.a]\ncommand = \"a\nargs = []\n";
    let (_dir, path) = file_with(text);
    let err = UserConfig::open(&path).err().unwrap();
    let message = err.to_string();
    assert!(matches!(err, ManageError::Syntax { line: 3, .. }), "{message}");
    assert!(message.starts_with(&format!("{}:3:", path.display())), "{message}");
    assert!(message.contains("not changed"), "{message}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn an_edit_quiver_could_not_read_back_is_not_written() {
    let (_dir, path) = file_with(COMMENTED);
    let mut config = UserConfig::open(&path).unwrap();
    config.add(&NewServer::http("bad", "ftp://example.com"), false).unwrap();
    let err = config.save().unwrap_err();
    assert!(err.to_string().contains("not an http:// or https:// URL"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), COMMENTED);

    // Two names that become the same tool prefix.
    let (_dir, path) = file_with("[mcp_servers.\"a.b\"]\ncommand = \"x\"\n");
    let mut config = UserConfig::open(&path).unwrap();
    config.add(&NewServer::stdio("a_b", "y", vec![]), false).unwrap();
    let err = config.save().unwrap_err();
    assert!(err.to_string().contains("mcp__a_b__"), "{err}");
}

#[test]
fn a_broken_server_can_still_be_removed() {
    let (_dir, path) = file_with("[mcp_servers.ok]\ncommand = \"a\"\n\n[mcp_servers.broken]\ncomand = \"typo\"\n");
    let mut config = UserConfig::open(&path).unwrap();
    assert!(config.config().unwrap_err().to_string().contains("did you mean `command`"));
    config.remove("broken").unwrap();
    config.save().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "[mcp_servers.ok]\ncommand = \"a\"\n");
}

#[test]
fn a_change_made_meanwhile_is_not_overwritten() {
    let (_dir, path) = file_with(COMMENTED);
    let mut config = UserConfig::open(&path).unwrap();
    config.remove("docs").unwrap();
    std::fs::write(&path, "# edited by hand\n").unwrap();
    assert!(matches!(config.save().unwrap_err(), ManageError::Changed { .. }));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# edited by hand\n");
}

#[test]
fn unknown_names_say_what_is_there() {
    let (_dir, path) = file_with(COMMENTED);
    let mut config = UserConfig::open(&path).unwrap();
    let err = config.remove("nope").unwrap_err().to_string();
    assert!(err.contains("no MCP server named `nope`") && err.contains("`docs`"), "{err}");
    let err = config.set_enabled("nope", true).unwrap_err().to_string();
    assert!(err.contains("`nope`"), "{err}");
    let err = config.add(&NewServer::stdio("bad name", "x", vec![]), false).unwrap_err().to_string();
    assert!(err.contains("not a usable server name"), "{err}");
}
