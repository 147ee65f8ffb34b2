//! `TlsStream::is_drained`: true only when the last socket read took everything the
//! socket held and nothing (ciphertext or plaintext) waits in the stream, so a reader
//! may wait for readiness instead of reading into `WouldBlock`. Over 127.0.0.1 with
//! rcgen certificates and std sockets.

#![cfg(feature = "tls")]

mod net_events;
mod tls_util;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tickwire::tls::TlsStream;
use tls_util::Ca;

#[test]
fn drained_only_when_socket_and_stream_are_empty() {
    let ca = Ca::new("test CA");
    let server_cfg = ca.server(&["localhost"]).server_config();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (go, wait) = mpsc::channel::<()>();
    let (written_tx, written) = mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        s.set_nodelay(true).unwrap();
        let mut s = TlsStream::server(s, &server_cfg).unwrap();
        s.write_all(b"a").unwrap();
        s.flush().unwrap();
        wait.recv().unwrap();
        // Two records, both on the socket before the client reads.
        s.write_all(b"bb").unwrap();
        s.write_all(b"cc").unwrap();
        s.flush().unwrap();
        written_tx.send(()).unwrap();
        wait.recv().unwrap();
    });
    let sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut c = TlsStream::client(sock, &ca.client_config(), "localhost").unwrap();
    assert!(!c.is_drained(), "nothing read yet");
    let mut buf = [0u8; 64];
    let n = c.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"a");
    assert!(c.is_drained());

    go.send(()).unwrap();
    // Both records written, and arrived in our socket.
    written.recv().unwrap();
    net_events::wait_delivered(addr, c.get_ref().local_addr().unwrap());
    // One byte of the first record: the rest of it (and the second record) wait.
    let n = c.read(&mut buf[..1]).unwrap();
    assert_eq!(&buf[..n], b"b");
    assert!(!c.is_drained());
    let mut got = Vec::new();
    while got.len() < 3 {
        let n = c.read(&mut buf[..1]).unwrap();
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, b"bcc");
    assert!(c.is_drained());
    go.send(()).unwrap();
    h.join().unwrap();
}
