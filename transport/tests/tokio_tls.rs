//! wss:// through the tokio adapter over 127.0.0.1: async client <-> async TLS server
//! (the transport's TLS stream, the codec's TlsCodec), async client <-> blocking TLS
//! server, and a certificate failure, with an rcgen PKI made at test time.
#![cfg(all(feature = "tokio", feature = "tls", unix))]

mod tls_util;

use std::time::Duration;

use tickwire::tokio::ws::{Client, CloseCode, Error, Message, Server};
use tls_util::Ca;

const T: Duration = Duration::from_secs(20);

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 253) as u8).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wss_echo_between_async_client_and_async_server() {
    let ca = Ca::new("tokio test CA");
    let leaf = ca.server(&["localhost"]);
    let mut server = Server::builder()
        .tls(leaf.server_config())
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .read_timeout(Some(T))
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let h = tokio::spawn(async move {
        let mut s = server.accept().await.unwrap();
        assert!(s.tls().is_some());
        let mut scratch = Vec::new();
        while let Some(msg) = s.recv().await.unwrap() {
            if let Message::Binary(b) = msg {
                scratch.clear();
                scratch.extend_from_slice(b);
                s.send_binary(&scratch).await.unwrap();
            }
        }
    });
    let mut c = Client::builder()
        .tls(ca.client_config())
        .max_message_size(2 << 20)
        .write_buffer_size(2 << 20)
        .read_timeout(Some(T))
        .connect(&format!("wss://localhost:{port}/feed"))
        .await
        .unwrap();
    assert!(c.tls().is_some());
    for n in [0, 40, 77, 125, 126, 65_536, 1 << 20] {
        let b = pattern(n);
        c.send_binary(&b).await.unwrap();
        match c.recv().await.unwrap() {
            Some(Message::Binary(got)) => assert_eq!(got, &b[..], "binary of {n}"),
            other => panic!("{other:?}"),
        }
    }
    c.close(CloseCode::NORMAL, "").await.unwrap();
    assert!(matches!(c.recv().await.unwrap(), Some(Message::Close(_))));
    assert!(c.recv().await.unwrap().is_none());
    h.await.unwrap();
}

#[tokio::test]
async fn wss_async_client_against_the_blocking_server() {
    let ca = Ca::new("tokio test CA");
    let leaf = ca.server(&["localhost"]);
    let mut server = tickwire::ws::Server::builder()
        .tls(leaf.server_config())
        .read_timeout(Some(T))
        .write_timeout(Some(T))
        .bind("127.0.0.1:0")
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let mut s = server.accept().unwrap();
        s.send_text("hello over tls").unwrap();
        while s.recv().unwrap().is_some() {}
    });
    let mut c = Client::builder()
        .tls(ca.client_config())
        .connect(&format!("wss://localhost:{port}/"))
        .await
        .unwrap();
    match c.recv().await.unwrap() {
        Some(Message::Text(t)) => assert_eq!(t, "hello over tls"),
        other => panic!("{other:?}"),
    }
    c.close(CloseCode::NORMAL, "").await.unwrap();
    while c.recv().await.unwrap().is_some() {}
    tokio::task::spawn_blocking(move || h.join().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn untrusted_certificate_is_a_tls_error() {
    let ca = Ca::new("tokio test CA");
    let other = Ca::new("someone else");
    let leaf = ca.server(&["localhost"]);
    let mut server = Server::builder()
        .tls(leaf.server_config())
        .handshake_timeout(T)
        .bind("127.0.0.1:0")
        .await
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let h = tokio::spawn(async move { server.accept().await.unwrap().handshake().await.is_err() });
    let err = Client::builder()
        .tls(other.client_config())
        .connect(&format!("wss://localhost:{port}/"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Tls { .. }), "{err:?}");
    assert!(h.await.unwrap(), "the server saw the handshake fail");
}
