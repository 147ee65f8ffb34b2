//! [`TcpStream`]: async-io's TCP stream with a `poll_close` that shuts the write half,
//! the stream [`Server`](super::ws::Server) accepts.

use std::io;
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use async_io::Async;
use futures_io::{AsyncRead, AsyncWrite};

/// A TCP stream on async-io's reactor (any executor). Unlike `Async<TcpStream>`,
/// whose `poll_close` only flushes, closing it shuts the write half down (a FIN after
/// the bytes written), which the close handshake needs: the connection's last step
/// after the close frames is that FIN. (smol's `net::TcpStream` does the same.)
///
/// ```
/// # smol::block_on(async {
/// # let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
/// # let addr = listener.local_addr()?;
/// let tcp = tickwire::futures_io::TcpStream::connect(addr).await?;
/// assert_eq!(tcp.get_ref().peer_addr()?, addr);
/// # Ok::<(), std::io::Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct TcpStream(Async<std::net::TcpStream>);

impl TcpStream {
    /// Connect to `addr` (`TCP_NODELAY` on, as on every connection of this crate).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    /// let tcp = tickwire::futures_io::TcpStream::connect(listener.local_addr()?).await?;
    /// assert!(tcp.get_ref().nodelay()?);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
        let tcp = Async::<std::net::TcpStream>::connect(addr).await?;
        tcp.get_ref().set_nodelay(true)?;
        Ok(TcpStream(tcp))
    }

    /// The socket (its addresses and options).
    ///
    /// ```
    /// # smol::block_on(async {
    /// # let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    /// let tcp = tickwire::futures_io::TcpStream::connect(listener.local_addr()?).await?;
    /// assert!(tcp.get_ref().local_addr()?.ip().is_loopback());
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn get_ref(&self) -> &std::net::TcpStream {
        self.0.get_ref()
    }
}

impl From<Async<std::net::TcpStream>> for TcpStream {
    /// Closing the stream will shut its write half.
    fn from(tcp: Async<std::net::TcpStream>) -> Self {
        TcpStream(tcp)
    }
}

impl AsyncRead for TcpStream {
    #[inline]
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for TcpStream {
    #[inline]
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.get_ref().shutdown(Shutdown::Write))
    }
}
