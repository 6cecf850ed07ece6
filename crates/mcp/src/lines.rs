//! Newline-delimited JSON-RPC, read a line at a time: what both of quiver's
//! own stdio transports (to a downstream server, and to the client in front)
//! read with. They keep each line's bytes, which rmcp's transport does not.
//! Both write with [`LineWriter`], which joins lines that are ready at once
//! into one write.

use parking_lot::Mutex;
use std::future::Future;
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// rmcp's own bound on a line (16 MiB, as its HTTP transport's SSE events):
/// a peer that never sends a newline must not grow a buffer forever.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

pub struct LineReader<R> {
    read: BufReader<R>,
    /// A line read in part: rmcp polls `receive` inside a `select!`, so a read
    /// can be cancelled and resumes here. Also a whole line that did not sit
    /// in the buffer at once, while it is lent out.
    line: Vec<u8>,
    /// Set while the rest of an oversized line is being skipped.
    discarding: bool,
    max: usize,
    /// What the line last returned still occupies (it is lent out until the
    /// next read, which frees it).
    lent: Lent,
}

/// What [`LineReader::next_read`] read.
pub enum Read<'a> {
    /// A whole line (or the last, unterminated one), as `next_line` returns it.
    Line(&'a [u8]),
    /// The first bytes of a line over the bound, whose rest is being skipped.
    Oversized(&'a [u8]),
}

/// Where the line [`LineReader::next_line`] last returned lives.
#[derive(Clone, Copy)]
enum Lent {
    Nothing,
    /// The first `n` bytes of the read buffer (the line and its newline).
    Buffer(usize),
    /// `line`.
    Line,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(read: R) -> Self {
        Self::with_max(read, MAX_LINE)
    }

    pub fn with_max(read: R, max: usize) -> Self {
        LineReader {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            discarding: false,
            max,
            lent: Lent::Nothing,
        }
    }

    /// Whether a whole line is already read and waiting: the next
    /// [`Self::next_line`] returns without reading. A reader flushes what it
    /// queued in reply (see [`QueuedLines`]) once this is false, so the
    /// replies to lines read together go out in one write.
    pub fn has_line(&self) -> bool {
        let skip = match self.lent {
            Lent::Buffer(n) => n,
            Lent::Nothing | Lent::Line => 0,
        };
        let mut rest = &self.read.buffer()[skip..];
        // The first newline of a line being skipped ends that line: the
        // answer to it must not wait for the line after.
        if self.discarding {
            match memchr::memchr(b'\n', rest) {
                Some(end) => rest = &rest[end + 1..],
                None => return false,
            }
        }
        memchr::memchr(b'\n', rest).is_some()
    }

    /// Frees what the line last returned occupies.
    fn release(&mut self) {
        match std::mem::replace(&mut self.lent, Lent::Nothing) {
            Lent::Buffer(n) => std::pin::Pin::new(&mut self.read).consume(n),
            Lent::Line => {
                self.line.clear();
                // One long line must not hold its memory for the session.
                if self.line.capacity() > SPARE_MAX {
                    self.line = Vec::new();
                }
            }
            Lent::Nothing => {}
        }
    }

    /// The next whole line, without its `\n` (or `\r\n`), lent until the
    /// next call; `None` at the end of the stream or on a read error. Lines
    /// over the bound are skipped.
    ///
    /// A line that sits whole in the read buffer (nearly every line of a
    /// busy pipe) is lent from the buffer itself: no copy and no allocation
    /// per line, which a relayed call paid twice (its request and its answer).
    pub async fn next_line(&mut self) -> Option<&[u8]> {
        while let Read::Oversized(_) = self.next_read().await? {}
        Some(self.lent_line())
    }

    /// The line [`Self::next_read`] last lent, read again from where it lives
    /// (returning it from inside `next_line`'s loop would keep `self`
    /// borrowed across the loop).
    fn lent_line(&self) -> &[u8] {
        match self.lent {
            Lent::Buffer(n) => without_cr(&self.read.buffer()[..n - 1]),
            Lent::Line => match self.line.strip_suffix(b"\n") {
                Some(line) => without_cr(line),
                None => &self.line,
            },
            Lent::Nothing => &[],
        }
    }

    /// [`Self::next_line`], telling of a line over the bound as soon as it is
    /// seen, with its first `max` bytes: a server answers a request it cannot
    /// read, or its client waits for ever. The next call goes on skipping
    /// the rest of that line.
    pub async fn next_read(&mut self) -> Option<Read<'_>> {
        self.release();
        loop {
            if self.line.is_empty() && !self.discarding {
                if let Some(end) = memchr::memchr(b'\n', self.read.buffer())
                    && end <= self.max
                {
                    self.lent = Lent::Buffer(end + 1);
                    return Some(Read::Line(without_cr(&self.read.buffer()[..end])));
                }
                if self.read.buffer().is_empty() {
                    match self.read.fill_buf().await {
                        Ok([]) => return None,
                        Ok(_) => continue,
                        Err(e) => {
                            tracing::debug!(error = %e, "reading from an MCP peer failed");
                            return None;
                        }
                    }
                }
            }
            let room = (self.max + 1).saturating_sub(self.line.len()) as u64;
            let read = (&mut self.read).take(room).read_until(b'\n', &mut self.line).await;
            match read {
                Ok(0) if self.line.is_empty() => return None,
                Ok(_) if self.line.last() == Some(&b'\n') => {
                    if std::mem::take(&mut self.discarding) {
                        self.line.clear();
                        continue;
                    }
                    self.lent = Lent::Line;
                    let end = self.line.len() - 1;
                    return Some(Read::Line(without_cr(&self.line[..end])));
                }
                Ok(0) => {
                    // The peer closed mid-line: what it wrote is its last message.
                    if std::mem::take(&mut self.discarding) {
                        self.line.clear();
                        return None;
                    }
                    self.lent = Lent::Line;
                    return Some(Read::Line(&self.line));
                }
                Ok(_) => {
                    if self.line.len() > self.max {
                        if !std::mem::replace(&mut self.discarding, true) {
                            tracing::warn!(
                                max = self.max,
                                "an MCP peer wrote a line over the size bound; it is skipped"
                            );
                            // Lent (cleared by the next call, which goes on skipping).
                            self.lent = Lent::Line;
                            return Some(Read::Oversized(&self.line[..self.max]));
                        }
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

fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `line` without a leading UTF-8 byte order mark (some peers write one).
pub fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(line)
}

/// The string a JSON string's text holds (`None` for any other value):
/// borrowed when it has no escapes, as ids nearly never do.
pub fn json_string(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    match raw.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) {
        Some(plain) if !plain.contains('\\') => Some(std::borrow::Cow::Borrowed(plain)),
        _ => serde_json::from_str::<String>(raw).ok().map(std::borrow::Cow::Owned),
    }
}

/// Appends `text` to `out` as a JSON string (quoted and escaped as serde
/// writes it).
pub fn write_json_string(out: &mut Vec<u8>, text: &str) {
    // Writing a `str` into a `Vec` cannot fail: there is no error to pass on.
    let _ = serde_json::to_writer(out, text);
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
    out: tokio::sync::Mutex<Out<W>>,
}

/// The writer's side: the pipe (`None` once shut down) and the buffer the
/// last write emptied, kept so that lines queued next need no allocation.
struct Out<W> {
    pipe: Option<W>,
    spare: Vec<u8>,
}

/// A buffer this large is not kept for reuse (one burst of large answers
/// must not hold its memory for the session).
const SPARE_MAX: usize = 1 << 20;

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// A writer is draining `lines`.
    writing: bool,
}

/// Hands the writer's role back if the writer stops early: a failed write,
/// or its future dropped mid-write (a call timed out or was cancelled). The
/// lines still pending then go out with the next writer rather than never.
struct WriterRole<'a>(&'a Mutex<Pending>);

impl Drop for WriterRole<'_> {
    fn drop(&mut self) {
        self.0.lock().writing = false;
    }
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    pub fn new(out: W) -> Self {
        LineWriter {
            pending: Mutex::new(Pending::default()),
            out: tokio::sync::Mutex::new(Out { pipe: Some(out), spare: Vec::new() }),
        }
    }

    /// Writes `line` (which ends in `\n`), now or with the write under way.
    /// An error is the write's that failed, for whoever was writing.
    pub async fn write_line(&self, line: &[u8]) -> std::io::Result<()> {
        {
            let mut pending = self.pending.lock();
            pending.lines.extend_from_slice(line);
            if pending.writing {
                return Ok(());
            }
            pending.writing = true;
        }
        let role = WriterRole(&self.pending);
        let mut out = self.out.lock().await;
        loop {
            let mut lines = {
                let mut pending = self.pending.lock();
                if pending.lines.is_empty() {
                    // Handed back under the lock: a line appended after
                    // this finds no writer and writes itself (and no
                    // later drop may take the role from that writer).
                    pending.writing = false;
                    drop(pending);
                    std::mem::forget(role);
                    return Ok(());
                }
                let spare = std::mem::take(&mut out.spare);
                std::mem::replace(&mut pending.lines, spare)
            };
            let Some(pipe) = out.pipe.as_mut() else {
                self.pending.lock().lines.clear();
                return Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the pipe is closed"));
            };
            pipe.write_all(&lines).await?;
            pipe.flush().await?;
            if lines.capacity() <= SPARE_MAX {
                lines.clear();
                out.spare = lines;
            }
        }
    }

    /// Appends the line (ending in `\n`) that `write` appends to what goes
    /// out with the next write, without writing: [`QueuedLines::flush`] (or
    /// any later write) sends it.
    fn queue_line_with(&self, write: &mut dyn FnMut(&mut Vec<u8>)) {
        write(&mut self.pending.lock().lines);
    }

    /// Closes the pipe (after any write under way); later writes fail.
    pub async fn shutdown(&self) -> std::io::Result<()> {
        match self.out.lock().await.pipe.take() {
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
    /// Appends the line (ending in `\n`) that `write` appends to the queue
    /// it is given (a line made in place, with no buffer of its own);
    /// nothing is written yet.
    fn queue_with(&self, write: &mut dyn FnMut(&mut Vec<u8>));
    /// Starts writing what was queued. Never waits: the write goes as far
    /// as the pipe takes it now, and a task finishes it if the pipe is full.
    fn flush(self: Arc<Self>);
}

impl<W: AsyncWrite + Send + Unpin + 'static> QueuedLines for LineWriter<W> {
    fn queue_with(&self, write: &mut dyn FnMut(&mut Vec<u8>)) {
        self.queue_line_with(write);
    }

    fn flush(self: Arc<Self>) {
        {
            let pending = self.pending.lock();
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
    while let Some(writer) = writers.pop() {
        let at = Arc::as_ptr(&writer).cast::<()>();
        writers.retain(|other| Arc::as_ptr(other).cast::<()>() != at);
        writer.flush();
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
            out.push(line.to_vec());
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
                got.push(String::from_utf8(line.to_vec()).unwrap());
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
            let line = format!("line {n} {}\n", "x".repeat(20));
            writer.queue_with(&mut |queue| queue.extend_from_slice(line.as_bytes()));
        }
        let mut reader = LineReader::new(read);
        let early = tokio::time::timeout(std::time::Duration::from_millis(100), reader.next_line()).await;
        assert!(early.is_err(), "written before the flush");
        Arc::clone(&writer).flush();
        for n in 0..3 {
            let line = reader.next_line().await.unwrap();
            assert_eq!(String::from_utf8(line.to_vec()).unwrap(), format!("line {n} {}", "x".repeat(20)));
        }
        assert!(!reader.has_line());
        // A flush with nothing queued writes nothing.
        Arc::clone(&writer).flush();
        writer.write_line(b"last\n").await.unwrap();
        assert_eq!(reader.next_line().await.unwrap(), b"last");
    }

    #[tokio::test]
    async fn a_lent_line_is_not_counted_as_waiting_and_lines_across_reads_come_whole() {
        let (mut write, read) = tokio::io::duplex(64);
        let mut reader = LineReader::new(read);
        write.write_all(b"one\r\ntwo\n").await.unwrap();
        assert_eq!(reader.next_line().await.unwrap(), b"one");
        assert!(reader.has_line(), "`two` waits behind the lent `one`");
        assert_eq!(reader.next_line().await.unwrap(), b"two");
        assert!(!reader.has_line(), "the lent line itself is not waiting");
        // A line that arrives in pieces is gathered, then lent from the reader's own copy.
        write.write_all(b"thr").await.unwrap();
        let pieces = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            write.write_all(b"ee\nfour\npart").await.unwrap();
            write
        });
        assert_eq!(reader.next_line().await.unwrap(), b"three");
        assert!(reader.has_line());
        assert_eq!(reader.next_line().await.unwrap(), b"four");
        assert!(!reader.has_line());
        drop(pieces.await.unwrap());
        // The peer closed mid-line: what it wrote is its last line.
        assert_eq!(reader.next_line().await.unwrap(), b"part");
        assert!(reader.next_line().await.is_none());
    }

    #[tokio::test]
    async fn a_read_cancelled_mid_line_resumes_where_it_was() {
        let (mut write, read) = tokio::io::duplex(64);
        let mut reader = LineReader::new(read);
        write.write_all(b"half").await.unwrap();
        let early = tokio::time::timeout(std::time::Duration::from_millis(20), reader.next_line()).await;
        assert!(early.is_err(), "no whole line yet");
        write.write_all(b" and half\n").await.unwrap();
        assert_eq!(reader.next_line().await.unwrap(), b"half and half");
    }

    #[tokio::test]
    async fn a_long_lines_memory_is_let_go_once_the_next_line_is_read() {
        let mut input = vec![b'x'; 3 * SPARE_MAX];
        input.extend_from_slice(b"\nok\n");
        let input: &'static [u8] = input.leak();
        let mut reader = LineReader::new(input);
        assert_eq!(reader.next_line().await.unwrap().len(), 3 * SPARE_MAX);
        assert_eq!(reader.next_line().await.unwrap(), b"ok");
        assert!(reader.line.capacity() <= SPARE_MAX, "{}", reader.line.capacity());
    }

    #[test]
    fn flush_all_flushes_each_writer_once() {
        #[derive(Default)]
        struct Counting(std::sync::atomic::AtomicUsize);
        impl QueuedLines for Counting {
            fn queue_with(&self, _: &mut dyn FnMut(&mut Vec<u8>)) {}
            fn flush(self: Arc<Self>) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let (a, b) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
        let mut writers: Vec<Arc<dyn QueuedLines>> = vec![a.clone(), b.clone(), a.clone(), a.clone()];
        flush_all(&mut writers);
        assert!(writers.is_empty());
        assert_eq!(a.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(b.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_json_string_is_read_borrowed_unless_escaped() {
        use std::borrow::Cow;
        assert!(matches!(json_string(r#""quiver-raw-7""#), Some(Cow::Borrowed("quiver-raw-7"))));
        // An escaped id (a server may re-encode it) is still the same id.
        assert_eq!(json_string(r#""quiver\u002draw-7""#).as_deref(), Some("quiver-raw-7"));
        assert_eq!(json_string("7"), None);
        assert_eq!(json_string("null"), None);
        assert_eq!(json_string(r#"""#), None);
    }

    /// `next_read` tells of an oversized line once, with its first bytes,
    /// while `has_line` does not take the end of the skipped line for a line.
    #[tokio::test]
    async fn an_oversized_line_is_told_once_with_its_head() {
        let mut reader = LineReader::with_max(&b"0123456789abcdef\nok\n"[..], 8);
        assert!(matches!(reader.next_read().await, Some(Read::Oversized(b"01234567"))));
        assert!(reader.has_line(), "`ok` is waiting");
        assert!(matches!(reader.next_read().await, Some(Read::Line(b"ok"))));
        assert!(reader.next_read().await.is_none());

        let mut reader = LineReader::with_max(&b"0123456789abcdef\n"[..], 8);
        assert!(matches!(reader.next_read().await, Some(Read::Oversized(_))));
        assert!(!reader.has_line(), "only the end of the skipped line is waiting");
        assert!(reader.next_read().await.is_none());
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_and_the_next_one_read() {
        assert_eq!(lines(b"0123456789abcdef\nok\n", 8).await, vec![b"ok".to_vec()]);
        assert_eq!(lines(b"short\n0123456789abcdef", 8).await, vec![b"short".to_vec()]);
    }
}
