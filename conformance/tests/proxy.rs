//! Tunnels through real proxies nobody here wrote, started on 127.0.0.1 by the harness:
//! Debian's tinyproxy (HTTP `CONNECT`, Basic auth) and microsocks (SOCKS5, with and
//! without username/password). Through each: `ws://` and `wss://` to tickwire's own
//! server, `http://` and `https://` REST requests to nginx, blocking and on tokio, and
//! the pool. Targets are named `localhost`: through `socks5h://` and HTTP the proxy
//! resolves them, through `socks5://` tickwire does and sends the address (microsocks'
//! log shows which it was asked for). Refusals (a wrong password: 407 from tinyproxy, a
//! failed RFC 1929 login from microsocks) are typed errors naming the proxy.

use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use tickwire::proxy::{Proxy, ProxyErrorKind, ProxyKind};
use tickwire::rest::{self, ClientPool, PoolConfig, RequestWriter, ResponseReader};
use tickwire::ws::{self, Message};
use tickwire_conformance::{Microsocks, Nginx, Tinyproxy, TlsFiles, skip_or_fail};
#[path = "../../transport/tests/tls_util/mod.rs"]
mod tls_util;
use tls_util::Ca;

/// The proxies of one test, each as the `Proxy` a builder takes, with a label.
struct Proxies {
    _tiny: Tinyproxy,
    _socks: Microsocks,
    _socks_auth: Microsocks,
    list: Vec<(&'static str, Proxy)>,
}

fn proxies(test: &str) -> Option<Proxies> {
    let tiny = skip_or_fail(test, Tinyproxy::start())?;
    let socks = skip_or_fail(test, Microsocks::start(None))?;
    let socks_auth = skip_or_fail(test, Microsocks::start(Some(("alice", "pw-9"))))?;
    let list = vec![
        ("tinyproxy", Proxy::http(&tiny.url()).unwrap()),
        ("microsocks", Proxy::socks5(&socks.url()).unwrap()),
        (
            "microsocks socks5h",
            Proxy::socks5(&socks.url().replace("socks5://", "socks5h://")).unwrap(),
        ),
        ("microsocks+auth", Proxy::socks5(&socks_auth.url()).unwrap()),
    ];
    Some(Proxies {
        _tiny: tiny,
        _socks: socks,
        _socks_auth: socks_auth,
        list,
    })
}

/// A tickwire echo server (TLS when `tls`) for `n` connections; its port.
fn echo_server(tls: Option<&Ca>, n: usize) -> (u16, thread::JoinHandle<()>) {
    let mut b = ws::ServerBuilder::new().handshake_timeout(Duration::from_secs(20));
    if let Some(ca) = tls {
        b = b.tls(ca.server(&["localhost"]).server_config());
    }
    let mut srv = b.bind("127.0.0.1:0").unwrap();
    let port = srv.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        for _ in 0..n {
            let mut c = srv.accept().unwrap();
            loop {
                let echo = match c.recv().unwrap() {
                    Some(Message::Text(t)) => t.to_owned(),
                    Some(_) => continue,
                    None => break,
                };
                c.send_text(&echo).unwrap();
            }
        }
    });
    (port, h)
}

fn ws_roundtrip(c: &mut ws::Client, text: &str) {
    c.send_text(text).unwrap();
    match c.recv().unwrap() {
        Some(Message::Text(t)) => assert_eq!(t, text),
        other => panic!("{other:?}"),
    }
    c.close(ws::CloseCode::NORMAL, "").unwrap();
    while c.recv().unwrap().is_some() {}
}

#[test]
fn ws_and_wss_through_each_proxy() {
    let Some(p) = proxies("ws_and_wss_through_each_proxy") else {
        return;
    };
    let ca = Ca::new("tickwire proxy test CA");
    for (name, proxy) in &p.list {
        let (port, h) = echo_server(None, 1);
        let mut c = ws::ClientBuilder::new()
            .proxy(proxy.clone())
            .connect(&format!("ws://localhost:{port}/feed"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // The socket reaches the proxy, not the server.
        assert_eq!(c.peer_addr().unwrap().port(), proxy.port(), "{name}");
        ws_roundtrip(&mut c, &format!("plain via {name}"));
        h.join().unwrap();

        let (port, h) = echo_server(Some(&ca), 1);
        let mut c = ws::ClientBuilder::new()
            .tls(ca.client_config())
            .proxy(proxy.clone())
            .connect(&format!("wss://localhost:{port}/feed"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.tls().is_some());
        ws_roundtrip(&mut c, &format!("tls via {name}"));
        h.join().unwrap();
    }
}

/// nginx with both listeners, its certificate for `localhost`.
fn nginx(test: &str, ca: &Ca) -> Option<Nginx> {
    let leaf = ca.server(&["localhost"]);
    skip_or_fail(
        test,
        Nginx::start_tls(TlsFiles {
            cert_pem: &leaf.cert,
            key_pem: &leaf.key,
        }),
    )
}

/// `http://localhost:PORT` and `https://localhost:PORT` of `n`.
fn nginx_urls(n: &Nginx) -> [String; 2] {
    let port = |a: Option<SocketAddr>| a.unwrap().port();
    [
        format!("http://localhost:{}", port(Some(n.addr()))),
        format!("https://localhost:{}", port(n.tls_addr())),
    ]
}

#[test]
fn rest_http_and_https_through_each_proxy() {
    let test = "rest_http_and_https_through_each_proxy";
    let Some(p) = proxies(test) else { return };
    let ca = Ca::new("tickwire proxy test CA");
    let Some(n) = nginx(test, &ca) else { return };
    for (name, proxy) in &p.list {
        for url in nginx_urls(&n) {
            let mut c = rest::Client::builder()
                .tls(ca.client_config())
                .proxy(proxy.clone())
                .build(&url)
                .unwrap();
            let mut w = RequestWriter::new(vec![0; 4096], c.host_header()).unwrap();
            let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 64 << 10]);
            for _ in 0..2 {
                let resp = c
                    .send(&w.get("/small.txt").finish().unwrap(), &mut r)
                    .unwrap_or_else(|e| panic!("{name} {url}: {e}"));
                assert_eq!((resp.status(), resp.body()), (200, Nginx::SMALL.as_bytes()));
            }
            // Keep-alive through the tunnel: one connection for both requests.
            assert_eq!(c.stats().connects, 1, "{name} {url}");
        }
    }
    // tinyproxy saw the tunnels, to the name it was given.
    let log = p._tiny.log_text();
    for url in nginx_urls(&n) {
        let target = url.split("//").nth(1).unwrap();
        assert!(
            log.contains(&format!("CONNECT {target} HTTP/1.1")),
            "{target}:\n{log}"
        );
    }
    // The pool takes the same builder.
    let (_, proxy) = &p.list[0];
    let builder = rest::Client::builder()
        .tls(ca.client_config())
        .proxy(proxy.clone());
    let config = PoolConfig {
        size: 2,
        ..PoolConfig::default()
    };
    let pool = ClientPool::with_builder(builder, &nginx_urls(&n)[1], config).unwrap();
    let mut conn = pool.acquire().unwrap();
    let resp = conn.send_with(|w| w.get("/small.txt").finish()).unwrap();
    assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
}

#[test]
fn tokio_ws_and_rest_through_each_proxy() {
    let test = "tokio_ws_and_rest_through_each_proxy";
    let Some(p) = proxies(test) else { return };
    let ca = Ca::new("tickwire proxy test CA");
    let Some(n) = nginx(test, &ca) else { return };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (name, proxy) in &p.list {
        let (port, h) = echo_server(Some(&ca), 1);
        rt.block_on(async {
            let mut c = tickwire::tokio::ws::ClientBuilder::new()
                .tls(ca.client_config())
                .proxy(proxy.clone())
                .connect(&format!("wss://localhost:{port}/"))
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            c.send_text("async").await.unwrap();
            match c.recv().await.unwrap() {
                Some(Message::Text(t)) => assert_eq!(t, "async"),
                other => panic!("{other:?}"),
            }
            c.close(ws::CloseCode::NORMAL, "").await.unwrap();
            while c.recv().await.unwrap().is_some() {}
        });
        h.join().unwrap();
        for url in nginx_urls(&n) {
            rt.block_on(async {
                let mut c = tickwire::tokio::rest::Client::builder()
                    .tls(ca.client_config())
                    .proxy(proxy.clone())
                    .build(&url)
                    .unwrap();
                let mut w = RequestWriter::new(vec![0; 4096], c.host_header()).unwrap();
                let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 64 << 10]);
                let resp = c
                    .send(&w.get("/small.txt").finish().unwrap(), &mut r)
                    .await
                    .unwrap_or_else(|e| panic!("{name} {url}: {e}"));
                assert_eq!((resp.status(), resp.body()), (200, Nginx::SMALL.as_bytes()));
            });
        }
        // The async pool takes the same builder.
        rt.block_on(async {
            let builder = tickwire::tokio::rest::Client::builder()
                .tls(ca.client_config())
                .proxy(proxy.clone());
            let config = PoolConfig {
                size: 2,
                ..PoolConfig::default()
            };
            let url = &nginx_urls(&n)[1];
            let pool = tickwire::tokio::rest::ClientPool::with_builder(builder, url, config)
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut conn = pool.acquire().await.unwrap();
            let resp = conn
                .send_with(|w| w.get("/small.txt").finish())
                .await
                .unwrap();
            assert_eq!(resp.body(), Nginx::SMALL.as_bytes());
        });
    }
}

/// microsocks is asked for `127.0.0.1` through `socks5://` (resolved here) and for
/// `localhost` through `socks5h://` (the name), blocking and on tokio.
#[test]
fn socks5_sends_microsocks_an_address_and_socks5h_the_name() {
    let test = "socks5_sends_microsocks_an_address_and_socks5h_the_name";
    let Some(socks) = skip_or_fail(test, Microsocks::start(None)) else {
        return;
    };
    let local = Proxy::socks5(&socks.url()).unwrap();
    let remote = Proxy::socks5(&socks.url().replace("socks5://", "socks5h://")).unwrap();
    assert_eq!(
        (local.kind(), remote.kind()),
        (ProxyKind::Socks5, ProxyKind::Socks5h)
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (proxy, asked) in [(local, "127.0.0.1"), (remote, "localhost")] {
        let (port, h) = echo_server(None, 2);
        let url = format!("ws://localhost:{port}/");
        let mut c = ws::ClientBuilder::new()
            .proxy(proxy.clone())
            .connect(&url)
            .unwrap_or_else(|e| panic!("{asked}: {e}"));
        ws_roundtrip(&mut c, asked);
        rt.block_on(async {
            let mut c = tickwire::tokio::ws::ClientBuilder::new()
                .proxy(proxy.clone())
                .connect(&url)
                .await
                .unwrap_or_else(|e| panic!("{asked}: {e}"));
            c.send_text(asked).await.unwrap();
            assert_eq!(c.recv().await.unwrap(), Some(Message::Text(asked)));
            c.close(ws::CloseCode::NORMAL, "").await.unwrap();
            while c.recv().await.unwrap().is_some() {}
        });
        h.join().unwrap();
        let line = format!("connected to {asked}:{port}");
        let log = socks.log_text();
        assert_eq!(log.matches(&line).count(), 2, "{line:?} twice in:\n{log}");
    }
}

#[test]
fn refused_credentials_are_typed_errors_naming_the_proxy() {
    let test = "refused_credentials_are_typed_errors_naming_the_proxy";
    let Some(tiny) = skip_or_fail(test, Tinyproxy::start()) else {
        return;
    };
    let Some(socks) = skip_or_fail(test, Microsocks::start(Some(("alice", "pw-9")))) else {
        return;
    };
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = target.local_addr().unwrap().port();
    let url = format!("ws://localhost:{port}/");

    let wrong = Proxy::http(&tiny.url_wrong_password()).unwrap();
    let none = Proxy::http(&format!("http://{}", tiny.addr())).unwrap();
    // tinyproxy: 407 without credentials, 401 for wrong ones.
    for (proxy, status) in [(none, 407), (wrong, 401)] {
        match ws::ClientBuilder::new().proxy(proxy).connect(&url) {
            Err(ws::Error::Proxy(e)) => {
                assert_eq!(e.kind(), &ProxyErrorKind::AuthRejected { status });
                assert_eq!(e.protocol(), ProxyKind::Http);
                assert_eq!(e.proxy(), tiny.addr().to_string());
                assert!(e.to_string().contains(&tiny.addr().to_string()), "{e}");
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
    let wrong = Proxy::socks5(&format!("socks5://alice:nope@{}", socks.addr())).unwrap();
    match rest::Client::builder()
        .proxy(wrong)
        .connect(&format!("http://localhost:{port}"))
    {
        Err(rest::Error::Proxy(e)) => {
            assert!(
                matches!(e.kind(), ProxyErrorKind::AuthRejected { status } if *status != 0),
                "{e}"
            );
            assert_eq!(e.proxy(), socks.addr().to_string());
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let anonymous = Proxy::socks5(&format!("socks5://{}", socks.addr())).unwrap();
    match ws::ClientBuilder::new().proxy(anonymous).connect(&url) {
        Err(ws::Error::Proxy(e)) => assert_eq!(e.kind(), &ProxyErrorKind::NoAcceptableAuth),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // A target the proxy cannot reach: tinyproxy's own refusal, typed.
    let closed = tickwire_conformance::free_port().unwrap();
    let ok = Proxy::http(&tiny.url()).unwrap();
    match ws::ClientBuilder::new()
        .proxy(ok)
        .connect(&format!("ws://127.0.0.1:{closed}/"))
    {
        Err(ws::Error::Proxy(e)) => {
            assert!(
                matches!(e.kind(), ProxyErrorKind::Refused { status: 500, .. }),
                "{e}"
            )
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}
