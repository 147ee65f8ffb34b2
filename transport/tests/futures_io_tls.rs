//! wss:// through the futures-io driver on smol: the transport's TLS stream (the
//! codec's TlsCodec) over the caller's stream, client and server; a certificate the
//! client does not trust is a typed TLS error.
#![cfg(all(feature = "futures-io", feature = "tls", unix))]

mod tls_util;

use std::time::Duration;

use tickwire::futures_io::ws::{Client, CloseCode, Message, Server};
use tls_util::Ca;

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 253) as u8).collect()
}

#[test]
fn wss_echo_between_futures_io_client_and_server_on_smol() {
    let ca = Ca::new("futures-io test CA");
    let leaf = ca.server(&["localhost"]);
    smol::block_on(async {
        let mut server = Server::builder()
            .tls(leaf.server_config())
            .max_message_size(2 << 20)
            .write_buffer_size(2 << 20)
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        let h = smol::spawn(async move {
            let mut s = server.accept().await.unwrap();
            s.handshake().await.unwrap();
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
        let tcp = smol::net::TcpStream::connect(addr).await.unwrap();
        let mut c = Client::builder()
            .tls(ca.client_config())
            .max_message_size(2 << 20)
            .write_buffer_size(2 << 20)
            .connect_with(tcp, &format!("wss://localhost:{}/feed", addr.port()))
            .await
            .unwrap();
        let version = c.tls().and_then(|t| t.protocol_version());
        assert_eq!(
            version,
            Some(tickwire::tls::rustls::ProtocolVersion::TLSv1_3)
        );
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
        h.await;
    });
}

#[test]
fn wss_to_a_server_with_an_untrusted_certificate_fails_typed() {
    let ca = Ca::new("futures-io test CA");
    let other = Ca::new("someone else");
    let leaf = ca.server(&["localhost"]);
    smol::block_on(async {
        let mut server = Server::builder()
            .tls(leaf.server_config())
            .bind("127.0.0.1:0")
            .unwrap();
        let addr = server.local_addr().unwrap();
        let h = smol::spawn(async move {
            let mut s = server.accept().await.unwrap();
            assert!(s.handshake().await.is_err());
        });
        let tcp = smol::net::TcpStream::connect(addr).await.unwrap();
        let r = Client::builder()
            .tls(other.client_config())
            .handshake_timeout(Duration::from_secs(20))
            .connect_with(tcp, &format!("wss://localhost:{}/", addr.port()))
            .await;
        assert!(matches!(r, Err(tickwire::ws::Error::Tls { .. })), "{r:?}");
        h.await;
    });
}
