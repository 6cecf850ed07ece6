//! stdin/stdout as the MCP transport, read and written through the event loop.
//!
//! tokio's `stdin()`/`stdout()` (what `rmcp::transport::stdio()` uses) run
//! every read and write as a job on the blocking thread pool: each message
//! costs two thread hand-offs, and reads are one at a time. With concurrent
//! callers that hand-off, not quiver's work, was the top of the gateway's
//! profile. MCP clients start a server with pipes (or, from Node, whose child
//! stdio is a socket pair, with sockets); both are registered with the
//! reactor like any socket instead. A terminal or a file keeps the portable
//! path.

use tokio::io::{AsyncRead, AsyncWrite};

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The (read, write) halves for serving MCP on this process's stdio; each
/// half falls back to tokio's own on its own. Must be called inside the
/// runtime (the descriptors register with its reactor).
pub fn transport() -> (Reader, Writer) {
    #[cfg(unix)]
    let (read, write) = (unix::reader(), unix::writer());
    #[cfg(not(unix))]
    let (read, write) = (None, None);
    if read.is_none() || write.is_none() {
        tracing::debug!("stdin or stdout is neither a pipe nor a socket; it goes through tokio's blocking stdio");
    }
    (read.unwrap_or_else(|| Box::new(tokio::io::stdin())), write.unwrap_or_else(|| Box::new(tokio::io::stdout())))
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    use super::{Reader, Writer};

    enum Kind {
        Pipe,
        Socket,
    }

    /// A duplicate of `fd` (fd 0 and 1 stay open) and what it is.
    fn open(fd: BorrowedFd<'_>) -> Option<(File, Kind)> {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        let kind = if kind.is_fifo() {
            Kind::Pipe
        } else if kind.is_socket() {
            Kind::Socket
        } else {
            return None;
        };
        Some((file, kind))
    }

    /// stdin registered with the reactor, or `None` for a terminal, a file or
    /// a failure (then nothing was changed). The non-blocking flag lands on
    /// the description this process was given, which nothing else in it reads.
    pub(super) fn reader() -> Option<Reader> {
        let (file, kind) = open(std::io::stdin().as_fd())?;
        Some(match kind {
            Kind::Pipe => Box::new(tokio::net::unix::pipe::Receiver::from_file(file).ok()?),
            Kind::Socket => Box::new(socket(file.into())?),
        })
    }

    /// stdout the same way: it is the protocol channel (logs go to stderr),
    /// so nothing else writes to it.
    pub(super) fn writer() -> Option<Writer> {
        let (file, kind) = open(std::io::stdout().as_fd())?;
        Some(match kind {
            Kind::Pipe => Box::new(tokio::net::unix::pipe::Sender::from_file(file).ok()?),
            Kind::Socket => Box::new(socket(file.into())?),
        })
    }

    /// A stream socket as a tokio stream (reads and writes are plain
    /// `read`/`write` on the descriptor, whatever its address family).
    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(fd);
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }
}
