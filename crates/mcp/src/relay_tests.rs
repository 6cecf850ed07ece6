#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Relay;

#[tokio::test(flavor = "current_thread")]
async fn an_answer_waits_for_the_notifications_read_before_it() {
    let relay = Arc::new(Relay::default());
    // Nothing read: no wait.
    relay.forwards_settled().await;

    relay.forward_started();
    relay.forward_started();
    let done = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (relay, done) = (Arc::clone(&relay), Arc::clone(&done));
        tokio::spawn(async move {
            relay.forwards_settled().await;
            done.store(true, Ordering::SeqCst);
        })
    };
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!done.load(Ordering::SeqCst), "answered before both notifications were forwarded");
    relay.forward_done();
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!done.load(Ordering::SeqCst), "answered with one notification still unforwarded");
    relay.forward_done();
    waiter.await.unwrap();
    assert!(done.load(Ordering::SeqCst));
    // A stray extra `done` does not underflow into a wait that never ends.
    relay.forward_done();
    relay.forwards_settled().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_notification_never_handled_holds_answers_up_only_once() {
    let relay = Relay::default();
    relay.forward_started();
    let start = std::time::Instant::now();
    relay.forwards_settled().await;
    assert!(start.elapsed() >= super::FORWARD_BOUND);
    // The count was cleared: the next answer does not wait.
    let start = std::time::Instant::now();
    relay.forwards_settled().await;
    assert!(start.elapsed() < super::FORWARD_BOUND);
}

/// A real client-side peer (rmcp's `Peer` cannot be built otherwise): a
/// server with default answers and a client with no capabilities, joined by
/// an in-memory pipe. The services are returned to keep the peer alive.
async fn client_peer() -> (rmcp::service::Peer<rmcp::RoleServer>, impl Sized) {
    use rmcp::ServiceExt;
    #[derive(Clone)]
    struct Quiet;
    impl rmcp::ServerHandler for Quiet {}
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move { Quiet.serve(ours).await.unwrap() });
    let client = ().serve(theirs).await.unwrap();
    let server = server.await.unwrap();
    (server.peer().clone(), (server, client))
}

fn upstream(client: u64, peer: &rmcp::service::Peer<rmcp::RoleServer>, id: i64) -> super::Upstream {
    super::Upstream {
        client,
        peer: peer.clone(),
        request_id: rmcp::model::NumberOrString::Number(id),
        progress_token: None,
        input: None,
    }
}

fn routed(relay: &Relay) -> Result<(), String> {
    // The test client declares no capability: a request that reaches the
    // capability check was routed to one client.
    match relay.upstream_for("srv", "roots/list", |c| c.roots.is_some()) {
        Ok(_) => Ok(()),
        Err(e) if e.message.contains("did not declare") => Ok(()),
        Err(e) => Err(e.message.to_string()),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_servers_request_never_reaches_a_client_whose_call_it_may_not_be() {
    let (peer_a, _a) = client_peer().await;
    let (peer_b, _b) = client_peer().await;
    let relay = Arc::new(Relay::default());

    let err = routed(&relay).unwrap_err();
    assert!(err.contains("no MCP client"), "{err}");

    // Two calls of one client: its own.
    let first = relay.enter(upstream(1, &peer_a, 10), None);
    let second = relay.enter(upstream(1, &peer_a, 11), None);
    routed(&relay).unwrap();
    assert_eq!(
        relay.log_target().map(|u| (u.client, u.request_id)),
        Some((1, rmcp::model::NumberOrString::Number(11)))
    );

    // Another client's call joins: nobody can say whose a request is.
    let other = relay.enter(upstream(2, &peer_b, 1), None);
    let err = routed(&relay).unwrap_err();
    assert!(err.contains("more than one client"), "{err}");
    assert!(relay.log_target().is_none(), "a log message went to a client it may not belong to");

    // The first client's calls end: the other client's is the only one left.
    drop(first);
    drop(second);
    routed(&relay).unwrap();
    assert_eq!(relay.log_target().map(|u| u.client), Some(2));
    drop(other);
    // A message handled just after the last call ended could be either
    // client's (both clients' calls ended moments ago): it goes to neither.
    assert!(relay.log_target().is_none(), "a late log message went to a client it may not belong to");
}

#[tokio::test(flavor = "current_thread")]
async fn a_log_message_handled_after_its_calls_answer_reaches_that_client() {
    let (peer, _a) = client_peer().await;
    let relay = Arc::new(Relay::default());
    drop(relay.enter(upstream(1, &peer, 10), None));
    drop(relay.enter(upstream(1, &peer, 11), None));
    assert_eq!(
        relay.log_target().map(|u| (u.client, u.request_id)),
        Some((1, rmcp::model::NumberOrString::Number(11)))
    );
}
