//! Nonblocking stdin and stdout when they are pipes.

use std::io;
use std::os::fd::{AsFd as _, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// A duplicate of stdin or stdout, or `None` when that fails.
fn dup(fd: std::os::fd::BorrowedFd<'_>) -> Option<OwnedFd> {
    fd.try_clone_to_owned().ok()
}

/// stdin: a nonblocking pipe, or tokio's blocking-pool stdin.
pub(super) enum Input {
    Pipe(pipe::Receiver),
    Blocking(tokio::io::Stdin),
}

impl Input {
    pub(super) fn open() -> Self {
        // `from_owned_fd` refuses anything that is not a pipe.
        match dup(io::stdin().as_fd()).map(pipe::Receiver::from_owned_fd) {
            Some(Ok(rx)) => Self::Pipe(rx),
            _ => Self::Blocking(tokio::io::stdin()),
        }
    }

    pub(super) fn is_pipe(&self) -> bool {
        matches!(self, Self::Pipe(_))
    }
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(rx) => Pin::new(rx).poll_read(cx, buf),
            Self::Blocking(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

/// stdout: a nonblocking pipe, or tokio's blocking-pool stdout.
pub(super) enum Output {
    Pipe(pipe::Sender),
    Blocking(tokio::io::Stdout),
}

impl Output {
    pub(super) fn open() -> Self {
        match dup(io::stdout().as_fd()).map(pipe::Sender::from_owned_fd) {
            Some(Ok(tx)) => Self::Pipe(tx),
            _ => Self::Blocking(tokio::io::stdout()),
        }
    }

    pub(super) fn is_pipe(&self) -> bool {
        matches!(self, Self::Pipe(_))
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Pipe(tx) => Pin::new(tx).poll_write(cx, buf),
            Self::Blocking(stdout) => Pin::new(stdout).poll_write(cx, buf),
        }
    }

    /// Passed on: a batch of replies goes out with its newline in one
    /// system call.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Pipe(tx) => Pin::new(tx).poll_write_vectored(cx, bufs),
            Self::Blocking(stdout) => Pin::new(stdout).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Pipe(tx) => tx.is_write_vectored(),
            Self::Blocking(stdout) => stdout.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(tx) => Pin::new(tx).poll_flush(cx),
            Self::Blocking(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(tx) => Pin::new(tx).poll_shutdown(cx),
            Self::Blocking(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}

/// Puts stdin and stdout back in blocking mode when dropped: `O_NONBLOCK`
/// belongs to the open file description, which this process may share
/// (with a shell pipeline, say).
pub(super) struct RestoreBlocking {
    stdin: bool,
    stdout: bool,
}

impl RestoreBlocking {
    pub(super) fn new(stdin: bool, stdout: bool) -> Self {
        Self { stdin, stdout }
    }
}

impl Drop for RestoreBlocking {
    fn drop(&mut self) {
        // Registering a pipe needs a runtime with IO; without one, leave
        // the flags as they are.
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if self.stdin
            && let Some(fd) = dup(io::stdin().as_fd())
            && let Ok(rx) = pipe::Receiver::from_owned_fd_unchecked(fd)
        {
            let _ = rx.into_blocking_fd();
        }
        if self.stdout
            && let Some(fd) = dup(io::stdout().as_fd())
            && let Ok(tx) = pipe::Sender::from_owned_fd_unchecked(fd)
        {
            let _ = tx.into_blocking_fd();
        }
    }
}
