//! Keeps a downstream server's notifications ahead of the answer they preceded.
//!
//! A server reports progress (or logs) and then answers; the client in front
//! of quiver must see them in that order, or it has stopped listening for
//! that call (over streamable HTTP the call's stream closes with its answer).
//! rmcp hands each notification to its handler as a task of its own, so the
//! answer can overtake the forward. This transport wrapper counts a
//! notification the gateway forwards at the moment it is read, in the order
//! the server sent it; the handler settles the count once forwarded, and a
//! call waits for the count to settle before it returns its answer
//! ([`Relay::forwards_settled`]). Each counted notification also gets a
//! ticket in read order, and its handler forwards it only on its turn
//! ([`Relay::forward_turn`]), so two of them (a progress report, then a log
//! message) reach the client in the order the server sent them.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{GetExtensions, JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::relay::Relay;

pub(crate) struct Ordered<T> {
    inner: T,
    relay: Arc<Relay>,
}

impl<T> Ordered<T> {
    pub(crate) fn new(inner: T, relay: Arc<Relay>) -> Self {
        Ordered { inner, relay }
    }
}

/// Whether the gateway forwards this notification upstream (and so counts it).
fn is_forwarded(notification: &ServerNotification) -> bool {
    matches!(
        notification,
        ServerNotification::ProgressNotification(_) | ServerNotification::LoggingMessageNotification(_)
    )
}

impl<T: Transport<RoleClient> + 'static> Transport<RoleClient> for Ordered<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let relay = Arc::clone(&self.relay);
        let received = self.inner.receive();
        async move {
            let mut message = received.await;
            if let Some(JsonRpcMessage::Notification(n)) = &mut message
                && is_forwarded(&n.notification)
            {
                // The ticket rides in the notification's extensions, which
                // rmcp hands to the handler's context.
                let ticket = relay.forward_started();
                n.notification.extensions_mut().insert(ticket);
            } else if let Some(JsonRpcMessage::Request(r)) = &mut message {
                // A server's own request (roots, sampling, elicitation) goes
                // up after the notifications read before it; it takes no
                // turn of its own, so what follows never waits on its answer.
                let after = relay.after_forwards();
                r.request.extensions_mut().insert(after);
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
