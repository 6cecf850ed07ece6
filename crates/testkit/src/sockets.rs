//! Reads a socket option back from the socket an HTTP client library opened
//! inside this process, without the library handing the socket out: the
//! TCP_NODELAY tests of quiver's outgoing connections (reqwest keeps its
//! sockets private).
//!
//! The socket is found in `/proc/self/fd` by its addresses and duplicated with
//! `pidfd_getfd` on our own process: a new descriptor the kernel hands us, so
//! no unsafe borrow of a descriptor number another owner may close.

use std::net::SocketAddr;
use std::os::fd::OwnedFd;

use rustix::net::SocketAddrAny;

/// `TCP_NODELAY` of this process's TCP socket connected to `server` (the
/// client side: its peer is `server`, its own address is not), or `Err` saying
/// why none could be read. With several such sockets, every one must agree.
pub fn client_nodelay(server: SocketAddr) -> Result<bool, String> {
    let sockets = client_sockets(server)?;
    let mut values = Vec::new();
    for socket in &sockets {
        values.push(rustix::net::sockopt::tcp_nodelay(socket).map_err(|e| format!("getsockopt(TCP_NODELAY): {e}"))?);
    }
    match values.as_slice() {
        [] => Err(format!("no socket of this process is connected to {server}")),
        [first, rest @ ..] if rest.iter().all(|v| v == first) => Ok(*first),
        _ => Err(format!("the sockets connected to {server} disagree: {values:?}")),
    }
}

/// Duplicates of this process's sockets whose peer is `server`, excluding the
/// server's own accepted ends (whose local address is `server`).
fn client_sockets(server: SocketAddr) -> Result<Vec<OwnedFd>, String> {
    let me = rustix::process::pidfd_open(rustix::process::getpid(), rustix::process::PidfdFlags::empty())
        .map_err(|e| format!("pidfd_open on this process: {e}"))?;
    let entries = std::fs::read_dir("/proc/self/fd").map_err(|e| format!("reading /proc/self/fd: {e}"))?;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let is_socket = std::fs::read_link(entry.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:"));
        let Some(number) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else { continue };
        if !is_socket {
            continue;
        }
        // Closed since the listing: not ours to look at any more.
        let Ok(fd) = rustix::process::pidfd_getfd(&me, number, rustix::process::PidfdGetfdFlags::empty()) else {
            continue;
        };
        let peer = rustix::net::getpeername(&fd).ok().flatten().and_then(as_inet);
        let local = rustix::net::getsockname(&fd).ok().and_then(as_inet);
        if peer == Some(server) && local != Some(server) {
            found.push(fd);
        }
    }
    Ok(found)
}

fn as_inet(addr: SocketAddrAny) -> Option<SocketAddr> {
    SocketAddr::try_from(addr).ok()
}
