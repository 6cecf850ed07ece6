//! Measures what a `connect(2)` costs inside the namespace sandbox: python
//! connects 2,000 times to a Unix socket of its own and 2,000 times to a
//! TCP port of its own on loopback, unconfined and sandboxed, printing µs
//! per connect (every connect of a sandboxed command is answered by
//! quiver's supervisor, see `connect_supervisor`).
//!
//! `cargo run --release -p quiver-sandbox --example connects [-- ROUNDS]`
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use quiver_sandbox::{Sandbox, SandboxMechanism, SandboxOptions, SandboxPolicy, probe};

const SCRIPT: &str = r#"
import socket, time
n = 2000
srv = socket.socket(socket.AF_UNIX); srv.bind("/tmp/bench-connects.sock"); srv.listen(4096)
t = time.perf_counter()
for _ in range(n):
    c = socket.socket(socket.AF_UNIX); c.connect("/tmp/bench-connects.sock"); srv.accept()[0].close(); c.close()
unix = (time.perf_counter() - t) / n * 1e6
tcp = socket.socket(); tcp.bind(("127.0.0.1", 0)); tcp.listen(4096)
t = time.perf_counter()
for _ in range(n):
    c = socket.socket(); c.connect(tcp.getsockname()); tcp.accept()[0].close(); c.close()
print(f"unix {unix:.1f} us  tcp {(time.perf_counter() - t) / n * 1e6:.1f} us")
"#;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    assert!(probe().namespaces.is_ok(), "needs the namespace sandbox");
    let tmp = tempfile::tempdir().unwrap();
    for round in 1..=rounds {
        let _ = std::fs::remove_file("/tmp/bench-connects.sock");
        let plain = Command::new("python3").arg("-c").arg(SCRIPT).current_dir(tmp.path()).output().unwrap();
        let _ = std::fs::remove_file("/tmp/bench-connects.sock");
        let options = SandboxOptions { mechanism: Some(SandboxMechanism::Namespaces), ..Default::default() };
        let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![tmp.path().to_path_buf()] };
        let sb = Sandbox::with_options(policy, false, options).unwrap();
        let mut cmd = Command::new("/usr/bin/python3");
        cmd.arg("-c").arg(SCRIPT).current_dir(tmp.path());
        sb.apply_to(&mut cmd).unwrap();
        let boxed = cmd.output().unwrap();
        println!(
            "round {round}: unconfined {}   sandboxed {}{}",
            String::from_utf8_lossy(&plain.stdout).trim(),
            String::from_utf8_lossy(&boxed.stdout).trim(),
            String::from_utf8_lossy(&boxed.stderr).trim()
        );
    }
}
