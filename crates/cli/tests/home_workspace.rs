//! A workspace that contains the user's home (`quiver` started in `~`): the
//! sandbox masks `~/.ssh`, `~/.aws`, `~/.netrc`, ... for commands, and the file
//! tools must not hand them to the model either (before, `read_file
//! .ssh/id_rsa` returned the key unasked while `cat` in the sandbox saw nothing).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn call(home: &Path, state: &Path, tool: &str, args: Value) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(["call", tool, "--mode", "agent", "--workspace"])
        .arg(home)
        .arg("--args")
        .arg(args.to_string())
        .current_dir(home)
        .env("HOME", home)
        .env("QUIVER_CONFIG_DIR", state.join("config"))
        .env("QUIVER_STATE_DIR", state.join("state"))
        .env("QUIVER_CACHE_DIR", state.join("cache"))
        .env("QUIVER_LOG", "error")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text} / {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn file_tools_do_not_read_credentials_in_a_home_workspace() {
    let (home, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let home_path = home.path().canonicalize().unwrap();
    for (path, text) in [
        (".ssh/id_ed25519", "PRIVATE-KEY-MATERIAL\n"),
        (".aws/credentials", "aws_secret_access_key = PRIVATE-KEY-MATERIAL\n"),
        (".netrc", "machine h password PRIVATE-KEY-MATERIAL\n"),
        (".config/gh/hosts.yml", "oauth_token: PRIVATE-KEY-MATERIAL\n"),
        // A tool's token under a name no list carries.
        (".codex/auth.json", "{\"token\": \"PRIVATE-KEY-MATERIAL\"}\n"),
        ("notes.txt", "ordinary\n"),
    ] {
        let p = home_path.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let attempts = [
        ("read_file", json!({"path": ".ssh/id_ed25519"})),
        ("read_file", json!({"path": format!("{}/.aws/credentials", home_path.display())})),
        ("read_file", json!({"path": ".netrc"})),
        ("read_file", json!({"path": ".config/gh/hosts.yml"})),
        ("read_file", json!({"path": ".codex/auth.json"})),
        ("grep_files", json!({"pattern": "PRIVATE", "path": ".codex"})),
        ("grep_files", json!({"pattern": "PRIVATE", "path": ".ssh"})),
        ("grep_files", json!({"pattern": "PRIVATE", "path": ".config"})),
        ("grep_files", json!({"pattern": "PRIVATE", "glob": "**/.ssh/*"})),
        ("file_search", json!({"query": "id_ed25519", "path": ".ssh"})),
        ("list_dir", json!({"path": ".aws"})),
    ];
    for (tool, args) in attempts {
        let result = call(&home_path, state.path(), tool, args.clone());
        let text = result["content"].to_string();
        assert!(!text.contains("PRIVATE-KEY-MATERIAL"), "{tool} {args} read a credential: {text}");
        // A walk from a directory that is not itself a secret (`.config`, the
        // root) is no error: it leaves the secret out silently.
        let walk = tool == "grep_files" && args.get("path").is_none_or(|p| p == ".config");
        if !walk {
            assert_eq!(result["is_error"], true, "{tool} {args}: {result}");
            assert!(text.contains("credentials"), "{tool} {args}: {text}");
        }
    }
    // Everything else in the home is the workspace's, as before.
    let ok = call(&home_path, state.path(), "read_file", json!({"path": "notes.txt"}));
    assert_eq!(ok["is_error"], false, "{ok}");
    assert!(ok["content"].to_string().contains("ordinary"));
}
