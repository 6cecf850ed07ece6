use super::*;

/// Each canned answer is a whole HTTP response: its `Content-Length` counts
/// exactly the body that follows the head, so a client reads it and stops.
#[test]
fn canned_refusals_declare_their_body_length() {
    for response in [FULL_RESPONSE, ADDRESS_BUSY_RESPONSE, EVICTED_RESPONSE] {
        let text = std::str::from_utf8(response).unwrap_or_default();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        let declared =
            head.lines().find_map(|line| line.strip_prefix("Content-Length: ")).and_then(|n| n.parse::<usize>().ok());
        assert_eq!(declared, Some(body.len()), "{text}");
        assert!(head.contains("\r\nRetry-After: 1\r\n"), "{text}");
    }
}
