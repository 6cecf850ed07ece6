//! Newline-delimited JSON-RPC, read a line at a time: what both of quiver's
//! own stdio transports (to a downstream server, and to the client in front)
//! read with. They keep each line's bytes, which rmcp's transport does not.
//! Both write with [`LineWriter`], which joins lines that are ready at once
//! into one write.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

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

    /// Whether a whole line is already read and waiting: the next
    /// [`Self::next_line`] returns without reading. A reader flushes what it
    /// queued in reply (see [`QueuedLines`]) once this is false, so the
    /// replies to lines read together go out in one write.
    pub fn has_line(&self) -> bool {
        memchr::memchr(b'\n', self.read.buffer()).is_some()
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

/// `line` without a leading UTF-8 byte order mark (some peers write one).
pub fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(line)
}

/// A line as a JSON-RPC message, or `None` for what is not one (a stray log
/// line, a blank line), which rmcp's own transport skips too.
pub fn parse<T: serde::de::DeserializeOwned>(line: &[u8]) -> Option<T> {
    let line = without_bom(line);
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

/// Writes whole lines to a pipe, joining the lines that are ready while a
/// write is under way into the next write.
///
/// With several calls in flight their answers (or requests) become ready in
/// bursts; one write per line cost a system call each here, and the peer a
/// read each (a downstream server behind quiver spent more CPU per call than
/// when called directly). The first writer writes; whoever has a line while
/// it writes appends it and returns; the writer goes on until nothing is
/// left. A lone line is written at once, with no task or channel between.
pub struct LineWriter<W> {
    pending: Mutex<Pending>,
    out: tokio::sync::Mutex<Option<W>>,
}

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// A writer is draining `lines`.
    writing: bool,
}

fn lock(m: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hands the writer's role back if the writer stops early: a failed write,
/// or its future dropped mid-write (a call timed out or was cancelled). The
/// lines still pending then go out with the next writer rather than never.
struct WriterRole<'a>(&'a Mutex<Pending>);

impl Drop for WriterRole<'_> {
    fn drop(&mut self) {
        lock(self.0).writing = false;
    }
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    pub fn new(out: W) -> Self {
        LineWriter { pending: Mutex::new(Pending::default()), out: tokio::sync::Mutex::new(Some(out)) }
    }

    /// Writes `line` (which ends in `\n`), now or with the write under way.
    /// An error is the write's that failed, for whoever was writing.
    pub async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        {
            let mut pending = lock(&self.pending);
            pending.lines.extend_from_slice(line);
            if pending.writing {
                return Ok(());
            }
            pending.writing = true;
        }
        let role = WriterRole(&self.pending);
        let mut out = self.out.lock().await;
        loop {
            let lines = {
                let mut pending = lock(&self.pending);
                if pending.lines.is_empty() {
                    // Handed back under the lock: a line appended after
                    // this finds no writer and writes itself (and no
                    // later drop may take the role from that writer).
                    pending.writing = false;
                    drop(pending);
                    std::mem::forget(role);
                    return Ok(());
                }
                std::mem::take(&mut pending.lines)
            };
            let Some(out) = out.as_mut() else {
                lock(&self.pending).lines.clear();
                return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the pipe is closed"));
            };
            out.write_all(&lines).await?;
            out.flush().await?;
        }
    }

    /// Appends `line` (which ends in `\n`) to what goes out with the next
    /// write, without writing: [`QueuedLines::flush`] (or any later write)
    /// sends it.
    fn queue_line(&self, line: &[u8]) {
        lock(&self.pending).lines.extend_from_slice(line);
    }

    /// Closes the pipe (after any write under way); later writes fail.
    pub async fn shutdown(&self) -> std::io::Result<()> {
        match self.out.lock().await.take() {
            Some(mut out) => out.shutdown().await,
            None => Ok(()),
        }
    }
}

/// A writer that takes lines now and writes them together later: a reader
/// that answers several lines read in one read (a burst of calls going down,
/// a burst of answers coming back) queues each reply and flushes once, so the
/// peer gets one write and one wake-up instead of one per line.
pub trait QueuedLines: Send + Sync {
    /// Appends `line` (ending in `\n`); nothing is written yet.
    fn queue(&self, line: &[u8]);
    /// Starts writing what was queued. Never waits: the write goes as far
    /// as the pipe takes it now, and a task finishes it if the pipe is full.
    fn flush(self: Arc<Self>);
}

impl<W: AsyncWrite + Send + Unpin + 'static> QueuedLines for LineWriter<W> {
    fn queue(&self, line: &[u8]) {
        self.queue_line(line);
    }

    fn flush(self: Arc<Self>) {
        {
            let pending = lock(&self.pending);
            // Nothing queued, or a writer at work that will take it.
            if pending.lines.is_empty() || pending.writing {
                return;
            }
        }
        let mut write = Box::pin(async move {
            if let Err(e) = self.write_line(b"").await {
                tracing::debug!(error = %e, "could not write queued lines");
            }
        });
        // Polled once here: a pipe with room takes the lines at once, with no
        // task. A future is free to be polled again by another task (with its
        // own waker), so a full pipe's write is finished by one.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if write.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(write);
        }
    }
}

/// Flushes each writer once (the readers collect one per reply; most are the same writer).
pub fn flush_all(writers: &mut Vec<Arc<dyn QueuedLines>>) {
    let mut flushed: Vec<*const ()> = Vec::with_capacity(writers.len());
    for writer in writers.drain(..) {
        let at = Arc::as_ptr(&writer).cast::<()>();
        if !flushed.contains(&at) {
            flushed.push(at);
            writer.flush();
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
    async fn lines_written_together_arrive_whole_and_in_order() {
        let (write, read) = tokio::io::duplex(64);
        let writer = std::sync::Arc::new(LineWriter::new(write));
        let mut tasks = Vec::new();
        for task in 0..8 {
            let writer = std::sync::Arc::clone(&writer);
            tasks.push(tokio::spawn(async move {
                for n in 0..50 {
                    writer.write_line(format!("{task}:{n:03}:{}\n", "x".repeat(40)).as_bytes()).await.unwrap();
                }
            }));
        }
        let reader = tokio::spawn(async move {
            let mut reader = LineReader::new(read);
            let mut got = Vec::new();
            while let Some(line) = reader.next_line().await {
                got.push(String::from_utf8(line).unwrap());
            }
            got
        });
        for task in tasks {
            task.await.unwrap();
        }
        writer.shutdown().await.unwrap();
        let got = reader.await.unwrap();
        assert_eq!(got.len(), 400);
        for task in 0..8 {
            let mine: Vec<&String> = got.iter().filter(|l| l.starts_with(&format!("{task}:"))).collect();
            let expected: Vec<String> = (0..50).map(|n| format!("{task}:{n:03}:{}", "x".repeat(40))).collect();
            assert_eq!(mine, expected.iter().collect::<Vec<_>>(), "task {task}'s lines, whole and in order");
        }
        assert!(writer.write_line(b"late\n").await.is_err(), "a write after shutdown fails");
    }

    #[tokio::test]
    async fn a_writer_dropped_mid_write_leaves_the_next_one_to_write() {
        // A pipe with room for one short line: the second write blocks.
        let (write, mut read) = tokio::io::duplex(8);
        let writer = LineWriter::new(write);
        writer.write_line(b"first\n").await.unwrap();
        let stuck = tokio::time::timeout(std::time::Duration::from_millis(50), writer.write_line(b"second-line\n"));
        assert!(stuck.await.is_err(), "the pipe is full: the write waits");
        let mut buf = vec![0; 64];
        let n = tokio::io::AsyncReadExt::read(&mut read, &mut buf).await.unwrap();
        assert!(n > 0);
        // The role was handed back: this write goes out (not appended for a writer that is gone).
        let reading = tokio::spawn(async move {
            let mut all = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut read, &mut all).await;
            all
        });
        writer.write_line(b"third\n").await.unwrap();
        writer.shutdown().await.unwrap();
        let rest = String::from_utf8(reading.await.unwrap()).unwrap();
        assert!(rest.ends_with("third\n"), "{rest:?}");
    }

    #[tokio::test]
    async fn queued_lines_go_out_together_when_flushed_even_into_a_full_pipe() {
        // Room for 16 bytes: the flush cannot finish at once, and a task finishes it.
        let (write, read) = tokio::io::duplex(16);
        let writer = Arc::new(LineWriter::new(write));
        for n in 0..3 {
            QueuedLines::queue(&*writer, format!("line {n} {}\n", "x".repeat(20)).as_bytes());
        }
        let mut reader = LineReader::new(read);
        let early = tokio::time::timeout(std::time::Duration::from_millis(100), reader.next_line()).await;
        assert!(early.is_err(), "written before the flush");
        Arc::clone(&writer).flush();
        for n in 0..3 {
            let line = reader.next_line().await.unwrap();
            assert_eq!(String::from_utf8(line).unwrap(), format!("line {n} {}", "x".repeat(20)));
        }
        assert!(!reader.has_line());
        // A flush with nothing queued writes nothing.
        Arc::clone(&writer).flush();
        writer.write_line(b"last\n").await.unwrap();
        assert_eq!(reader.next_line().await.unwrap(), b"last");
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_and_the_next_one_read() {
        assert_eq!(lines(b"0123456789abcdef\nok\n", 8).await, vec![b"ok".to_vec()]);
        assert_eq!(lines(b"short\n0123456789abcdef", 8).await, vec![b"short".to_vec()]);
    }
}
