use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

use super::{RetryPolicy, retry_after};

fn headers(value: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
    h
}

#[test]
fn retry_after_reads_seconds_and_http_dates() {
    assert_eq!(retry_after(&headers("7")), Some(Duration::from_secs(7)));
    assert_eq!(retry_after(&headers("0.5")), Some(Duration::from_millis(500)));
    let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
    let wait = retry_after(&headers(&later)).unwrap();
    assert!(wait > Duration::from_secs(27) && wait <= Duration::from_secs(30), "{wait:?}");
    let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30));
    assert_eq!(retry_after(&headers(&past)), Some(Duration::ZERO));
    assert_eq!(retry_after(&headers("soon")), None);
    assert_eq!(retry_after(&headers("-3")), None);
    assert_eq!(retry_after(&HeaderMap::new()), None);
    let mut both = headers("20");
    both.insert("retry-after-ms", HeaderValue::from_static("1500"));
    assert_eq!(retry_after(&both), Some(Duration::from_millis(1500)));
}

#[test]
fn backoff_grows_is_capped_and_jittered() {
    let policy = RetryPolicy {
        max_attempts: 10,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(1),
        max_total: Duration::from_secs(60),
    };
    for _ in 0..50 {
        let first = policy.backoff(1);
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100), "{first:?}");
        let third = policy.backoff(3);
        assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400), "{third:?}");
        let late = policy.backoff(40);
        assert!(late >= Duration::from_millis(500) && late <= Duration::from_secs(1), "{late:?}");
    }
}

/// Read back from the client's own socket while its request is open.
#[tokio::test]
async fn model_clients_set_nodelay() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = super::client_builder(&format!("http://{addr}")).build().unwrap();
    let request = tokio::spawn(async move { client.get(format!("http://{addr}/v1/models")).send().await });
    let (mut accepted, _) = listener.accept().await.unwrap();
    // The connector sets the option after the connect completes: once the
    // request arrives it has.
    let mut head = [0u8; 16];
    tokio::io::AsyncReadExt::read_exact(&mut accepted, &mut head).await.unwrap();
    assert_eq!(quiver_testkit::sockets::client_nodelay(addr), Ok(true));
    request.abort();
}
