//! Network by destination: a command in the namespace sandbox without
//! network reaches the hosts the user's own config lists
//! (`[sandbox] network_allow`), through an HTTPS (`CONNECT`) proxy, and
//! nothing else.
//!
//! The command's network namespace has only loopback. Its `HTTPS_PROXY`
//! names `127.0.0.1:PORT`, and the `connect` supervisor (`connect_supervisor`)
//! answers a connect to exactly that address with a socket of quiver's own,
//! connected to this proxy on the host's loopback, put in place of the
//! command's. The proxy tunnels a `CONNECT host:port` only when the host is
//! listed, and never to a loopback, private or link-local address unless
//! the entry itself names one (a listed name that resolves to the host's own
//! services or a cloud metadata address is refused). Plain-HTTP requests
//! are refused with the reason: registries speak HTTPS.
//!
//! Entries: `crates.io` (that host, port 443), `*.crates.io` (its
//! subdomains, port 443), `host:port` for another port. Only the user's own
//! config is read: a cloned project's cannot widen where its commands reach.

use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The longest a client may take to send its `CONNECT` head, and the
/// longest an upstream connect may take.
const HEAD_WAIT: Duration = Duration::from_secs(10);
const CONNECT_WAIT: Duration = Duration::from_secs(10);
const HEAD_MAX: usize = 8 * 1024;

/// One allowed destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Allowed {
    /// Lowercase host; with `subdomains`, the suffix after `*.`.
    host: String,
    subdomains: bool,
    port: u16,
}

impl Allowed {
    /// Parses one `[sandbox] network_allow` entry.
    pub(crate) fn parse(entry: &str) -> Result<Allowed, String> {
        let bad = || {
            format!(
                "`[sandbox] network_allow` entry `{entry}` must be a host name (`crates.io`), its subdomains \
                 (`*.crates.io`) or either with a port (`registry.local:8443`)"
            )
        };
        let entry = entry.trim().to_ascii_lowercase();
        let (host, port) = match entry.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host.to_string(), port.parse::<u16>().map_err(|_| bad())?),
            _ => (entry.clone(), 443),
        };
        let (host, subdomains) = match host.strip_prefix("*.") {
            Some(rest) => (rest.to_string(), true),
            None => (host, false),
        };
        let valid = !host.is_empty()
            && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !host.starts_with('.')
            && !host.ends_with('.');
        if !valid || port == 0 {
            return Err(bad());
        }
        Ok(Allowed { host, subdomains, port })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        port == self.port
            && if self.subdomains {
                host.strip_suffix(&self.host).is_some_and(|head| head.len() > 1 && head.ends_with('.'))
            } else {
                host == self.host
            }
    }

    /// Whether the entry names a host of the machine's own networks itself
    /// (an address literal, `localhost`): then reaching it is what was asked.
    fn names_a_local_address(&self) -> bool {
        self.host == "localhost" || self.host.parse::<IpAddr>().is_ok()
    }
}

/// A running proxy; it stops when dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on the host's loopback, on a port of its own.
    pub(crate) fn start(allowed: Vec<Allowed>) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let allowed = Arc::new(allowed);
        let stopping = stop.clone();
        std::thread::Builder::new().name("quiver-egress".into()).stack_size(128 * 1024).spawn(move || {
            for client in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let allowed = allowed.clone();
                let spawned = std::thread::Builder::new()
                    .name("quiver-egress-tunnel".into())
                    .stack_size(128 * 1024)
                    .spawn(move || tunnel(client, &allowed));
                if let Err(e) = spawned {
                    tracing::warn!(%e, "sandbox proxy: cannot start a tunnel");
                }
            }
        })?;
        Ok(Proxy { addr, stop })
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Answers one client: reads its `CONNECT`, checks the destination, and
/// relays bytes both ways until either side closes.
fn tunnel(mut client: TcpStream, allowed: &[Allowed]) {
    let _ = client.set_read_timeout(Some(HEAD_WAIT));
    let Some((head, rest)) = read_head(&mut client) else { return };
    let target = match destination(&head) {
        Ok(target) => target,
        Err(refusal) => {
            let _ = client.write_all(refusal.as_bytes());
            return;
        }
    };
    let (host, port) = target;
    let upstream = match open_upstream(&host, port, allowed) {
        Ok(upstream) => upstream,
        Err(refusal) => {
            tracing::info!(host, port, "sandbox proxy: refused: {refusal}");
            let _ = client.write_all(response(403, &refusal).as_bytes());
            return;
        }
    };
    let _ = client.set_read_timeout(None);
    if client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").is_err() {
        return;
    }
    let (Ok(mut up_write), Ok(mut client_read)) = (upstream.try_clone(), client.try_clone()) else { return };
    if !rest.is_empty() && up_write.write_all(&rest).is_err() {
        return;
    }
    let upward = std::thread::Builder::new().name("quiver-egress-up".into()).stack_size(64 * 1024).spawn(move || {
        let _ = std::io::copy(&mut client_read, &mut up_write);
        let _ = up_write.shutdown(Shutdown::Write);
    });
    let (mut up_read, mut client_write) = (upstream, client);
    let _ = std::io::copy(&mut up_read, &mut client_write);
    let _ = client_write.shutdown(Shutdown::Write);
    if let Ok(upward) = upward {
        let _ = upward.join();
    }
}

/// The request head and whatever came after it in the same reads.
fn read_head(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    loop {
        let n = client.read(&mut chunk).ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Some((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() > HEAD_MAX {
            let _ = client.write_all(response(431, "the request head is too long").as_bytes());
            return None;
        }
    }
}

/// `CONNECT host:port`'s destination, or the whole response refusing it.
fn destination(head: &str) -> Result<(String, u16), String> {
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !method.eq_ignore_ascii_case("CONNECT") {
        return Err(response(
            405,
            "quiver's sandbox proxy only tunnels HTTPS (CONNECT): use an https:// URL, or ask for network access",
        ));
    }
    let parsed = target.rsplit_once(':').and_then(|(host, port)| {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        Some((host.to_ascii_lowercase(), port.parse::<u16>().ok()?))
    });
    parsed.ok_or_else(|| response(400, "CONNECT needs host:port"))
}

/// A connection to `host:port` when an entry allows it.
fn open_upstream(host: &str, port: u16, allowed: &[Allowed]) -> Result<TcpStream, String> {
    let Some(entry) = allowed.iter().find(|a| a.matches(host, port)) else {
        return Err(format!(
            "{host}:{port} is not in the sandbox's `[sandbox] network_allow`; add it to your own config, or ask \
             for network access"
        ));
    };
    let addrs: Vec<SocketAddr> =
        (host, port).to_socket_addrs().map_err(|e| format!("cannot resolve {host}: {e}"))?.collect();
    let mut last = format!("{host} has no address");
    for addr in addrs {
        if !entry.names_a_local_address() && is_local(addr.ip()) {
            last = format!("{host} resolves to {}, an address of this machine's own networks", addr.ip());
            continue;
        }
        match TcpStream::connect_timeout(&addr, CONNECT_WAIT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("connecting to {addr}: {e}"),
        }
    }
    Err(last)
}

/// Loopback, private, link-local (cloud metadata), unspecified or
/// unique-local: never reached through a name.
fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_unspecified() || v4.is_broadcast()
        }
        IpAddr::V6(v6) => {
            let segments = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || (segments[0] & 0xfe00) == 0xfc00
                || (segments[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| is_local(IpAddr::V4(v4)))
        }
    }
}

fn response(status: u16, why: &str) -> String {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let body = format!("{why}\n");
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
