//! stdin/stdout as the MCP transport, read and written through the event loop.
//!
//! tokio's `stdin()`/`stdout()` (what `rmcp::transport::stdio()` uses) run
//! every read and write as a job on the blocking thread pool: each message
//! costs two thread hand-offs, and reads are one at a time. With concurrent
//! callers that hand-off, not quiver's work, capped the gateway's throughput
//! (measured: the blocking pool's wake-ups were the top of the profile). When
//! stdin and stdout are pipes, which is how MCP clients start a server, they
//! are registered with the reactor like any socket instead. A terminal, a file
//! or a socket keeps the portable path.

use tokio::io::{AsyncRead, AsyncWrite};

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The (read, write) halves for serving MCP on this process's stdio.
/// Must be called inside the runtime (the pipes register with its reactor).
pub fn transport() -> (Reader, Writer) {
    #[cfg(unix)]
    if let Some((read, write)) = pipes() {
        return (Box::new(read), Box::new(write));
    }
    tracing::debug!("stdio is not a pair of pipes; using tokio's blocking stdio");
    let (read, write) = rmcp::transport::stdio();
    (Box::new(read), Box::new(write))
}

/// Both ends as non-blocking pipes, or `None` when either is not a pipe. The
/// descriptors are duplicated (fd 0 and 1 stay open), and the non-blocking
/// flag lands on the pipe ends this process was given, which nothing else in
/// it reads or writes: stdout is the protocol channel, logs go to stderr.
#[cfg(unix)]
fn pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd;
    let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok().map(std::fs::File::from);
    let stdin = dup(std::io::stdin().as_fd())?;
    let stdout = dup(std::io::stdout().as_fd())?;
    // Check both before either is switched to non-blocking.
    let is_fifo = |f: &std::fs::File| {
        use std::os::unix::fs::FileTypeExt;
        f.metadata().is_ok_and(|m| m.file_type().is_fifo())
    };
    if !is_fifo(&stdin) || !is_fifo(&stdout) {
        return None;
    }
    let read = tokio::net::unix::pipe::Receiver::from_file(stdin).ok()?;
    let write = tokio::net::unix::pipe::Sender::from_file(stdout).ok()?;
    Some((read, write))
}
