//! A stdio server's stderr, kept as a bounded tail for error messages.
//!
//! The pipe is always drained (a server blocked on a full stderr pipe would look
//! hung), but only the last [`CAPACITY`] bytes are kept, so a server that floods
//! stderr costs a fixed amount of memory.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

use tokio::io::AsyncReadExt;

pub const CAPACITY: usize = 16 * 1024;

#[derive(Debug, Default)]
pub struct StderrTail {
    buf: Mutex<VecDeque<u8>>,
    /// Bumped each time a reader reaches EOF, so an error path can wait for a
    /// dying process's last words before quoting them.
    closed: tokio::sync::Notify,
    eof: std::sync::atomic::AtomicBool,
}

impl StderrTail {
    pub fn new() -> Arc<Self> {
        Arc::new(StderrTail::default())
    }

    pub fn push(&self, bytes: &[u8]) {
        let mut buf = self.buf.lock();
        // Only the last CAPACITY bytes of a huge chunk can survive anyway.
        let bytes = &bytes[bytes.len().saturating_sub(CAPACITY)..];
        let overflow = (buf.len() + bytes.len()).saturating_sub(CAPACITY);
        let drop_front = overflow.min(buf.len());
        buf.drain(..drop_front);
        buf.extend(bytes);
    }

    /// Forgets the previous process's output (a new process is starting).
    pub fn clear(&self) {
        self.buf.lock().clear();
        self.eof.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Waits (bounded) until the current reader has hit EOF.
    pub async fn wait_closed(&self, max: std::time::Duration) {
        let notified = self.closed.notified();
        if self.eof.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let _ = tokio::time::timeout(max, notified).await;
    }

    /// The last `max_lines` lines (at most `max_bytes`), lossily decoded.
    pub fn tail(&self, max_lines: usize, max_bytes: usize) -> String {
        let buf = self.buf.lock();
        let bytes: Vec<u8> = buf.iter().copied().collect();
        drop(buf);
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim_end();
        let lines: Vec<&str> = text.lines().collect();
        let mut out = lines[lines.len().saturating_sub(max_lines)..].join("\n");
        if out.len() > max_bytes {
            let mut cut = out.len() - max_bytes;
            while !out.is_char_boundary(cut) {
                cut += 1;
            }
            out = format!("…{}", &out[cut..]);
        }
        out
    }

    /// Drains `stderr` into this tail until EOF (the process exited).
    pub fn spawn_reader<R>(self: &Arc<Self>, server: String, mut stderr: R)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        let tail = Arc::clone(self);
        tokio::spawn(async move {
            let mut chunk = vec![0u8; 8192];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => {
                        tail.eof.store(true, std::sync::atomic::Ordering::SeqCst);
                        tail.closed.notify_waiters();
                        break;
                    }
                    Ok(n) => {
                        let bytes = &chunk[..n];
                        tracing::trace!(server = %server, stderr = %String::from_utf8_lossy(bytes), "MCP server stderr");
                        tail.push(bytes);
                    }
                }
            }
        });
    }
}

/// `"\nstderr (last lines):\n..."`, or nothing when the server said nothing.
pub fn describe(tail: &StderrTail) -> String {
    let text = tail.tail(20, 2000);
    if text.is_empty() { String::new() } else { format!("\nserver stderr (last lines):\n{text}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail() {
        let t = StderrTail::default();
        for i in 0..10_000 {
            t.push(format!("line {i}\n").as_bytes());
        }
        assert!(t.buf.lock().len() <= CAPACITY);
        assert_eq!(t.tail(2, 1000), "line 9998\nline 9999");
    }

    #[test]
    fn a_huge_chunk_is_cut() {
        let t = StderrTail::default();
        t.push(&vec![b'x'; CAPACITY * 3]);
        t.push(b"\nend");
        assert_eq!(t.tail(1, 100), "end");
        let long = t.tail(5, 10);
        assert!(long.starts_with('…') && long.ends_with("end"), "{long}");
    }
}
