//! One vocabulary: the same calls, written once in a macro, compiled against the blocking
//! (`tickwire::ws`, `tickwire::rest`) and the tokio (`tickwire::tokio::ws`,
//! `tickwire::tokio::rest`) types, then run against a server on 127.0.0.1. A method,
//! builder setter or error variant renamed on one side only, or given another receiver
//! (`self` / `&self` / `&mut self`), argument or return type, fails to compile here.
//! The only difference written out is the `.await` (the `$w` macro) and `async` on the
//! functions. Deliberate differences are listed in `tickwire::tokio::ws` and
//! `tickwire::tokio::rest`'s module docs.
#![cfg(all(feature = "tokio", feature = "tls", unix))]

use std::net::SocketAddr;
use std::time::Duration;

use tickwire::socket::{RecvMode, SocketOptions};
use tickwire::ws::{CloseCode, Message, PreparedMessage, Sender};

/// A blocking call: as it is.
macro_rules! now {
    ($e:expr) => {
        $e
    };
}

/// A tokio call: awaited.
macro_rules! later {
    ($e:expr) => {
        $e.await
    };
}

/// Every setter the WebSocket client and server builders share, on `$b`.
macro_rules! ws_options {
    ($b:expr) => {{
        let b = $b
            .read_buffer_size(64 << 10)
            .write_buffer_size(64 << 10)
            .max_frame_size(64 << 10)
            .max_message_size(64 << 10)
            .auto_pong(true)
            .fragment_size(1 << 20)
            .handshake_timeout(Duration::from_secs(10))
            .close_timeout(Duration::from_secs(5))
            .read_timeout(Some(Duration::from_secs(10)))
            .write_timeout(None)
            .keepalive(None)
            .dead_peer_timeout(None);
        socket_options!(b)
    }};
}

/// The socket-option setters every builder has (ws and rest, blocking and tokio), on `$b`.
macro_rules! socket_options {
    ($b:expr) => {
        $b.nodelay(true)
            .so_rcvbuf(1 << 20)
            .so_sndbuf(1 << 20)
            .quickack(false)
            .so_busy_poll(0)
            .socket_options(SocketOptions::default())
            .recv_mode(RecvMode::Sleep)
    };
}

/// The ws and rest calls both APIs share, for the API in module `$ws` / `$rest`, with
/// `$w` wrapping each call that waits and `$($async)?` on the functions.
macro_rules! vocabulary {
    ($ws:path, $rest:path, $w:ident $(, $async:tt)?) => {
        use $ws as ws;
        use $rest as rest;

        /// Every setter of the WebSocket client builder: `self -> Self`.
        pub fn ws_client_builder() -> ws::ClientBuilder {
            let b: ws::ClientBuilder = ws::Client::builder();
            let b: ws::ClientBuilder = ws_options!(b)
                .proxy_rules(None)
                .connect_timeout(Duration::from_secs(10))
                .header("X-Test", "1")
                .protocol("v1");
            let _: Result<ws::ClientBuilder, tickwire::proxy::ProxyUrlError> =
                ws::ClientBuilder::new().proxy_from_env();
            b.tls(tickwire::tls::TlsConfig::shared_default())
        }

        /// Every setter of the WebSocket server builder.
        pub fn ws_server_builder() -> ws::ServerBuilder {
            let b: ws::ServerBuilder = ws::Server::builder();
            let _: ws::ServerBuilder = ws::ServerBuilder::new();
            ws_options!(b)
                .header("X-Server", "1")
                .protocol("v1")
                .on_upgrade(|_| tickwire::ws::Decision::accept())
        }

        /// A server: bound from a builder by reference (the builder's finishing methods
        /// take `&self`), accepts one connection and echoes until the close.
        pub $($async)? fn ws_server(b: &ws::ServerBuilder) -> Result<(SocketAddr, ws::Server), tickwire::ws::Error> {
            let server: ws::Server = $w!(b.bind("127.0.0.1:0"))?;
            let addr: SocketAddr = server.local_addr()?;
            Ok((addr, server))
        }

        /// The server side of a connection: echo with `recv_with`, one prepared message.
        pub $($async)? fn ws_echo(mut server: ws::Server) -> Result<usize, tickwire::ws::Error> {
            let mut conn: ws::ServerConnection = $w!(server.accept())?;
            let () = $w!(conn.handshake())?;
            let _: bool = conn.is_handshaking();
            let _: &str = conn.path();
            let _: Option<&str> = conn.protocol();
            let _: std::io::Result<SocketAddr> = conn.peer_addr();
            let _: std::io::Result<SocketAddr> = conn.local_addr();
            let _: Option<&tickwire::tls::TlsCodec<Vec<u8>>> = conn.tls();
            let prepared = PreparedMessage::text("prepared");
            let () = $w!(conn.send_prepared(&prepared))?;
            let mut echoed = 0;
            loop {
                let got: Option<bool> = $w!(conn.recv_with(|msg, tx: &mut Sender<'_>| match msg {
                    Message::Text(t) => tx.send_text(t).map(|()| true),
                    Message::Binary(b) => tx.send_binary(b).map(|()| true),
                    _ => Ok(false),
                }))?;
                match got {
                    None => break,
                    Some(data) => echoed += usize::from(data),
                }
            }
            let _: bool = conn.is_closed();
            Ok(echoed)
        }

        /// The client side: connect from a builder by reference, every send, `recv`,
        /// `close`, drain.
        pub $($async)? fn ws_client(url: &str) -> Result<(), tickwire::ws::Error> {
            let b = ws_client_builder().protocol("v1");
            let mut c: ws::Client = $w!(b.connect(url))?;
            let _: Option<&str> = c.protocol();
            #[cfg(feature = "deflate")]
            let _: Option<tickwire::ws::Negotiated> = c.deflate();
            let _: std::io::Result<SocketAddr> = c.peer_addr();
            {
                let m: Option<Message<'_>> = $w!(c.recv())?;
                assert_eq!(m, Some(Message::Text("prepared")));
            }
            let () = $w!(c.send_text("a"))?;
            let () = $w!(c.send_binary(b"b"))?;
            let () = $w!(c.send_ping(b"p"))?;
            let () = $w!(c.send_pong(b"q"))?;
            let () = $w!(c.flush())?;
            let _: bool = c.wants_write();
            assert_eq!($w!(c.recv())?, Some(Message::Text("a")));
            assert_eq!($w!(c.recv())?, Some(Message::Binary(b"b")));
            let () = $w!(c.close(CloseCode::NORMAL, "bye"))?;
            while $w!(c.recv())?.is_some() {}
            let _: bool = c.is_closed();
            Ok(())
        }

        /// Every setter of the REST client builder, and its finishing methods by
        /// reference.
        pub $($async)? fn rest_client(base: &str) -> Result<(), rest::Error> {
            let b: rest::ClientBuilder = rest::Client::builder();
            let b: rest::ClientBuilder = b
                .timeout(Duration::from_secs(5))
                .request_buffer(4096)
                .response_buffer(64 << 10)
                .default_header("X-Key", "k")
                .connect_timeout(Duration::from_secs(10))
                .read_timeout(Some(Duration::from_secs(10)))
                .write_timeout(None)
                .close_timeout(Duration::from_secs(5))
                .idle_probe(None);
            let b: rest::ClientBuilder = socket_options!(b)
                .proxy_rules(None)
                .tls(tickwire::tls::TlsConfig::shared_default());
            let _: rest::ClientBuilder = rest::ClientBuilder::new();
            let lazy: rest::Client = b.build(base)?;
            assert!(!lazy.is_connected());
            let mut c: rest::Client = $w!(b.connect(base))?;
            let _: &str = c.host_header();
            let _: &str = c.base_path();
            let _: rest::Stats = c.stats();
            let _: Option<SocketAddr> = c.local_addr();
            let _: Option<SocketAddr> = c.peer_addr();
            let _: Option<&tickwire::tls::TlsCodec<Vec<u8>>> = c.tls();
            {
                let r: rest::RestResponse<'_> = $w!(c.get("/time").query("a", "b").query_u64("n", 1).timeout(Duration::from_secs(5)).send())?;
                assert_eq!(r.body_str().unwrap(), "GET /api/time");
            }
            {
                let r = $w!(c.post("/order").header("X-A", "b").json_bytes(b"{}").send())?;
                assert_eq!(r.body_str().unwrap(), "POST /api/order");
            }
            let _ = $w!(c.put("/p").body(b"x").send())?;
            let _ = $w!(c.delete("/d").send())?;
            let _ = $w!(c.patch("/p").json_bytes(b"{}").send())?;
            let _ = $w!(c.head("/h").send())?;
            let _ = $w!(c.request(rest::Method::Get, "/r").send())?;
            let _ = $w!(c.send_with(|w| w.get("/w").finish()))?;
            let mut writer: rest::RequestWriter<Vec<u8>> = c.request_writer(vec![0; 4096]).unwrap();
            let mut reader: rest::ResponseReader<Vec<u8>> = rest::ResponseReader::new(vec![0; 4096]);
            let req = writer.get("/explicit").finish().unwrap();
            let r = $w!(c.send(&req, &mut reader))?;
            assert_eq!(r.body_str().unwrap(), "GET /api/explicit");
            let () = $w!(c.ensure_connected())?;
            let () = c.disconnect();
            Ok(())
        }

        /// The pool.
        pub $($async)? fn rest_pool(base: &str) -> Result<(), rest::Error> {
            let config = rest::PoolConfig {
                size: 2,
                acquire_timeout: Duration::from_secs(1),
                ..rest::PoolConfig::default()
            };
            let pool: rest::ClientPool =
                $w!(rest::ClientPool::with_builder(rest::Client::builder(), base, config))?;
            let _: &rest::PoolConfig = pool.config();
            let _: usize = pool.idle();
            {
                let mut g: rest::PoolGuard<'_> = $w!(pool.acquire())?;
                let r = $w!(g.get("/a").send())?;
                assert_eq!(r.body_str().unwrap(), "GET /api/a");
            }
            let _g: rest::PoolGuard<'_> = $w!(pool.try_acquire())?;
            let _h: rest::PoolGuard<'_> = $w!(pool.acquire_within(Duration::from_secs(1)))?;
            assert!(matches!($w!(pool.try_acquire()), Err(rest::Error::PoolExhausted)));
            let () = $w!(pool.shutdown());
            Ok(())
        }
    };
}

mod blocking {
    use super::*;
    vocabulary!(tickwire::ws, tickwire::rest, now);
}

mod tokio_api {
    use super::*;
    vocabulary!(tickwire::tokio::ws, tickwire::tokio::rest, later, async);
}

// The error types: the tokio modules re-export the blocking ones, so a variant exists
// on both sides or on neither; this stops compiling if a tokio module grows an error
// type of its own under the same name.
const _: fn(tickwire::ws::Error) -> tickwire::tokio::ws::Error = |e| e;
const _: fn(tickwire::rest::Error) -> tickwire::tokio::rest::Error = |e| e;
const _: fn(tickwire::rest::UrlError) -> tickwire::tokio::rest::UrlError = |e| e;

#[test]
fn blocking_calls_run() {
    let (addr, server) = blocking::ws_server(&blocking::ws_server_builder()).unwrap();
    let echo = std::thread::spawn(move || blocking::ws_echo(server));
    blocking::ws_client(&format!("ws://{addr}/v")).unwrap();
    assert_eq!(echo.join().unwrap().unwrap(), 2);

    let base = format!("http://{}/api", tickwire::rest::doc_server());
    blocking::rest_client(&base).unwrap();
    blocking::rest_pool(&base).unwrap();
}

#[test]
fn tokio_calls_run() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (addr, server) = tokio_api::ws_server(&tokio_api::ws_server_builder())
            .await
            .unwrap();
        let echo = tokio::spawn(tokio_api::ws_echo(server));
        tokio_api::ws_client(&format!("ws://{addr}/v"))
            .await
            .unwrap();
        assert_eq!(echo.await.unwrap().unwrap(), 2);

        let base = format!("http://{}/api", tickwire::rest::doc_server());
        tokio_api::rest_client(&base).await.unwrap();
        tokio_api::rest_pool(&base).await.unwrap();
    });
}
