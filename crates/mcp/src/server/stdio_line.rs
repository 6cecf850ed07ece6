//! The transport to the client in front over stdio: rmcp's service reads and
//! writes typed messages through it, except for a result the handler passes
//! on verbatim (a directly exposed server's `tools/call` answer, see
//! [`VerbatimResults`]), which goes out as the bytes that server wrote.
//!
//! rmcp's types cannot carry bytes: the handler hands rmcp a placeholder
//! result naming a slot, and [`StdioLine::send`] writes the slot's text in
//! its place; a `tools/list` answer likewise gets such a server's entries as
//! it wrote them. Each message goes out in one write.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite};

use super::stdio_calls::{DirectCalls, Reply, Respond, Taken};
use super::stdio_stateless::StdioStateless;
use super::verbatim::{VerbatimResults, encode, result_line};
use crate::lines::{LineReader, LineWriter, MAX_LINE, QueuedLines, Read, flush_all};

pub struct StdioLine<R, W> {
    read: LineReader<R>,
    write: Arc<LineWriter<W>>,
    /// The same writer, for answers queued where a server's output is read.
    out: Arc<dyn QueuedLines>,
    verbatim: Arc<VerbatimResults>,
    /// `tools/call` answered beside rmcp's loop, once armed, and how its
    /// answers are written.
    calls: Arc<DirectCalls>,
    respond: Respond,
    /// Servers' pipes that relayed calls were queued on, flushed once the
    /// lines read together are handled.
    to_flush: Vec<Arc<dyn QueuedLines>>,
    /// Stateless (2026-07-28) calls relayed beside rmcp, when set.
    stateless: Option<StdioStateless>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Send + Unpin + 'static> StdioLine<R, W> {
    pub fn new(read: R, write: W, verbatim: Arc<VerbatimResults>, calls: Arc<DirectCalls>) -> Self {
        let write = Arc::new(LineWriter::new(write));
        let respond: Respond = {
            let (write, verbatim) = (Arc::clone(&write), Arc::clone(&verbatim));
            Arc::new(move |reply| {
                let line = match reply {
                    Reply::Message(message) => encode(&message, &verbatim),
                    Reply::Result { id, text } => Ok(result_line(&id, text.as_bytes())),
                    Reply::Line(line) => Ok(line),
                };
                let write = Arc::clone(&write);
                Box::pin(async move {
                    if let Err(e) = write_message(&write, line).await {
                        tracing::debug!(error = %e, "could not write a tool call's answer to the client");
                    }
                })
            })
        };
        let out = Arc::clone(&write) as Arc<dyn QueuedLines>;
        StdioLine {
            read: LineReader::new(read),
            write,
            out,
            verbatim,
            calls,
            respond,
            to_flush: Vec::new(),
            stateless: None,
        }
    }

    /// Offers stateless calls to `lane` before rmcp reads them.
    pub(crate) fn with_stateless(mut self, lane: StdioStateless) -> Self {
        self.stateless = Some(lane);
        self
    }
}

/// Writes one message as one line (see [`encode`]), with any others ready.
async fn write_message<W: AsyncWrite + Unpin>(
    write: &LineWriter<W>,
    line: Result<Vec<u8>, serde_json::Error>,
) -> Result<(), std::io::Error> {
    write.write_line(&line?).await
}

impl<R, W> Transport<RoleServer> for StdioLine<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = encode(&item, &self.verbatim);
        let write = Arc::clone(&self.write);
        async move { write_message(&write, line).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Calls read together go down together, before anything waits
            // for more input.
            if !self.to_flush.is_empty() && !self.read.has_line() {
                flush_all(&mut self.to_flush);
            }
            let line = match self.read.next_read().await {
                Some(Read::Line(line)) => line,
                Some(Read::Oversized(head)) => {
                    // Skipped unread: a request in it would never be answered.
                    if let Some(answer) = super::bad_request::oversized_line(head, MAX_LINE) {
                        self.out.queue_with(&mut |buf| buf.extend_from_slice(&answer));
                        self.to_flush.push(Arc::clone(&self.out));
                    }
                    continue;
                }
                None => {
                    flush_all(&mut self.to_flush);
                    self.calls.cancel_all();
                    if let Some(stateless) = &self.stateless {
                        stateless.close();
                    }
                    return None;
                }
            };
            match self.calls.take_line(line, &self.respond, &self.out) {
                Taken::Queued(writer) => self.to_flush.push(writer),
                Taken::Yes => {}
                Taken::No if self.stateless.as_ref().is_some_and(|s| s.take(line, &self.respond)) => {}
                Taken::No => match crate::lines::parse(line) {
                    Some(message) => {
                        if let Some(message) = self.calls.take(message, &self.respond) {
                            // rmcp may take a while with it: nothing waits meanwhile.
                            flush_all(&mut self.to_flush);
                            return Some(message);
                        }
                    }
                    None => {
                        // rmcp would skip it; a client that sent a request
                        // would wait for ever
                        if let Some(answer) = super::bad_request::unreadable_line(line) {
                            self.out.queue_with(&mut |buf| buf.extend_from_slice(&answer));
                            self.to_flush.push(Arc::clone(&self.out));
                        }
                    }
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.shutdown().await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rmcp::model::{
        CallToolResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, NumberOrString, ServerResult,
    };

    use super::*;
    use crate::server::verbatim::{MAX_SLOTS, SLOT_KEY};

    fn response(result: CallToolResult) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::String("a\"b".into()),
            result: ServerResult::CallToolResult(result),
        })
    }

    #[test]
    fn a_placeholder_goes_out_as_the_verbatim_text_once() {
        let verbatim = VerbatimResults::default();
        let text = Arc::new(
            r#"{"content":[{"type":"text","text":"x","annotations":{"priority":1}}],"execution":{}}"#.to_string(),
        );
        let placeholder = verbatim.placeholder(Arc::clone(&text));
        let line = encode(&response(placeholder.clone()), &verbatim).unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            format!("{{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{text}}}\n")
        );
        // Taken: a second write of the same placeholder is an ordinary result.
        let again = String::from_utf8(encode(&response(placeholder), &verbatim).unwrap()).unwrap();
        assert!(again.contains(SLOT_KEY), "{again}");
    }

    #[test]
    fn answers_never_written_do_not_pile_up() {
        let verbatim = VerbatimResults::default();
        let first = verbatim.placeholder(Arc::new("{}".into()));
        for _ in 0..MAX_SLOTS + 10 {
            let _ = verbatim.placeholder(Arc::new("{}".into()));
        }
        assert_eq!(verbatim.slot_count(), MAX_SLOTS);
        let line = String::from_utf8(encode(&response(first), &verbatim).unwrap()).unwrap();
        assert!(line.contains(SLOT_KEY), "the oldest slot went first: {line}");
    }

    #[test]
    fn other_messages_are_serialized_as_rmcp_would() {
        let verbatim = VerbatimResults::default();
        let message = response(CallToolResult::success(Vec::new()));
        let line = encode(&message, &verbatim).unwrap();
        let mut expected = serde_json::to_vec(&message).unwrap();
        expected.push(b'\n');
        assert_eq!(line, expected);
    }
}
