//! wss:// over 127.0.0.1: tickwire client <-> tickwire TLS server with certificates
//! made by rcgen at test time. Echo both ways (blocking and evented), mTLS, TLS 1.2,
//! and the failures: untrusted CA, wrong host name, expired certificate, TLS 1.2-only
//! server for a TLS 1.3-only client, garbled and truncated records. Each failure is a
//! typed `Error::Tls`, never a panic.

#![cfg(feature = "tls")]

mod tls_util;
mod ws_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tickwire::tls::{TlsConfig, TlsErrorKind, TlsServerConfig, rustls};
use tickwire::ws::{Client, ClientBuilder, CloseCode, Error, Message, Server, ServerConnection};
use tls_util::Ca;
use ws_util::{echo, pattern};

const T: Duration = Duration::from_secs(20);

fn client(config: TlsConfig) -> ClientBuilder {
    Client::builder()
        .tls(config)
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .handshake_timeout(T)
}

/// A TLS server on 127.0.0.1:0 that accepts one connection and hands the result to `f`.
fn serve<F>(tls: TlsServerConfig, f: F) -> (SocketAddr, JoinHandle<()>)
where
    F: FnOnce(Result<ServerConnection, Error>) + Send + 'static,
{
    let mut server = Server::builder()
        .tls(tls)
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .handshake_timeout(T)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    (
        addr,
        thread::spawn(move || f(server.accept().and_then(|mut c| c.handshake().map(|_| c)))),
    )
}

fn tls_kind(e: &Error) -> TlsErrorKind {
    match e {
        Error::Tls { error, .. } => error.kind(),
        other => panic!("not a TLS error: {other:?}"),
    }
}

/// Close from the client and see the handshake through.
fn close(c: &mut Client) {
    c.close(CloseCode::NORMAL, "bye").unwrap();
    assert!(matches!(c.recv().unwrap(), Some(Message::Close(_))));
    assert_eq!(c.recv().unwrap(), None);
}

#[test]
fn wss_echo_blocking_both_directions() {
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);
    let (addr, h) = serve(leaf.server_config(), |c| {
        let mut c = c.unwrap();
        assert!(c.tls().is_some());
        // The server speaks first, then echoes.
        c.send_text("welcome").unwrap();
        echo(c);
    });
    let mut c = client(ca.client_config())
        .connect(&format!("wss://localhost:{}/feed", addr.port()))
        .unwrap();
    let tls = c.tls().unwrap();
    assert_eq!(
        tls.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    let leaf_der = CertificateDer::from_pem_slice(leaf.cert.as_bytes()).unwrap();
    assert_eq!(tls.peer_certificates().unwrap()[0], leaf_der);
    assert_eq!(c.recv().unwrap(), Some(Message::Text("welcome")));
    for size in [0, 1, 40, 128, 16_384, 16_385, 100_000, 700_000] {
        let data = pattern(size);
        c.send_binary(&data).unwrap();
        assert_eq!(
            c.recv().unwrap(),
            Some(Message::Binary(&data[..])),
            "{size}"
        );
    }
    c.send_text(r#"{"px":101.25,"qty":3}"#).unwrap();
    assert_eq!(
        c.recv().unwrap(),
        Some(Message::Text(r#"{"px":101.25,"qty":3}"#))
    );
    // What the handshake agreed on outlives rustls's state (records mode).
    let tls = c.tls().unwrap();
    assert!(tls.is_records_mode());
    assert_eq!(
        tls.negotiated_cipher_suite().map(|s| s.version().version),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    assert_eq!(tls.peer_certificates().unwrap()[0], leaf_der);
    close(&mut c);
    h.join().unwrap();
}

/// Evented server (its own poll, one thread) and evented client (another poll): the
/// TLS and WebSocket handshakes and a burst under backpressure, nothing lost.
#[test]
fn wss_evented_both_sides_under_backpressure() {
    // 32 MiB in all, and the server stalls once at the start: more than loopback's
    // autotuned socket buffers (a few MiB) can absorb, so the client's bounded write
    // buffer must fill however fast the machine is.
    const COUNT: usize = 1000;
    const SIZE: usize = 32 * 1024;
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);
    let mut server = Server::builder()
        .tls(leaf.server_config())
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    // Set by the client when a send meets backpressure: the server, stalled after the
    // first message, reads on from then (an event, not a guess of how long the client
    // takes to fill the socket and its buffer).
    let full = Arc::new(AtomicBool::new(false));
    let seen_full = Arc::clone(&full);
    let h = thread::spawn(move || {
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut server, Token(0), Interest::READABLE)
            .unwrap();
        let mut events = Events::with_capacity(16);
        let deadline = Instant::now() + T;
        let mut conn: Option<ServerConnection> = None;
        let mut got = 0;
        let mut scratch = Vec::new();
        loop {
            assert!(Instant::now() < deadline, "server stalled at {got}");
            poll.poll(&mut events, Some(Duration::from_millis(50)))
                .unwrap();
            if conn.is_none()
                && let Some(mut c) = server.try_accept().unwrap()
            {
                poll.registry()
                    .register(&mut c, Token(1), Interest::READABLE | Interest::WRITABLE)
                    .unwrap();
                conn = Some(c);
            }
            let Some(c) = conn.as_mut() else { continue };
            if c.wants_write() {
                c.flush().unwrap();
            }
            loop {
                match c.try_recv().unwrap() {
                    Some(Message::Binary(b)) => {
                        if got == 0 {
                            // Stop reading once the burst is under way, until the
                            // client's buffer is full.
                            while !seen_full.load(Ordering::SeqCst) {
                                assert!(Instant::now() < deadline, "no backpressure");
                                thread::sleep(Duration::from_millis(2));
                            }
                        }
                        assert_eq!(b.len(), SIZE);
                        assert_eq!(&b[..8], &(got as u64).to_le_bytes(), "order");
                        assert!(b[8..].iter().all(|&x| x == got as u8), "corrupt");
                        got += 1;
                        // Echo every 50th message back: the client reads while sending.
                        if got % 50 == 0 {
                            scratch.clear();
                            scratch.extend_from_slice(&b[..8]);
                            loop {
                                match c.send_binary(&scratch) {
                                    Ok(()) => break,
                                    Err(Error::Backpressure) => {
                                        c.flush().unwrap();
                                    }
                                    Err(e) => panic!("{e}"),
                                }
                            }
                        }
                    }
                    Some(Message::Close(_)) => {}
                    Some(other) => panic!("{other:?}"),
                    None => break,
                }
            }
            if c.is_closed() {
                assert_eq!(got, COUNT);
                return;
            }
        }
    });

    let mut c = client(ca.client_config())
        .write_buffer_size(128 * 1024)
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap();
    c.set_blocking(false).unwrap();
    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(&mut c, Token(1), Interest::READABLE | Interest::WRITABLE)
        .unwrap();
    let mut events = Events::with_capacity(8);
    let deadline = Instant::now() + T;
    let mut msg = vec![0u8; SIZE];
    let (mut echoed, mut backpressure) = (0, 0);
    let drain = |c: &mut Client, echoed: &mut usize| {
        while let Some(m) = c.try_recv().unwrap() {
            match m {
                Message::Binary(b) => {
                    *echoed += 1;
                    assert_eq!(b, &((*echoed * 50 - 1) as u64).to_le_bytes());
                }
                other => panic!("{other:?}"),
            }
        }
    };
    for i in 0..COUNT {
        msg[..8].copy_from_slice(&(i as u64).to_le_bytes());
        msg[8..].fill(i as u8);
        loop {
            match c.send_binary(&msg) {
                Ok(()) => break,
                Err(Error::Backpressure) => {
                    backpressure += 1;
                    full.store(true, Ordering::SeqCst);
                    while {
                        c.flush().unwrap();
                        c.wants_write()
                    } {
                        assert!(Instant::now() < deadline, "stalled");
                        poll.poll(&mut events, Some(Duration::from_millis(50)))
                            .unwrap();
                        drain(&mut c, &mut echoed);
                    }
                }
                Err(e) => panic!("{e}"),
            }
        }
        drain(&mut c, &mut echoed);
    }
    while {
        c.flush().unwrap();
        c.wants_write()
    } {
        poll.poll(&mut events, Some(Duration::from_millis(50)))
            .unwrap();
    }
    while echoed < COUNT / 50 {
        assert!(Instant::now() < deadline, "echoes missing: {echoed}");
        poll.poll(&mut events, Some(Duration::from_millis(50)))
            .unwrap();
        drain(&mut c, &mut echoed);
    }
    assert!(backpressure > 0, "the burst never met a full buffer");
    c.close(CloseCode::NORMAL, "").unwrap();
    while !c.is_closed() {
        assert!(Instant::now() < deadline, "close not answered");
        match c.try_recv().unwrap() {
            Some(Message::Close(_)) => {}
            Some(other) => panic!("{other:?}"),
            None => {
                if c.wants_write() {
                    c.flush().unwrap();
                }
                poll.poll(&mut events, Some(Duration::from_millis(50)))
                    .unwrap()
            }
        }
    }
    h.join().unwrap();
}

#[test]
fn mtls_client_certificate_required() {
    let ca = Ca::new("test CA");
    let client_ca = Ca::new("client CA");
    let leaf = ca.server(&["localhost"]);
    let server_tls = TlsServerConfig::builder(leaf.cert.as_bytes(), leaf.key.as_bytes())
        .unwrap()
        .require_client_cert_pem(client_ca.pem().as_bytes())
        .unwrap()
        .build()
        .unwrap();

    // With a certificate from the client CA: accepted.
    let (addr, h) = serve(server_tls.clone(), |c| echo(c.unwrap()));
    let id = client_ca.client();
    let tls = TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(ca.pem().as_bytes())
        .unwrap()
        .client_cert_pem(id.cert.as_bytes(), id.key.as_bytes())
        .unwrap()
        .build()
        .unwrap();
    let mut c = client(tls)
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap();
    c.send_text("authenticated").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Text("authenticated")));
    close(&mut c);
    h.join().unwrap();

    // Without one: the server refuses, both sides see a TLS error.
    let (addr, h) = serve(server_tls, |c| {
        let e = c.unwrap_err();
        assert_eq!(tls_kind(&e), TlsErrorKind::Certificate, "{e:?}");
    });
    let e = client(ca.client_config())
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap_err();
    assert_eq!(tls_kind(&e), TlsErrorKind::AlertReceived, "{e:?}");
    h.join().unwrap();
}

/// Start a server that expects its handshake to fail and check it did with a TLS error.
fn failing_server(tls: TlsServerConfig) -> (SocketAddr, JoinHandle<()>) {
    serve(tls, |c| match c {
        Err(Error::Tls { .. }) => {}
        other => panic!("server: {other:?}"),
    })
}

#[test]
fn untrusted_ca_is_unknown_issuer() {
    let ca = Ca::new("test CA");
    let stranger = Ca::new("some other CA");
    let (addr, h) = failing_server(ca.server(&["localhost"]).server_config());
    let e = client(stranger.client_config())
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap_err();
    assert_eq!(tls_kind(&e), TlsErrorKind::UnknownIssuer, "{e:?}");
    h.join().unwrap();
}

#[test]
fn wrong_host_name_is_a_name_mismatch() {
    let ca = Ca::new("test CA");
    // The certificate names example.test only; we connect to 127.0.0.1.
    let (addr, h) = failing_server(ca.server(&["example.test"]).server_config());
    let e = client(ca.client_config())
        .connect(&format!("wss://{addr}/"))
        .unwrap_err();
    assert_eq!(tls_kind(&e), TlsErrorKind::NameMismatch, "{e:?}");
    h.join().unwrap();
}

#[test]
fn expired_certificate_is_expired() {
    let ca = Ca::new("test CA");
    let (addr, h) = failing_server(ca.expired_server(&["localhost"]).server_config());
    let e = client(ca.client_config())
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap_err();
    assert_eq!(tls_kind(&e), TlsErrorKind::Expired, "{e:?}");
    h.join().unwrap();
}

/// A rustls server config that speaks TLS 1.2 only.
fn tls12_only(leaf: &tls_util::Leaf) -> TlsServerConfig {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = vec![CertificateDer::from_pem_slice(leaf.cert.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(leaf.key.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(tickwire::tls::provider())
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    TlsServerConfig::from_server_config(Arc::new(config))
}

#[test]
fn tls12_only_server() {
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);

    // A default client negotiates TLS 1.2 and works.
    let (addr, h) = serve(tls12_only(&leaf), |c| echo(c.unwrap()));
    let mut c = client(ca.client_config())
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap();
    let version = c.tls().unwrap().protocol_version();
    assert_eq!(version, Some(rustls::ProtocolVersion::TLSv1_2));
    let data = pattern(70_000);
    c.send_binary(&data).unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Binary(&data[..])));
    close(&mut c);
    h.join().unwrap();

    // A TLS 1.3-only client refuses it.
    let (addr, h) = failing_server(tls12_only(&leaf));
    let tls13 = TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(ca.pem().as_bytes())
        .unwrap()
        .tls13_only()
        .build()
        .unwrap();
    let e = client(tls13)
        .connect(&format!("wss://localhost:{}/", addr.port()))
        .unwrap_err();
    assert_eq!(tls_kind(&e), TlsErrorKind::Incompatible, "{e:?}");
    h.join().unwrap();
}

#[test]
fn alpn_and_no_verify() {
    let ca = Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);
    let server_tls = TlsServerConfig::builder(leaf.cert.as_bytes(), leaf.key.as_bytes())
        .unwrap()
        .alpn(&[b"tickwire/1"])
        .build()
        .unwrap();
    let (addr, h) = serve(server_tls, |c| echo(c.unwrap()));
    // No CA given at all: only the explicit no-verification mode connects.
    let tls = TlsConfig::builder()
        .dangerous_no_verify()
        .alpn(&[b"other", b"tickwire/1"])
        .build()
        .unwrap();
    let mut c = client(tls).connect(&format!("wss://{addr}/")).unwrap();
    assert_eq!(c.tls().unwrap().alpn_protocol(), Some(&b"tickwire/1"[..]));
    c.send_text("unverified").unwrap();
    assert_eq!(c.recv().unwrap(), Some(Message::Text("unverified")));
    close(&mut c);
    h.join().unwrap();
}

/// What the proxy does to the next server-to-client bytes once armed.
const PASS: u8 = 0;
const GARBLE: u8 = 1;
const TRUNCATE: u8 = 2;

/// A TCP proxy on 127.0.0.1 in front of `upstream` for one connection. Client-to-server
/// bytes pass; server-to-client bytes pass until `mode` is set, then the next chunk is
/// garbled (one bit of its last byte, in the record's tag) or cut in half and the
/// connection closed.
fn proxy(upstream: SocketAddr, mode: Arc<AtomicU8>) -> SocketAddr {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (down, _) = listener.accept().unwrap();
        let up = StdStream::connect(upstream).unwrap();
        let (mut down_r, mut up_w) = (down.try_clone().unwrap(), up.try_clone().unwrap());
        thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = down_r.read(&mut buf) {
                if n == 0 || up_w.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = up_w.shutdown(std::net::Shutdown::Write);
        });
        let (mut up_r, mut down_w) = (up, down);
        let mut buf = [0u8; 65536];
        while let Ok(n) = up_r.read(&mut buf) {
            if n == 0 {
                break;
            }
            match mode.load(Ordering::SeqCst) {
                GARBLE => {
                    buf[n - 1] ^= 0x01;
                    mode.store(PASS, Ordering::SeqCst);
                }
                TRUNCATE => {
                    let _ = down_w.write_all(&buf[..n / 2]);
                    let _ = down_w.shutdown(std::net::Shutdown::Both);
                    return;
                }
                _ => {}
            }
            if down_w.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = down_w.shutdown(std::net::Shutdown::Write);
    });
    addr
}

/// Connect through the proxy, arm it with `how`, have the server send one message,
/// and return the client's error.
fn damaged(how: u8) -> Error {
    let ca = Ca::new("test CA");
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (addr, h) = serve(ca.server(&["localhost"]).server_config(), move |c| {
        let mut c = c.unwrap();
        go_rx.recv().unwrap();
        c.send_text("a message the proxy will damage").unwrap();
        // The client fails; whatever happens next here is not under test.
        let _ = c.recv();
    });
    let mode = Arc::new(AtomicU8::new(PASS));
    let via = proxy(addr, mode.clone());
    let mut c = client(ca.client_config())
        .connect(&format!("wss://localhost:{}/", via.port()))
        .unwrap();
    mode.store(how, Ordering::SeqCst);
    go_tx.send(()).unwrap();
    let e = c.recv().unwrap_err();
    assert!(c.is_closed());
    // Every later call reports the connection as finished, without a panic.
    assert!(c.send_text("after").is_err());
    drop(c);
    h.join().unwrap();
    e
}

#[test]
fn garbled_record_is_a_decrypt_error() {
    let e = damaged(GARBLE);
    assert_eq!(tls_kind(&e), TlsErrorKind::Decrypt, "{e:?}");
}

#[test]
fn truncated_record_is_unexpected_eof() {
    let e = damaged(TRUNCATE);
    assert_eq!(tls_kind(&e), TlsErrorKind::Truncated, "{e:?}");
}

/// Bytes that are not TLS at all, sent to the TLS server: refused with a typed error.
#[test]
fn plaintext_to_a_tls_server() {
    let ca = Ca::new("test CA");
    let (addr, h) = failing_server(ca.server(&["localhost"]).server_config());
    let mut s = StdStream::connect(addr).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n")
        .unwrap();
    // The server answers with an alert record (content type 21) and closes.
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    assert_eq!(answer.first(), Some(&21), "{answer:?}");
    h.join().unwrap();
}

/// `TlsStream` on both ends: data, then close_notify and FIN from the client, seen by
/// the server as a clean end (`Ok(0)`); a FIN without close_notify is a truncation.
#[test]
fn tls_stream_close_notify_versus_bare_fin() {
    use mio::net::{TcpListener, TcpStream};
    use tickwire::tls::{TlsStream, tls_error};

    fn pump_read(s: &mut TlsStream<TcpStream>, poll: &mut Poll) -> (Vec<u8>, std::io::Result<()>) {
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + T;
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            assert!(Instant::now() < deadline, "stalled");
            match s.read(&mut buf) {
                Ok(0) => return (got, Ok(())),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if s.has_pending() {
                        s.flush_pending().unwrap();
                    }
                    poll.poll(&mut events, Some(Duration::from_millis(50)))
                        .unwrap();
                }
                Err(e) => return (got, Err(e)),
            }
        }
    }

    let ca = Ca::new("test CA");
    let server_tls = ca.server(&["localhost"]).server_config();
    for clean in [true, false] {
        let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let client_tls = ca.client_config();
        let h = thread::spawn(move || {
            let mut s =
                TlsStream::client(TcpStream::connect(addr).unwrap(), &client_tls, "localhost")
                    .unwrap();
            let mut poll = Poll::new().unwrap();
            poll.registry()
                .register(&mut s, Token(0), Interest::READABLE | Interest::WRITABLE)
                .unwrap();
            let mut events = Events::with_capacity(4);
            let deadline = Instant::now() + T;
            let mut data: &[u8] = b"last words";
            while !data.is_empty() || !s.flush_pending().unwrap() {
                assert!(Instant::now() < deadline, "client stalled");
                match s.write(data) {
                    Ok(n) => data = &data[n..],
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        poll.poll(&mut events, Some(Duration::from_millis(50)))
                            .unwrap();
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            if clean {
                s.shutdown_write().unwrap();
            } else {
                s.get_ref().shutdown(std::net::Shutdown::Write).unwrap();
            }
            // Keep the socket open until the server has read everything.
            let _ = pump_read(&mut s, &mut poll);
        });
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut listener, Token(0), Interest::READABLE)
            .unwrap();
        let mut events = Events::with_capacity(4);
        let sock = loop {
            match listener.accept() {
                Ok((sock, _)) => break sock,
                Err(_) => poll
                    .poll(&mut events, Some(Duration::from_millis(50)))
                    .unwrap(),
            }
        };
        let mut s = TlsStream::server(sock, &server_tls).unwrap();
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut s, Token(1), Interest::READABLE | Interest::WRITABLE)
            .unwrap();
        let (got, end) = pump_read(&mut s, &mut poll);
        assert_eq!(got, b"last words");
        if clean {
            end.unwrap();
            assert!(s.codec().is_peer_closed());
        } else {
            let e = end.unwrap_err();
            assert_eq!(
                tls_error(&e).map(|t| t.kind()),
                Some(TlsErrorKind::Truncated)
            );
        }
        s.shutdown_write().unwrap();
        h.join().unwrap();
    }
}
