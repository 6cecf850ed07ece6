//! A client transport that answers `server/discover` itself, for a server
//! that serves 2026-07-28's stateless requests but not that one method.
//!
//! mcp-proxy 0.6.0 (built with `protocol-2026-07-28`) answers every request
//! carrying 2026-07-28's `_meta` (`tools/list`, `tools/call`) and answers
//! `server/discover` with -32601. rmcp's 2026-07-28 client asks
//! `server/discover` once before anything else, so without this it cannot
//! open a connection there at all. The answer stands in for that one setup
//! request; every measured request still goes to the server.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, DiscoverResult, JsonRpcMessage, ProtocolVersion, ServerCapabilities,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;

pub struct NoDiscover<T> {
    inner: T,
    /// Answers made here, received before or between the server's.
    answers: tokio::sync::mpsc::UnboundedSender<ServerJsonRpcMessage>,
    answered: tokio::sync::mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
}

impl<T: Transport<RoleClient>> NoDiscover<T> {
    pub fn new(inner: T) -> Self {
        let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
        NoDiscover { inner, answers, answered }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for NoDiscover<T> {
    type Error = T::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        use futures::FutureExt;
        if let JsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
        {
            let capabilities = ServerCapabilities::builder().enable_tools().build();
            let result = DiscoverResult::new(vec![ProtocolVersion::V_2026_07_28], capabilities);
            let answer = ServerJsonRpcMessage::response(ServerResult::DiscoverResult(result), request.id.clone());
            // The receiver lives in `self`: the send cannot fail.
            let _ = self.answers.send(answer);
            return futures::future::ready(Ok(())).left_future();
        }
        self.inner.send(item).right_future()
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        tokio::select! {
            biased;
            Some(answer) = self.answered.recv() => Some(answer),
            message = self.inner.receive() => message,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
