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
