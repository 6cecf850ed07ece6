//! Where a stdio server starts. A server of the user's own config used to
//! start in quiver's working directory, usually the workspace, which a
//! sandboxed command writes unasked: `npx -y <server>` there ran the package
//! a model had planted in `node_modules`, unconfined and with the token the
//! config gave the server. It now starts in the user's home unless its config
//! names a `cwd`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use quiver_mcp::config::Transport;

use crate::client_support::*;

/// A server that records its working directory, then serves as the test server.
fn recording(name: &str, out: &std::path::Path) -> quiver_mcp::config::ServerConfig {
    let script = format!("pwd -P > '{}'; exec '{TEST_SERVER}'", out.display());
    stdio_server(name, "sh", &["-c", &script], &[])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_server_never_starts_in_quivers_working_directory() {
    let home = dirs::home_dir().filter(|h| h.is_dir()).unwrap_or_else(|| PathBuf::from("/")).canonicalize().unwrap();
    let here = std::env::current_dir().unwrap().canonicalize().unwrap();
    assert_ne!(home, here, "the test needs a working directory other than the home");
    let (cache, outs, chosen) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let plain = recording("plain", &outs.path().join("plain"));
    let mut with_cwd = recording("with_cwd", &outs.path().join("with_cwd"));
    if let Transport::Stdio { cwd, .. } = &mut with_cwd.transport {
        *cwd = Some(chosen.path().to_path_buf());
    }
    let m = manager(vec![plain, with_cwd], cache.path());
    for name in ["plain", "with_cwd"] {
        m.server(name).unwrap().call("pid", None).await.unwrap();
    }
    let started = |name: &str| PathBuf::from(std::fs::read_to_string(outs.path().join(name)).unwrap().trim());
    assert_eq!(started("plain"), home, "a user server without `cwd` starts in the home");
    assert_eq!(started("with_cwd"), chosen.path().canonicalize().unwrap(), "a configured `cwd` is kept");
    m.shutdown().await;
}
