//! Where a connection's socket is made: [`SocketOptions`] (buffer sizes, `TCP_NODELAY`,
//! `TCP_QUICKACK`, `SO_BUSY_POLL`) applied to every socket the builders create or
//! accept, [`RecvMode`] (sleep in the kernel, or spin on a dedicated core), and the
//! connectors that return a connected stream, directly or through a proxy tunnel
//! ([`crate::proxy`]): `dial` blocking, `tokio::dial` async. Both drive the same
//! sans-IO proxy handshake.

mod dial;
pub(crate) mod spin;
#[cfg(all(feature = "tokio", unix))]
pub(crate) mod tokio;

pub(crate) use dial::{DialError, dial};
pub use spin::RecvMode;

use std::io;

use socket2::SockRef;

/// Socket options set on each connection's socket (client: before the connect, so a
/// receive buffer can still shape the TCP window scale; server: on each accepted
/// socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SocketOptions {
    /// `TCP_NODELAY` (default on: a message goes out at once, without waiting for the
    /// previous segment's ACK).
    pub nodelay: bool,
    /// `SO_RCVBUF` in bytes (default: the kernel's; Linux doubles the value asked for
    /// and caps it at `net.core.rmem_max` unless the process is privileged).
    pub recv_buffer: Option<usize>,
    /// `SO_SNDBUF` in bytes (default: the kernel's; as above with `wmem_max`).
    pub send_buffer: Option<usize>,
    /// `TCP_QUICKACK` (Linux, Android: ACK at once instead of delaying), set when the
    /// socket is set up. The kernel leaves quick-ACK mode again by itself (the option
    /// does not stick), so WebSocket connections (blocking and tokio) set it again
    /// after each read that got data. Ignored where the OS has no such option.
    pub quickack: bool,
    /// `SO_BUSY_POLL` in microseconds (Linux): a blocking receive polls the device
    /// queue this long before sleeping. Needs `CAP_NET_ADMIN` to raise above
    /// `net.core.busy_read`. Ignored on other systems.
    pub busy_poll: Option<u32>,
}

impl Default for SocketOptions {
    fn default() -> Self {
        SocketOptions {
            nodelay: true,
            recv_buffer: None,
            send_buffer: None,
            quickack: false,
            busy_poll: None,
        }
    }
}

impl SocketOptions {
    /// Set the options on `socket` (anything with a file descriptor: a std, mio or
    /// tokio socket).
    pub(crate) fn apply<'s>(&self, socket: impl Into<SockRef<'s>>) -> io::Result<()> {
        let s: SockRef<'s> = socket.into();
        s.set_tcp_nodelay(self.nodelay)?;
        if let Some(n) = self.recv_buffer {
            s.set_recv_buffer_size(n)?;
        }
        if let Some(n) = self.send_buffer {
            s.set_send_buffer_size(n)?;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.quickack {
            s.set_tcp_quickack(true)?;
        }
        #[cfg(target_os = "linux")]
        if let Some(us) = self.busy_poll {
            s.set_busy_poll(us)?;
        }
        Ok(())
    }
}

/// Set `TCP_QUICKACK` on `socket` again (Linux, Android; a no-op elsewhere). The kernel
/// leaves quick-ACK mode by itself once data flows both ways, so a connection with
/// [`SocketOptions::quickack`] calls this after each read that got data: the
/// WebSocket connections and the REST clients, blocking and tokio.
#[inline]
pub(crate) fn rearm_quickack<'s>(socket: impl Into<SockRef<'s>>) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    socket.into().set_tcp_quickack(true)?;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = socket;
    Ok(())
}

/// Builder setters for the socket options (`self.$field: SocketOptions`) and the
/// receive mode (`self.$mode: RecvMode`), for the blocking ws builders.
macro_rules! socket_options {
    ($ty:ty, $($field:ident).+) => {
        impl $ty {
            /// `TCP_NODELAY` (default on).
            pub fn nodelay(mut self, on: bool) -> Self {
                self.$($field).+.nodelay = on;
                self
            }

            /// `SO_RCVBUF`: the kernel's receive buffer in bytes (default: the
            /// kernel's). See [`SocketOptions::recv_buffer`](crate::socket::SocketOptions::recv_buffer).
            pub fn so_rcvbuf(mut self, bytes: usize) -> Self {
                self.$($field).+.recv_buffer = Some(bytes);
                self
            }

            /// `SO_SNDBUF`: the kernel's send buffer in bytes (default: the kernel's).
            pub fn so_sndbuf(mut self, bytes: usize) -> Self {
                self.$($field).+.send_buffer = Some(bytes);
                self
            }

            /// `TCP_QUICKACK` where the OS has it (default off).
            pub fn quickack(mut self, on: bool) -> Self {
                self.$($field).+.quickack = on;
                self
            }

            /// `SO_BUSY_POLL` in microseconds (Linux; default: not set).
            pub fn so_busy_poll(mut self, micros: u32) -> Self {
                self.$($field).+.busy_poll = Some(micros);
                self
            }

            /// All socket options at once.
            ///
            /// ```
            /// use tickwire::socket::SocketOptions;
            ///
            /// let mut options = SocketOptions::default(); // TCP_NODELAY on
            /// options.quickack = true;
            /// options.recv_buffer = Some(4 << 20);
            /// // The same setter on every builder (ws and rest, blocking and tokio):
            /// let ws = tickwire::ws::Client::builder().socket_options(options);
            /// let server = tickwire::ws::Server::builder().socket_options(options);
            /// let rest = tickwire::rest::Client::builder().socket_options(options);
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn socket_options(mut self, options: $crate::socket::SocketOptions) -> Self {
                self.$($field).+ = options;
                self
            }
        }
    };
}

pub(crate) use socket_options;

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn options_are_applied() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let o = SocketOptions {
            nodelay: false,
            recv_buffer: Some(64 << 10),
            send_buffer: Some(96 << 10),
            quickack: true,
            busy_poll: Some(50),
        };
        o.apply(&s).unwrap();
        let r = SockRef::from(&s);
        assert!(!r.tcp_nodelay().unwrap());
        assert!(r.recv_buffer_size().unwrap() >= 64 << 10);
        assert!(r.send_buffer_size().unwrap() >= 96 << 10);
        #[cfg(target_os = "linux")]
        {
            assert!(r.tcp_quickack().unwrap());
            assert_eq!(r.busy_poll().unwrap(), 50);
        }
        SocketOptions::default().apply(&s).unwrap();
        assert!(r.tcp_nodelay().unwrap());
    }
}
