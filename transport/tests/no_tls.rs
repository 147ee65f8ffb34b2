//! A build without the `tls` feature (`cargo test -p tickwire --no-default-features
//! --features tokio`): `ws://` and `http://` work, `wss://` and `https://` are the typed
//! error `TlsDisabled` that says to enable the feature, blocking and on tokio.

#![cfg(all(not(feature = "tls"), feature = "tokio", unix))]

use std::net::TcpListener;

use tickwire::{rest, ws};

#[test]
fn wss_and_https_say_to_enable_the_feature() {
    // A listener, so the TCP connect succeeds and the refusal is about TLS alone.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    match ws::Client::connect(&format!("wss://{addr}/")) {
        Err(ws::Error::TlsDisabled) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
    let e = ws::Error::TlsDisabled.to_string();
    assert!(e.contains("`tls` feature"), "{e}");
    match rest::Client::connect(&format!("https://{addr}")) {
        Err(rest::Error::TlsDisabled) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(
        rest::Error::TlsDisabled
            .to_string()
            .contains("`tls` feature")
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        match tickwire::tokio::ws::Client::connect(&format!("wss://{addr}/")).await {
            Err(ws::Error::TlsDisabled) => {}
            other => panic!("{:?}", other.map(|_| ())),
        }
        match tickwire::tokio::rest::Client::connect(&format!("https://{addr}")).await {
            Err(rest::Error::TlsDisabled) => {}
            other => panic!("{:?}", other.map(|_| ())),
        }
    });
}

#[test]
fn plain_ws_and_http_work_without_tls() {
    let mut srv = ws::Server::bind("127.0.0.1:0").unwrap();
    let addr = srv.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let mut c = srv.accept().unwrap();
        let text = match c.recv().unwrap() {
            Some(ws::Message::Text(t)) => t.to_owned(),
            other => panic!("{other:?}"),
        };
        c.send_text(&text).unwrap();
    });
    let mut c = ws::Client::connect(&format!("ws://{addr}/")).unwrap();
    c.send_text("no tls").unwrap();
    assert!(matches!(
        c.recv().unwrap(),
        Some(ws::Message::Text("no tls"))
    ));
    h.join().unwrap();
}
