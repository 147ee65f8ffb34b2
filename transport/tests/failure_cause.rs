//! After a connection failed (dead peer, protocol error), every later call reports the
//! error that failed it, not just `AlreadyClosed`: the unsplit blocking client's sends
//! after its `recv` failed, and a tokio split connection's write half after its read
//! half saw the failure. Peers on 127.0.0.1: a tickwire server that goes silent after
//! the handshake, and a raw socket that answers the handshake and then sends a frame
//! with a reserved opcode.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::Duration;

use tickwire::codec::ws::handshake::accept_key;
use tickwire::ws::{Client, Error, Server};

const DEAD_PEER: Duration = Duration::from_millis(300);

/// A server that finishes the opening handshake and then neither reads nor writes
/// until `hold` passed.
fn silent_server(hold: Duration) -> SocketAddr {
    let mut server = Server::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    thread::spawn(move || {
        let mut conn = server.accept().unwrap();
        conn.handshake().unwrap();
        thread::sleep(hold);
        drop(conn);
    });
    addr
}

/// A raw server: answers the upgrade, then sends a frame with the reserved opcode 3.
fn rude_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "the client closed mid-request");
            head.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8(head).unwrap();
        let key = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("sec-websocket-key")
                    .then(|| value.trim().to_owned())
            })
            .unwrap();
        let accept = accept_key(key.as_bytes());
        let accept = std::str::from_utf8(&accept).unwrap();
        write!(
            s,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\n\r\n"
        )
        .unwrap();
        s.write_all(&[0x83, 0x00]).unwrap();
        // Keep the socket until the client is done with it.
        let _ = s.read(&mut buf);
    });
    addr
}

#[test]
fn blocking_sends_after_a_dead_peer_report_dead_peer() {
    let addr = silent_server(Duration::from_secs(10));
    let mut c = Client::builder()
        .dead_peer_timeout(Some(DEAD_PEER))
        .connect(&format!("ws://{addr}/"))
        .unwrap();
    assert!(matches!(c.recv(), Err(Error::DeadPeer)));
    let e = c.send_text("order").unwrap_err();
    assert!(matches!(e, Error::DeadPeer), "{e:?}");
    assert!(e.is_fatal());
    assert!(matches!(c.flush(), Ok(()) | Err(Error::DeadPeer)));
    assert!(matches!(c.recv(), Err(Error::DeadPeer)));
}

#[test]
fn blocking_sends_after_a_protocol_error_report_it() {
    let addr = rude_server();
    let mut c = Client::connect(&format!("ws://{addr}/")).unwrap();
    let first = c.recv().unwrap_err();
    assert!(matches!(first, Error::Protocol(_)), "{first:?}");
    let e = c.send_binary(b"x").unwrap_err();
    assert!(matches!(e, Error::Protocol(_)), "{e:?}");
    assert_eq!(e.to_string(), first.to_string());
}

#[cfg(all(feature = "tokio", unix))]
mod tokio_split {
    use super::*;
    use tickwire::tokio::ws::Client;

    #[tokio::test(flavor = "current_thread")]
    async fn write_half_reports_the_read_halfs_dead_peer() {
        let addr = silent_server(Duration::from_secs(10));
        let c = Client::builder()
            .dead_peer_timeout(Some(DEAD_PEER))
            .connect(&format!("ws://{addr}/"))
            .await
            .unwrap();
        let (mut rx, mut tx) = c.split();
        let reader = tokio::spawn(async move { rx.recv().await.map(|_| ()) });
        assert!(matches!(reader.await.unwrap(), Err(Error::DeadPeer)));
        let e = tx.send_text("order").await.unwrap_err();
        assert!(matches!(e, Error::DeadPeer), "{e:?}");
        let e = tx.send_binary(b"cancel").await.unwrap_err();
        assert!(matches!(e, Error::DeadPeer), "{e:?}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn write_half_reports_the_read_halfs_protocol_error() {
        let addr = rude_server();
        let c = Client::connect(&format!("ws://{addr}/")).await.unwrap();
        let (mut rx, mut tx) = c.split();
        let first = rx.recv().await.map(|_| ()).unwrap_err();
        assert!(matches!(first, Error::Protocol(_)), "{first:?}");
        let e = tx.send_binary(b"x").await.unwrap_err();
        assert!(matches!(e, Error::Protocol(_)), "{e:?}");
        assert!(e.is_fatal());
    }
}
