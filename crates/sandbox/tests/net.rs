//! Network confinement: no AF_INET/AF_INET6 socket without the grant; Unix
//! sockets always.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;

use quiver_sandbox::SandboxPolicy;

use crate::support::*;

fn hostile(port: u16, py: &str) -> Vec<String> {
    vec![
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}"),
        format!("exec 3<>/dev/udp/127.0.0.1/{port}"),
        format!("{py} -c 'import socket; socket.socket()'"),
        format!("{py} -c 'import socket; socket.socket(socket.AF_INET6)'"),
        format!("{py} -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'"),
        format!("{py} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"),
        format!("{py} -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'"),
        format!("{py} -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)'"),
    ]
}

#[test]
fn no_network_without_the_grant_and_network_with_it() {
    if !sandbox_available("no_network_without_the_grant_and_network_with_it") {
        return;
    }
    let Some(py) = python() else {
        eprintln!("skipping: no python3 binary");
        return;
    };
    let py = py.display().to_string();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let l = layout();
    for policy in [SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] }, SandboxPolicy::Full] {
        let Some(sb) = sandbox("net", policy.clone(), false, &[]) else { return };
        let namespaced = sb.mechanism() == quiver_sandbox::SandboxMechanism::Namespaces;
        // In a network namespace, making a socket is allowed (loopback works
        // inside); reaching the host's listener is what must fail.
        let cases = if namespaced {
            vec![
                format!("exec 3<>/dev/tcp/127.0.0.1/{port}"),
                format!("{py} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"),
                format!("{py} -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)'"),
            ]
        } else {
            hostile(port, &py)
        };
        let mut held = 0;
        for cmd in &cases {
            let out = run(Some(&sb), &l.ws, cmd);
            assert!(!out.status.success(), "{policy:?}: `{cmd}` reached the network");
            held += 1;
        }
        eprintln!("{policy:?} without network: tried {}, held {held}", cases.len());
        // Local tools keep socketpairs; Unix sockets are theirs only where
        // no host socket is reachable by path (the namespace sandbox).
        let script = if namespaced {
            format!("{py} -c 'import socket; a, b = socket.socketpair(); socket.socket(socket.AF_UNIX)'")
        } else {
            format!("{py} -c 'import socket; a, b = socket.socketpair()'")
        };
        let out = run(Some(&sb), &l.ws, &script);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    let policy = SandboxPolicy::WorkspaceWrite { writable_roots: vec![l.ws.clone()] };
    let Some(sb) = sandbox("net-granted", policy, true, &[]) else { return };
    let out = run(Some(&sb), &l.ws, &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out).trim(), "connected");
    listener.set_nonblocking(false).unwrap();
    let _ = listener.accept().unwrap();
}

/// `network_allow`: a command without network reaches a listed host through
/// the proxy its `HTTPS_PROXY` names, and nothing else: not the listed host
/// directly, not a host the list lacks, not a plain-HTTP request.
#[test]
fn network_allow_reaches_a_listed_host_through_the_proxy_and_nothing_else() {
    let l = layout();
    let Some(py) = python() else {
        assert!(std::env::var("QUIVER_REQUIRE_SANDBOX").as_deref() != Ok("1"), "this test needs /usr/bin/python3");
        eprintln!("SKIPPED: needs /usr/bin/python3");
        return;
    };
    // The "registry": answers what it reads, upper-cased, on the host's loopback.
    let registry = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = registry.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut peer in registry.incoming().flatten() {
            let mut buf = [0u8; 4];
            if peer.read_exact(&mut buf).is_ok() {
                let _ = peer.write_all(&buf.map(|b| b.to_ascii_uppercase()));
            }
        }
    });
    let options =
        quiver_sandbox::SandboxOptions { network_allow: vec![format!("localhost:{port}")], ..Default::default() };
    let Some(sb) = ns_sandbox("network_allow", &l.ws, options) else { return };
    let script = format!(
        r#"
import os, socket
out = []
proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)
def via_proxy(request, label):
    s = socket.create_connection(("127.0.0.1", int(proxy[1])), timeout=10)
    s.sendall(request.encode())
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        byte = s.recv(1)
        if not byte:
            break
        head += byte
    status = head.split(b" ")[1].decode() if head else "none"
    out.append(label + "-" + status)
    if status == "200":
        s.sendall(b"ping")
        out.append(label + "-" + s.recv(4).decode())
via_proxy("CONNECT localhost:{port} HTTP/1.1\r\nHost: x\r\n\r\n", "listed")
via_proxy("CONNECT example.org:443 HTTP/1.1\r\nHost: x\r\n\r\n", "unlisted")
via_proxy("GET http://localhost:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n", "plain")
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5)
    out.append("direct-reached")
except OSError as e:
    out.append("direct-" + type(e).__name__)
print(" ".join(out))
"#
    );
    let mut cmd = std::process::Command::new(&py);
    cmd.arg("-c").arg(&script).current_dir(&l.ws).stdin(std::process::Stdio::null());
    sb.apply_to(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    assert_eq!(
        stdout(&out).trim(),
        "listed-200 listed-PING unlisted-403 plain-405 direct-ConnectionRefusedError",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
