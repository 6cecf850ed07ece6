#![allow(clippy::unwrap_used)]

use super::*;
use http::header::HeaderValue;

#[test]
fn a_cancellation_is_read_and_anything_else_is_not() {
    let body = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#;
    assert_eq!(cancelled_call(body), Some(rmcp::model::NumberOrString::Number(7)));
    let body = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#;
    assert_eq!(cancelled_call(body), Some(rmcp::model::NumberOrString::String("a".into())));
    for body in [
        &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notifications/cancelled"}}"#[..],
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":7}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#,
        b"notifications/cancelled",
    ] {
        assert_eq!(cancelled_call(body), None, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn only_hosts_rmcp_allows_by_default_pass() {
    let with_host = |host: &str| {
        let mut headers = http::HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        headers
    };
    for host in ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:3000", "LOCALHOST"] {
        assert!(loopback_host(&with_host(host)), "{host}");
    }
    for host in ["example.com", "127.0.0.2", "localhost.evil", "0.0.0.0:1"] {
        assert!(!loopback_host(&with_host(host)), "{host}");
    }
    assert!(!loopback_host(&http::HeaderMap::new()));
}
