//! Socket readiness from tokio's reactor for a socket the connection owns.
//!
//! The socket itself stays in the [`crate::ws`] connection (it reads and writes it
//! with non-blocking calls); its descriptor is registered with the reactor as it is,
//! with no duplicate, so a tokio connection costs one descriptor. The protocol is
//! always: try the operation, and when it would block, [`Readiness::wait`] (which
//! clears what it reports, so the next try is a real retry).
//!
//! # Drop order
//!
//! A registration names a descriptor *number*, so it must be removed while that
//! number is still the socket: every owner of a [`Readiness`] drops it before the
//! socket (declared before it in the struct, or dropped by hand in a `Drop`). The other
//! order goes wrong two ways. If the socket's file is still open elsewhere (a
//! descriptor the user duplicated through `AsFd`), closing ours leaves the file in
//! the reactor's epoll set, the removal fails with `EBADF`, and the entry stays for the
//! life of the runtime, its wake-ups aimed at a registration tokio then keeps alive
//! forever (a leak per connection, and spurious events). If the number is reused first
//! (another task accepting on a multi-thread runtime), the removal succeeds on the new
//! socket's entry, and that connection never wakes again.
//! `tests/tokio_descriptors.rs` checks every owner (the reactor's epoll set must not
//! hold the socket after a drop, even with a duplicate keeping its file open).

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::task::{Context, Poll};
use std::time::Instant;

use ::tokio::io::Interest;
use ::tokio::io::unix::AsyncFd;

/// A socket's registration in the current tokio runtime.
#[derive(Debug)]
pub(crate) struct Readiness {
    /// The socket's descriptor, not owned: see the module's "Drop order".
    fd: AsyncFd<RawFd>,
}

impl Readiness {
    /// Register `socket`'s descriptor, readable and writable, edge-triggered. Must run
    /// inside a tokio runtime (it panics otherwise).
    ///
    /// # Safety
    ///
    /// `socket`'s descriptor must stay open, and be the same socket, until the
    /// returned `Readiness` is dropped: its owner drops it before the socket (see the
    /// module's "Drop order").
    pub unsafe fn new(socket: &impl AsFd) -> io::Result<Readiness> {
        let fd = socket.as_fd().as_raw_fd();
        // SAFETY: the caller keeps `fd` open, the same socket, while the `AsyncFd`
        // lives (tokio's contract for `register_with_interest`).
        let fd =
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE | Interest::WRITABLE) }
                .map_err(io::Error::from)?;
        Ok(Readiness { fd })
    }

    /// Wait until the socket is readable (or also writable, with `write`) or
    /// `deadline` passes (`Ok(false)`). The readiness reported is cleared: call after
    /// an operation would block, then retry it.
    pub fn wait(
        &self,
        write: bool,
        deadline: Option<Instant>,
    ) -> impl Future<Output = io::Result<bool>> + '_ {
        let interest = if write {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        self.wait_for(interest, deadline)
    }

    /// [`wait`](Self::wait) for exactly `interest`: only that readiness is cleared, so
    /// a reader task and a writer task can wait on the same socket at once.
    ///
    /// Through the poll path (`poll_read_ready` / `poll_write_ready`): the waker sits
    /// in the registration's reader or writer slot, replaced in place when it is the
    /// same task's, so a wait costs no waiter-list insertion and removal under the
    /// registration's lock (what the `ready()` future does). The slots hold one task
    /// per direction, which is our use: a connection is `&mut` (one task), and split
    /// halves wait on different directions.
    pub async fn wait_for(
        &self,
        interest: Interest,
        deadline: Option<Instant>,
    ) -> io::Result<bool> {
        let ready = std::future::poll_fn(|cx| self.poll_interest(interest, cx));
        match deadline {
            None => ready.await.map(|()| true),
            Some(at) => match ::tokio::time::timeout_at(at.into(), ready).await {
                Ok(r) => r.map(|()| true),
                Err(_) => Ok(false),
            },
        }
    }

    /// Poll for readability (and writability, with `write`); `Ready` (what was seen
    /// is cleared) means: retry the operation.
    #[inline]
    pub fn poll_wait(&self, write: bool, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Poll::Ready(r) = self.poll_read(cx) {
            return Poll::Ready(r);
        }
        if write {
            return self.poll_write(cx);
        }
        Poll::Pending
    }

    /// Poll for readiness in `interest`; `Ready` (what was seen is cleared) means:
    /// retry the operation.
    fn poll_interest(&self, interest: Interest, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if interest.is_readable()
            && let Poll::Ready(r) = self.poll_read(cx)
        {
            return Poll::Ready(r);
        }
        if interest.is_writable() {
            return self.poll_write(cx);
        }
        Poll::Pending
    }

    /// Poll for readability; `Ready` (readiness cleared) means: retry the read.
    pub fn poll_read(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.fd
            .poll_read_ready(cx)
            .map_ok(|mut guard| guard.clear_ready())
    }

    /// Poll for writability; `Ready` (readiness cleared) means: retry the write.
    pub fn poll_write(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.fd
            .poll_write_ready(cx)
            .map_ok(|mut guard| guard.clear_ready())
    }
}
