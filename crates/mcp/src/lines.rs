//! Newline-delimited JSON-RPC, read a line at a time: what both of quiver's
//! own stdio transports (to a downstream server, and to the client in front)
//! read with. They keep each line's bytes, which rmcp's transport does not.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// rmcp's own bound on a line (16 MiB, as its HTTP transport's SSE events):
/// a peer that never sends a newline must not grow a buffer forever.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

pub struct LineReader<R> {
    read: BufReader<R>,
    /// A line read in part: rmcp polls `receive` inside a `select!`, so a read
    /// can be cancelled and resumes here.
    line: Vec<u8>,
    /// Set while the rest of an oversized line is being skipped.
    discarding: bool,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(read: R) -> Self {
        Self::with_max(read, MAX_LINE)
    }

    pub fn with_max(read: R, max: usize) -> Self {
        LineReader { read: BufReader::with_capacity(64 * 1024, read), line: Vec::new(), discarding: false, max }
    }

    /// The next whole line, without its `\n` (or `\r\n`); `None` at the end
    /// of the stream or on a read error. Lines over the bound are skipped.
    pub async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let room = (self.max + 1).saturating_sub(self.line.len()) as u64;
            let read = (&mut self.read).take(room).read_until(b'\n', &mut self.line).await;
            match read {
                Ok(0) if self.line.is_empty() => return None,
                Ok(_) if self.line.last() == Some(&b'\n') => {
                    let mut line = std::mem::take(&mut self.line);
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if std::mem::take(&mut self.discarding) {
                        continue;
                    }
                    return Some(line);
                }
                Ok(0) => {
                    // The peer closed mid-line: what it wrote is its last message.
                    let line = std::mem::take(&mut self.line);
                    return (!std::mem::take(&mut self.discarding)).then_some(line);
                }
                Ok(_) => {
                    if self.line.len() > self.max {
                        if !self.discarding {
                            tracing::warn!(
                                max = self.max,
                                "an MCP peer wrote a line over the size bound; it is skipped"
                            );
                        }
                        self.discarding = true;
                        self.line.clear();
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "reading from an MCP peer failed");
                    return None;
                }
            }
        }
    }
}

/// A line as a JSON-RPC message, or `None` for what is not one (a stray log
/// line, a blank line), which rmcp's own transport skips too.
pub fn parse<T: serde::de::DeserializeOwned>(line: &[u8]) -> Option<T> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match serde_json::from_slice(line) {
        Ok(message) => Some(message),
        Err(e) => {
            tracing::debug!(error = %e, "a line that is not a JSON-RPC message was skipped");
            None
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn lines(input: &'static [u8], max: usize) -> Vec<Vec<u8>> {
        let mut reader = LineReader::with_max(input, max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_split_on_newlines_and_lose_carriage_returns() {
        assert_eq!(lines(b"a\r\nbb\n\nlast", 100).await, vec![b"a".to_vec(), b"bb".to_vec(), vec![], b"last".to_vec()]);
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_and_the_next_one_read() {
        assert_eq!(lines(b"0123456789abcdef\nok\n", 8).await, vec![b"ok".to_vec()]);
        assert_eq!(lines(b"short\n0123456789abcdef", 8).await, vec![b"short".to_vec()]);
    }
}
