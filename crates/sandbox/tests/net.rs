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
