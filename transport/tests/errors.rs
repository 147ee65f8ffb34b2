//! What errors say: each level of a nested error printed once, name resolution as its
//! own variant (a name under `.invalid`, which never resolves: RFC 6761 §6.4), a
//! refused connect naming the address, too-large errors naming their setting.
//! Blocking and tokio, WebSocket and REST. Certificate errors: `errors_tls.rs`.

use std::error::Error as _;
use std::net::{SocketAddr, TcpListener};
use std::thread;

use tickwire::{rest, ws};

const NOWHERE: &str = "tickwire-test.invalid";

/// `e`, then each source, as a report printer would: "a <- caused by: b".
fn report(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut next = e.source();
    while let Some(c) = next {
        s.push_str(" <- caused by: ");
        s.push_str(&c.to_string());
        next = c.source();
    }
    s
}

/// `needle` occurs exactly once in the report and in the `{:#}` form of `e`.
fn once(e: &impl std::error::Error, needle: &str) {
    let r = report(e);
    assert_eq!(r.matches(needle).count(), 1, "{needle:?} in {r:?}");
    let alt = format!("{e:#}");
    assert_eq!(alt.matches(needle).count(), 1, "{needle:?} in {alt:?}");
}

/// A port on 127.0.0.1 nobody listens on.
fn closed_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

#[test]
fn a_nested_error_prints_its_cause_once() {
    let e = ws::Client::connect("ftp://example.com/").unwrap_err();
    once(&e, "scheme must be ws:// or wss://");
    let e = rest::Client::connect("ftp://example.com/").unwrap_err();
    assert!(matches!(e, rest::Error::Url(_)), "{e:?}");
    // Whatever the URL error says, it says it once.
    let inner = match &e {
        rest::Error::Url(u) => u.to_string(),
        _ => unreachable!(),
    };
    once(&e, &inner);

    let addr = closed_port();
    let e = ws::Client::connect(&format!("ws://{addr}/")).unwrap_err();
    let ws::Error::Connect { source, .. } = &e else {
        panic!("{e:?}")
    };
    let cause = source.to_string();
    assert!(cause.contains("refused"), "{cause}");
    once(&e, &cause);
    assert!(e.source().is_some());
}

#[test]
fn dns_failure_is_the_resolve_variant_blocking() {
    let e = ws::Client::connect(&format!("ws://{NOWHERE}/")).unwrap_err();
    match &e {
        ws::Error::Resolve { host, .. } => assert_eq!(host, NOWHERE),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains(NOWHERE), "{e}");
    let e = rest::Client::connect(&format!("http://{NOWHERE}/")).unwrap_err();
    match &e {
        rest::Error::Resolve { host, .. } => assert_eq!(host, NOWHERE),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains(NOWHERE), "{e}");
}

#[test]
fn refused_connect_names_the_address_blocking() {
    let addr = closed_port();
    let e = ws::Client::connect(&format!("ws://{addr}/")).unwrap_err();
    match &e {
        ws::Error::Connect { addr: a, source } => {
            assert_eq!(*a, addr);
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.to_string(), format!("cannot connect to {addr}"));
    let e = rest::Client::connect(&format!("http://{addr}/")).unwrap_err();
    match &e {
        rest::Error::Connect { addr: a, .. } => assert_eq!(*a, addr),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains(&addr.to_string()), "{e}");
}

#[cfg(all(feature = "tokio", unix))]
#[test]
fn dns_failure_and_refused_connect_tokio() {
    use tickwire::tokio::{rest as trest, ws as tws};
    let rt = ::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let e = tws::Client::connect(&format!("ws://{NOWHERE}/"))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, ws::Error::Resolve { host, .. } if host == NOWHERE),
            "{e:?}"
        );
        let e = trest::Client::builder()
            .connect(&format!("http://{NOWHERE}/"))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, rest::Error::Resolve { host, .. } if host == NOWHERE),
            "{e:?}"
        );
        let addr = closed_port();
        let e = tws::Client::connect(&format!("ws://{addr}/"))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, ws::Error::Connect { addr: a, .. } if *a == addr),
            "{e:?}"
        );
        assert!(e.to_string().contains(&addr.to_string()), "{e}");
        let e = trest::Client::builder()
            .connect(&format!("http://{addr}/"))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, rest::Error::Connect { addr: a, .. } if *a == addr),
            "{e:?}"
        );
    });
}

#[test]
fn a_too_large_message_names_the_setting_that_raises_the_limit() {
    let mut server = ws::Server::builder()
        .read_buffer_size(4096)
        .max_message_size(1000)
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut c = server.accept().unwrap();
        c.recv().unwrap_err()
    });
    // Frames of 500 bytes: the message limit, not the frame limit, is what is hit.
    let mut c = ws::Client::builder()
        .fragment_size(500)
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    c.send_binary(&[0; 2000]).unwrap();
    let e = h.join().unwrap();
    assert!(
        matches!(e, ws::Error::Protocol(ws::ProtocolError::MessageTooLarge)),
        "{e:?}"
    );
    let s = e.to_string();
    assert!(s.contains("(close 1009)"), "{s}");
    assert!(s.contains("`max_message_size`"), "{s}");
    assert!(s.contains("1 MiB"), "{s}");

    // Sending: a message the write buffer cannot hold names `write_buffer_size`.
    let mut server = ws::Server::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut c = server.accept().unwrap();
        while c.recv().is_ok_and(|m| m.is_some()) {}
    });
    let mut c = ws::Client::builder()
        .write_buffer_size(1024)
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    let e = c.send_binary(&[0; 4096]).unwrap_err();
    assert!(matches!(e, ws::Error::MessageTooLarge { .. }), "{e:?}");
    assert!(e.to_string().contains("`write_buffer_size`"), "{e}");
    drop(c);
    h.join().unwrap();
}
