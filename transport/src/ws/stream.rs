//! What a connection runs on: a byte stream with readiness (a mio socket, or TLS over
//! one), and the few things a driver asks of it beyond read and write.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::Duration;

use mio::event::Source;
use mio::net::TcpStream;

use crate::net::NetStream;

/// A byte stream the connection can run on: a mio socket, or TLS over one.
pub trait Stream: Read + Write + Source {
    /// Shut the write half down (a FIN after the bytes already written).
    fn shutdown_write(&mut self) -> io::Result<()>;

    /// Send the layer's own end of data (TLS close_notify) after everything written
    /// before it, ahead of a graceful shutdown: `Ok(true)` when it is on the socket,
    /// `Ok(false)` when the socket would block (call again once writable; a full
    /// buffer is never an error). Idempotent.
    fn close_notify(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    /// Write bytes that `write` accepted but kept (TLS records waiting for the socket).
    /// `Ok(true)` when none are left, `Ok(false)` when the socket would block.
    fn flush_buffered(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    /// Whether such bytes wait.
    fn has_buffered(&self) -> bool {
        false
    }

    /// Put the socket itself in blocking (`true`) or non-blocking mode. `Ok(false)`:
    /// not supported here (the connection then always waits on its poll).
    fn set_socket_blocking(&mut self, _blocking: bool) -> io::Result<bool> {
        Ok(false)
    }

    /// Set the socket's receive timeout (`SO_RCVTIMEO`; `None`: none), which bounds a
    /// read on a blocking socket. `Ok(false)`: not supported here.
    fn set_receive_timeout(&mut self, _timeout: Option<Duration>) -> io::Result<bool> {
        Ok(false)
    }

    /// After a read that returned `got` of `asked` bytes: whether the stream surely has
    /// nothing more until the socket becomes readable again (a plain socket: the read
    /// was short; TLS: [`TlsStream::is_drained`](crate::tls::TlsStream::is_drained)).
    /// Then the next read waits for readiness first instead of trying and getting
    /// `WouldBlock`: one system call less per message. `false` is always safe.
    fn read_drained(&self, asked: usize, got: usize) -> bool {
        let _ = (asked, got);
        false
    }

    /// Set `TCP_QUICKACK` again (Linux, Android; a no-op elsewhere and where there is
    /// no TCP socket). The kernel leaves quick-ACK mode by itself once data flows both
    /// ways, so a connection that wants it calls this after each read that got data.
    fn rearm_quickack(&self) -> io::Result<()> {
        Ok(())
    }
}

/// `TCP_QUICKACK` on `tcp` (where the OS has it).
fn quickack(tcp: &TcpStream) -> io::Result<()> {
    crate::socket::rearm_quickack(tcp)
}

/// Set `O_NONBLOCK` on a mio socket (mio sockets are non-blocking; a blocking-mode
/// connection clears it while it has no deadline).
pub(crate) fn set_tcp_blocking(tcp: &TcpStream, blocking: bool) -> io::Result<bool> {
    socket2::SockRef::from(tcp).set_nonblocking(!blocking)?;
    Ok(true)
}

impl Stream for TcpStream {
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }

    fn set_socket_blocking(&mut self, blocking: bool) -> io::Result<bool> {
        set_tcp_blocking(self, blocking)
    }

    fn set_receive_timeout(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        socket2::SockRef::from(&*self).set_read_timeout(timeout)?;
        Ok(true)
    }

    fn read_drained(&self, asked: usize, got: usize) -> bool {
        got < asked
    }

    fn rearm_quickack(&self) -> io::Result<()> {
        quickack(self)
    }
}

impl Stream for NetStream {
    fn shutdown_write(&mut self) -> io::Result<()> {
        NetStream::shutdown_write(self)
    }

    fn close_notify(&mut self) -> io::Result<bool> {
        NetStream::close_notify(self)
    }

    #[inline]
    fn flush_buffered(&mut self) -> io::Result<bool> {
        NetStream::flush_buffered(self)
    }

    #[inline]
    fn has_buffered(&self) -> bool {
        NetStream::has_buffered(self)
    }

    fn set_socket_blocking(&mut self, blocking: bool) -> io::Result<bool> {
        set_tcp_blocking(self.tcp(), blocking)
    }

    fn set_receive_timeout(&mut self, timeout: Option<Duration>) -> io::Result<bool> {
        socket2::SockRef::from(self.tcp()).set_read_timeout(timeout)?;
        Ok(true)
    }

    #[inline]
    fn read_drained(&self, asked: usize, got: usize) -> bool {
        match self {
            NetStream::Tcp(_) => got < asked,
            #[cfg(feature = "tls")]
            NetStream::Tls(s) => s.is_drained(),
        }
    }

    fn rearm_quickack(&self) -> io::Result<()> {
        quickack(self.tcp())
    }
}
