//! TLS interop with OpenSSL (Debian's `openssl` binary), started by the test on a free
//! 127.0.0.1 port, with certificates made by rcgen:
//! - our `TlsStream` client against `openssl s_server -rev` (line echo, reversed) and
//!   `-www` (status page, then close_notify), TLS 1.3 and TLS 1.2;
//! - `openssl s_client` against our `wss://` server (TLS, then the WebSocket upgrade).
//!
//! Without an `openssl` binary the tests skip with a loud message, unless
//! `TICKWIRE_REQUIRE_PEERS` is set (CI), where a missing peer fails.

// The transport's test certificate helpers (rcgen CA and leaves), shared rather than copied.
#[path = "../../transport/tests/tls_util/mod.rs"]
mod tls_util;

mod openssl_util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream as StdStream};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use openssl_util::{Blocking, Files, Peer, free_port, have_openssl, s_server_command};
use tickwire::ws::{CloseCode, Server};
use tls_util::Ca;

const T: Duration = Duration::from_secs(20);

/// `openssl s_server` on a free port with `args`, once it accepts connections.
fn s_server(files: &Files, args: &[&str]) -> (Peer, SocketAddr) {
    let port = free_port();
    let child = s_server_command(files, port)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let peer = Peer(child);
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let deadline = Instant::now() + T;
    // Probe until it listens (the probe connection is dropped at once).
    while StdStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "s_server did not start");
        thread::sleep(Duration::from_millis(50));
    }
    (peer, addr)
}

fn rev_echo(version_flag: &str) {
    if !have_openssl() {
        return;
    }
    let ca = Ca::new("interop CA");
    let leaf = ca.server(&["localhost"]);
    let files = Files::new(&format!("rev{version_flag}"), &ca, &leaf);
    let (_peer, addr) = s_server(&files, &["-rev", "-quiet", version_flag]);
    let mut c = Blocking::connect(addr, &ca.client_config());
    let line = "tickwire speaks TLS with OpenSSL\n";
    c.write_all(line.as_bytes());
    let (got, _) = c.read_until(|b| b.ends_with(b"\n"));
    let expected: String = line.trim_end().chars().rev().collect();
    assert_eq!(String::from_utf8_lossy(&got).trim_end(), expected);
    // A longer line (s_server reverses what one read gives it, at most a few KiB).
    let long = "0123456789".repeat(200) + "\n";
    c.write_all(long.as_bytes());
    let (got, _) = c.read_until(|b| b.ends_with(b"\n"));
    let expected: String = long.trim_end().chars().rev().collect();
    assert!(
        String::from_utf8_lossy(&got).trim_end() == expected,
        "long line"
    );
    // TLS 1.3: after the handshake our own record layer ran against OpenSSL (its
    // session tickets and the data above went through it).
    assert_eq!(c.tls.codec().is_records_mode(), version_flag == "-tls1_3");
    c.tls.close_notify().unwrap();
}

#[test]
fn s_server_rev_tls13() {
    rev_echo("-tls1_3");
}

#[test]
fn s_server_rev_tls12() {
    rev_echo("-tls1_2");
}

/// `-www`: the status page names the protocol, then OpenSSL closes with close_notify,
/// which our stream reports as a clean end (`Ok(0)`), not a truncation.
#[test]
fn s_server_www_ends_with_close_notify() {
    if !have_openssl() {
        return;
    }
    let ca = Ca::new("interop CA");
    let leaf = ca.server(&["localhost"]);
    for (flag, name) in [("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")] {
        let files = Files::new(&format!("www{flag}"), &ca, &leaf);
        let (_peer, addr) = s_server(&files, &["-www", flag]);
        let mut c = Blocking::connect(addr, &ca.client_config());
        c.write_all(b"GET / HTTP/1.0\r\n\r\n");
        let (page, clean) = c.read_until(|_| false);
        let page = String::from_utf8_lossy(&page);
        assert!(page.starts_with("HTTP/1.0 200 ok"), "{page}");
        assert!(page.contains(name), "{flag}: {page}");
        assert!(clean, "{flag}: no close_notify seen");
    }
}

/// `openssl s_client` (verifying our certificate against the CA) upgrades to WebSocket
/// on our TLS server and receives a text frame and a close frame.
#[test]
fn s_client_against_our_wss_server() {
    if !have_openssl() {
        return;
    }
    let ca = Ca::new("interop CA");
    let leaf = ca.server(&["localhost"]);
    let files = Files::new("s_client", &ca, &leaf);
    let mut server = Server::builder()
        .tls(leaf.server_config())
        .handshake_timeout(T)
        .read_timeout(Some(Duration::from_secs(3)))
        .close_timeout(Duration::from_secs(3))
        .bind("127.0.0.1:0")
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let h = thread::spawn(move || {
        let mut c = server.accept().unwrap();
        c.handshake().unwrap();
        assert_eq!(c.path(), "/openssl");
        c.send_text("hello from tickwire").unwrap();
        c.close(CloseCode::NORMAL, "done").unwrap();
        // s_client never answers the close: the close timeout ends it.
        while let Ok(Some(_)) = c.recv() {}
    });
    let mut child = Command::new("openssl")
        .arg("s_client")
        .arg("-connect")
        .arg(format!("127.0.0.1:{port}"))
        .args(["-servername", "localhost", "-verify_return_error", "-quiet"])
        .arg("-CAfile")
        .arg(files.path("ca.pem"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(
            b"GET /openssl HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
              Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
              Sec-WebSocket-Version: 13\r\n\r\n",
        )
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let peer = Peer(child);
    let out = reader.join().unwrap();
    drop(peer);
    h.join().unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 101"), "{text}");
    assert!(
        text.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        "accept key missing: {text}"
    );
    // The unmasked text frame: 0x81, length 19, payload.
    let frame = [&[0x81u8, 19][..], b"hello from tickwire"].concat();
    assert!(
        out.windows(frame.len()).any(|w| w == frame),
        "text frame missing"
    );
}
