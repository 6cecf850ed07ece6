use super::*;

#[test]
fn entries_name_a_host_its_subdomains_and_a_port() {
    let exact = Allowed::parse("Crates.io").unwrap();
    assert!(exact.matches("crates.io", 443));
    assert!(!exact.matches("static.crates.io", 443));
    assert!(!exact.matches("crates.io", 80));
    let sub = Allowed::parse("*.crates.io").unwrap();
    assert!(sub.matches("static.crates.io", 443));
    assert!(!sub.matches("crates.io", 443), "the wildcard is for subdomains");
    assert!(!sub.matches("evilcrates.io", 443));
    assert!(Allowed::parse("registry.local:8443").unwrap().matches("registry.local", 8443));
    for bad in ["", "*.", "http://crates.io", "crates.io:0", "crates.io:x", "a b", ".io"] {
        assert!(Allowed::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_machines_own_networks_are_local() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "172.16.0.1",
        "169.254.169.254",
        "0.0.0.0",
        "::1",
        "fd00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
    ] {
        assert!(is_local(ip.parse().unwrap()), "{ip}");
    }
    for ip in ["151.101.1.1", "2a04:4e42::1"] {
        assert!(!is_local(ip.parse().unwrap()), "{ip}");
    }
}

#[test]
fn only_connect_is_tunnelled() {
    assert_eq!(destination("CONNECT crates.io:443 HTTP/1.1\r\nHost: x").unwrap(), ("crates.io".into(), 443));
    assert!(destination("GET http://crates.io/ HTTP/1.1").unwrap_err().starts_with("HTTP/1.1 405"));
    assert!(destination("CONNECT crates.io HTTP/1.1").unwrap_err().starts_with("HTTP/1.1 400"));
}

/// A listed destination is tunnelled both ways; another is refused with 403.
#[test]
fn a_listed_destination_is_tunnelled_and_another_refused() {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut peer in server.incoming().flatten() {
            let mut buf = [0u8; 4];
            if peer.read_exact(&mut buf).is_ok() {
                let _ = peer.write_all(&buf.map(|b| b.to_ascii_uppercase()));
            }
        }
    });
    let proxy = Proxy::start(vec![Allowed::parse(&format!("localhost:{port}")).unwrap()]).unwrap();
    let ask = |target: &str| -> (String, TcpStream) {
        let mut c = TcpStream::connect(proxy.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(c, "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8];
        while !head.ends_with(b"\r\n\r\n") && c.read(&mut byte).unwrap() == 1 {
            head.push(byte[0]);
        }
        (String::from_utf8_lossy(&head).lines().next().unwrap_or("").to_string(), c)
    };
    let (status, mut tunnel) = ask(&format!("localhost:{port}"));
    assert_eq!(status, "HTTP/1.1 200 Connection Established");
    tunnel.write_all(b"ping").unwrap();
    let mut answer = [0u8; 4];
    tunnel.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"PING");
    let (status, _) = ask(&format!("127.0.0.1:{port}"));
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let (status, _) = ask("example.org:443");
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
}
