//! Who resolves the target's name through a SOCKS5 proxy (issue 37), as curl and
//! reqwest do it: `socks5://` resolves it here and sends the proxy an address (ATYP 1
//! or 4), `socks5h://` sends the name (ATYP 3). The proxy here is a tiny SOCKS5 server
//! on 127.0.0.1 that refuses names (reply 8, address type not supported), tunnels to
//! addresses, and records what it was asked; the target is `localhost`. Through it:
//! the blocking and tokio ws clients and the blocking and tokio REST clients. (microsocks,
//! which resolves names itself: conformance/tests/proxy.rs.)

#![cfg(all(feature = "tokio", unix))]

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use tickwire::proxy::{Proxy, ProxyErrorKind, ProxyKind};
use tickwire::{rest, ws};

/// What a CONNECT request asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asked {
    Addr(IpAddr, u16),
    Name(String, u16),
}

/// A SOCKS5 proxy (no auth) that tunnels to addresses and answers names with reply 8;
/// every request recorded.
struct NoNames {
    addr: SocketAddr,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl NoNames {
    fn start() -> NoNames {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        thread::spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { return };
                let log = log.clone();
                thread::spawn(move || {
                    let _ = serve(s, &log);
                });
            }
        });
        NoNames { addr, asked }
    }

    fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}", self.addr)
    }

    fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }
}

fn serve(mut s: TcpStream, log: &Mutex<Vec<Asked>>) -> std::io::Result<()> {
    let mut b = [0u8; 2];
    s.read_exact(&mut b)?;
    let mut methods = vec![0u8; usize::from(b[1])];
    s.read_exact(&mut methods)?;
    assert_eq!(b[0], 5);
    s.write_all(&[5, 0])?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head)?;
    assert_eq!(&head[..3], &[5, 1, 0], "a CONNECT request");
    let asked = match head[3] {
        1 => {
            let mut ip = [0u8; 4];
            s.read_exact(&mut ip)?;
            Asked::Addr(IpAddr::V4(Ipv4Addr::from(ip)), read_port(&mut s)?)
        }
        4 => {
            let mut ip = [0u8; 16];
            s.read_exact(&mut ip)?;
            Asked::Addr(IpAddr::V6(Ipv6Addr::from(ip)), read_port(&mut s)?)
        }
        3 => {
            let mut len = [0u8; 1];
            s.read_exact(&mut len)?;
            let mut name = vec![0u8; usize::from(len[0])];
            s.read_exact(&mut name)?;
            Asked::Name(String::from_utf8(name).unwrap(), read_port(&mut s)?)
        }
        t => panic!("ATYP {t}"),
    };
    log.lock().unwrap().push(asked.clone());
    let Asked::Addr(ip, port) = asked else {
        // Address type not supported: this proxy does not resolve names.
        return s.write_all(&[5, 8, 0, 1, 0, 0, 0, 0, 0, 0]);
    };
    let up = match TcpStream::connect((ip, port)) {
        Ok(up) => up,
        Err(_) => return s.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]),
    };
    s.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0])?;
    relay(s, up)
}

fn read_port(s: &mut TcpStream) -> std::io::Result<u16> {
    let mut p = [0u8; 2];
    s.read_exact(&mut p)?;
    Ok(u16::from_be_bytes(p))
}

/// Copy both ways until either side ends.
fn relay(a: TcpStream, b: TcpStream) -> std::io::Result<()> {
    let (mut a2, mut b2) = (a.try_clone()?, b.try_clone()?);
    let t = thread::spawn(move || {
        let _ = std::io::copy(&mut b2, &mut a2);
        let _ = a2.shutdown(std::net::Shutdown::Write);
    });
    let (mut a, mut b) = (a, b);
    let _ = std::io::copy(&mut a, &mut b);
    let _ = b.shutdown(std::net::Shutdown::Write);
    let _ = t.join();
    Ok(())
}

/// A tickwire echo server for `n` connections; its port.
fn ws_echo(n: usize) -> u16 {
    let mut srv = ws::Server::bind("127.0.0.1:0").unwrap();
    let port = srv.local_addr().unwrap().port();
    thread::spawn(move || {
        for _ in 0..n {
            let mut c = srv.accept().unwrap();
            while let Ok(Some(())) = c.recv_with(|m, tx| match m {
                ws::Message::Text(t) => tx.send_text(t),
                _ => Ok(()),
            }) {}
        }
    });
    port
}

/// A minimal HTTP/1.1 server: one request per connection, `200 OK` with body "ok".
fn http_ok(n: usize) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for _ in 0..n {
            let (mut s, _) = l.accept().unwrap();
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if s.read(&mut b).unwrap_or(0) == 0 {
                    break;
                }
                head.push(b[0]);
            }
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    port
}

const T: Duration = Duration::from_secs(20);

#[test]
fn socks5_sends_an_address_and_socks5h_a_name_blocking() {
    let proxy = NoNames::start();
    let local = Proxy::socks5(&proxy.url("socks5")).unwrap();
    assert_eq!(local.kind(), ProxyKind::Socks5);
    let port = ws_echo(1);
    let mut c = ws::ClientBuilder::new()
        .connect_timeout(T)
        .proxy(local.clone())
        .connect(&format!("ws://localhost:{port}/"))
        .expect("socks5:// resolves localhost here and sends its address");
    c.send_text("via an address").unwrap();
    assert_eq!(c.recv().unwrap(), Some(ws::Message::Text("via an address")));
    assert_eq!(
        proxy.asked(),
        [Asked::Addr(IpAddr::V4(Ipv4Addr::LOCALHOST), port)]
    );

    // socks5h:// sends the name, which this proxy refuses: a typed error naming it.
    let remote = Proxy::socks5(&proxy.url("socks5h")).unwrap();
    assert_eq!(remote.kind(), ProxyKind::Socks5h);
    let e = ws::ClientBuilder::new()
        .connect_timeout(T)
        .proxy(remote.clone())
        .connect(&format!("ws://localhost:{port}/"))
        .unwrap_err();
    let ws::Error::Proxy(e) = e else {
        panic!("{e:?}")
    };
    assert_eq!(e.kind(), &ProxyErrorKind::SocksReply(8));
    assert_eq!(e.protocol(), ProxyKind::Socks5h);
    assert_eq!(proxy.asked()[1], Asked::Name("localhost".into(), port));

    // REST: the same dialer.
    let http = http_ok(1);
    let mut rc = rest::Client::builder()
        .connect_timeout(T)
        .proxy(local)
        .connect(&format!("http://localhost:{http}"))
        .unwrap();
    let resp = rc.get("/").send().unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        proxy.asked()[2],
        Asked::Addr(IpAddr::V4(Ipv4Addr::LOCALHOST), http)
    );
    let e = rest::Client::builder()
        .connect_timeout(T)
        .proxy(remote)
        .connect(&format!("http://localhost:{http}"))
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(&e, rest::Error::Proxy(p) if p.kind() == &ProxyErrorKind::SocksReply(8)),
        "{e:?}"
    );
    assert_eq!(proxy.asked()[3], Asked::Name("localhost".into(), http));
}

/// An IP literal target is an address under both schemes.
#[test]
fn an_ip_target_is_an_address_under_both_schemes() {
    let proxy = NoNames::start();
    let port = ws_echo(2);
    for scheme in ["socks5", "socks5h"] {
        let mut c = ws::ClientBuilder::new()
            .connect_timeout(T)
            .proxy(Proxy::socks5(&proxy.url(scheme)).unwrap())
            .connect(&format!("ws://127.0.0.1:{port}/"))
            .unwrap_or_else(|e| panic!("{scheme}: {e}"));
        c.send_text(scheme).unwrap();
        assert_eq!(c.recv().unwrap(), Some(ws::Message::Text(scheme)));
    }
    let v4 = Asked::Addr(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    assert_eq!(proxy.asked(), [v4.clone(), v4]);
}

#[test]
fn socks5_sends_an_address_and_socks5h_a_name_tokio() {
    let proxy = NoNames::start();
    let port = ws_echo(1);
    let http = http_ok(1);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let local = Proxy::socks5(&proxy.url("socks5")).unwrap();
        let remote = Proxy::socks5(&proxy.url("socks5h")).unwrap();
        let mut c = tickwire::tokio::ws::ClientBuilder::new()
            .connect_timeout(T)
            .proxy(local.clone())
            .connect(&format!("ws://localhost:{port}/"))
            .await
            .expect("socks5:// resolves localhost here");
        c.send_text("tokio").await.unwrap();
        assert_eq!(c.recv().await.unwrap(), Some(ws::Message::Text("tokio")));
        let e = tickwire::tokio::ws::ClientBuilder::new()
            .connect_timeout(T)
            .proxy(remote.clone())
            .connect(&format!("ws://localhost:{port}/"))
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&e, ws::Error::Proxy(p) if p.kind() == &ProxyErrorKind::SocksReply(8)),
            "{e:?}"
        );

        let mut rc = tickwire::tokio::rest::Client::builder()
            .connect_timeout(T)
            .proxy(local)
            .connect(&format!("http://localhost:{http}"))
            .await
            .unwrap();
        let resp = rc.get("/").send().await.unwrap();
        assert_eq!(resp.status(), 200);
        let e = tickwire::tokio::rest::Client::builder()
            .connect_timeout(T)
            .proxy(remote)
            .connect(&format!("http://localhost:{http}"))
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&e, rest::Error::Proxy(p) if p.kind() == &ProxyErrorKind::SocksReply(8)),
            "{e:?}"
        );
    });
    let v4 = |p| Asked::Addr(IpAddr::V4(Ipv4Addr::LOCALHOST), p);
    let name = |p| Asked::Name("localhost".into(), p);
    assert_eq!(proxy.asked(), [v4(port), name(port), v4(http), name(http)]);
}
