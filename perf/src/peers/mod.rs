//! Plumbing to run peer libraries without sockets or runtimes.
//!
//! - [`MemStream`]: an in-memory byte stream for std `Read + Write` (tungstenite)
//!   and tokio `AsyncRead + AsyncWrite` (fastwebsockets). Reads hand out a
//!   prepared input (as much as the reader's buffer takes, like a socket with
//!   the whole batch queued); writes are copied into a sink.
//! - [`poll_ready`]: poll a future once with a no-op waker. Over a
//!   `MemStream` with input queued, the peers' futures complete on the first
//!   poll, so this measures their code, not a scheduler.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

#[derive(Debug, Default)]
struct Cursors {
    read: Cell<usize>,
    written: Cell<usize>,
}

/// An in-memory stream: reads hand out `input`, writes are copied into a
/// sink. Its cursors can be reset through a [`Rewind`] handle even after the
/// stream was moved into a peer that does not give it back.
#[derive(Debug, Clone, Default)]
pub struct MemStream {
    input: Vec<u8>,
    sink: Vec<u8>,
    cur: Rc<Cursors>,
}

/// Resets a [`MemStream`]'s cursors from outside.
#[derive(Debug, Clone)]
pub struct Rewind(Rc<Cursors>);

impl Rewind {
    /// The whole input is readable again and the sink is empty.
    #[inline]
    pub fn rewind(&self) {
        self.0.read.set(0);
        self.0.written.set(0);
    }
}

impl MemStream {
    /// A stream that will hand out `input`, with room for `sink_capacity`
    /// written bytes before the sink grows.
    pub fn new(input: Vec<u8>, sink_capacity: usize) -> Self {
        MemStream {
            input,
            sink: vec![0; sink_capacity],
            cur: Rc::default(),
        }
    }

    /// A handle that rewinds this stream.
    pub fn rewinder(&self) -> Rewind {
        Rewind(self.cur.clone())
    }

    /// The whole input is readable again and the sink is empty.
    #[inline]
    pub fn rewind(&mut self) {
        self.rewinder().rewind();
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.input.len() - self.cur.read.get()
    }

    /// Bytes written since the last rewind.
    pub fn written(&self) -> &[u8] {
        &self.sink[..self.cur.written.get()]
    }

    #[inline]
    fn take(&mut self, max: usize) -> &[u8] {
        let at = self.cur.read.get();
        let n = max.min(self.input.len() - at);
        self.cur.read.set(at + n);
        &self.input[at..at + n]
    }

    #[inline]
    fn put(&mut self, src: &[u8]) {
        let at = self.cur.written.get();
        let end = at + src.len();
        if end > self.sink.len() {
            self.sink.resize(end, 0);
        }
        self.sink[at..end].copy_from_slice(src);
        self.cur.written.set(end);
    }
}

impl io::Read for MemStream {
    /// Nothing left reads as `WouldBlock` (a non-blocking socket with no data),
    /// never as end of stream.
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let src = self.take(buf.len());
        if src.is_empty() && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = src.len();
        buf[..n].copy_from_slice(src);
        Ok(n)
    }
}

impl io::Write for MemStream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.put(buf);
        Ok(buf.len())
    }

    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl tokio::io::AsyncRead for MemStream {
    /// Nothing left is `Pending` (a socket with no data).
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let src = this.take(buf.remaining());
        if src.is_empty() && buf.remaining() > 0 {
            return Poll::Pending;
        }
        buf.put_slice(src);
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for MemStream {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().put(buf);
        Poll::Ready(Ok(buf.len()))
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Poll `fut` once; panics if it is not ready (an in-memory peer future
/// that waits would mean the benchmark is wrong, not slow).
#[inline]
pub fn poll_ready<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("an in-memory future was not ready on its first poll"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn std_stream_reads_then_would_block() {
        let mut s = MemStream::new(b"abcdef".to_vec(), 16);
        let mut buf = [0u8; 4];
        assert_eq!(s.read(&mut buf).unwrap(), 4);
        assert_eq!(s.read(&mut buf).unwrap(), 2);
        assert_eq!(
            s.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        s.write_all(b"xy").unwrap();
        assert_eq!(s.written(), b"xy");
        let r = s.rewinder();
        r.rewind();
        assert_eq!((s.remaining(), s.written().len()), (6, 0));
    }

    #[test]
    fn async_stream_is_ready_until_empty() {
        use tokio::io::AsyncRead;
        let mut s = MemStream::new(b"abc".to_vec(), 0);
        let mut raw = [0u8; 8];
        let mut rb = tokio::io::ReadBuf::new(&mut raw);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut s).poll_read(&mut cx, &mut rb).is_ready());
        assert_eq!(rb.filled(), b"abc");
        assert!(Pin::new(&mut s).poll_read(&mut cx, &mut rb).is_pending());
    }
}
