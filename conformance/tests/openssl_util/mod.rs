//! What the OpenSSL interop tests share: whether `openssl` runs here, a scratch
//! directory with the PEM files it reads, a child process killed on drop, a free port,
//! and a `TlsStream` client driven in blocking style.
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use tickwire::tls::{TlsConfig, TlsStream, tls_error};

use crate::tls_util::{Ca, Leaf};

/// The longest one `Blocking` call waits.
const T: Duration = Duration::from_secs(20);

/// Whether `openssl` can run here; a loud skip (or, with TICKWIRE_REQUIRE_PEERS, a
/// failure) when it cannot.
pub fn have_openssl() -> bool {
    let ok = Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("TICKWIRE_REQUIRE_PEERS").is_some() {
            panic!("openssl not found and TICKWIRE_REQUIRE_PEERS is set");
        }
        eprintln!("!!!! SKIPPED: openssl not found (install Debian's openssl package) !!!!");
    }
    ok
}

/// A scratch directory with the PEM files, removed on drop.
pub struct Files {
    dir: PathBuf,
}

impl Files {
    pub fn new(tag: &str, ca: &Ca, leaf: &Leaf) -> Files {
        let dir =
            std::env::temp_dir().join(format!("tickwire-openssl-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("cert.pem"), &leaf.cert).unwrap();
        std::fs::write(dir.join("key.pem"), &leaf.key).unwrap();
        Files { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A child process killed on drop.
pub struct Peer(pub Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `openssl s_server` with the scratch certificate and key, on 127.0.0.1:`port`.
pub fn s_server_command(files: &Files, port: u16) -> Command {
    let mut cmd = Command::new("openssl");
    cmd.arg("s_server")
        .arg("-accept")
        .arg(format!("127.0.0.1:{port}"))
        .arg("-cert")
        .arg(files.path("cert.pem"))
        .arg("-key")
        .arg(files.path("key.pem"));
    cmd
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `TlsStream` client (to "localhost") driven in blocking style on a private poll.
pub struct Blocking {
    pub tls: TlsStream<TcpStream>,
    poll: Poll,
    events: Events,
}

impl Blocking {
    pub fn connect(addr: SocketAddr, config: &TlsConfig) -> Blocking {
        let sock = TcpStream::connect(addr).unwrap();
        let mut tls = TlsStream::client(sock, config, "localhost").unwrap();
        let poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut tls, Token(0), Interest::READABLE | Interest::WRITABLE)
            .unwrap();
        Blocking {
            tls,
            poll,
            events: Events::with_capacity(4),
        }
    }

    /// Wait for readiness (at most 100 ms); fails the test after `deadline`.
    pub fn wait(&mut self, deadline: Instant) {
        assert!(Instant::now() < deadline, "timed out");
        self.poll
            .poll(&mut self.events, Some(Duration::from_millis(100)))
            .unwrap();
    }

    pub fn write_all(&mut self, mut data: &[u8]) {
        let deadline = Instant::now() + T;
        while !data.is_empty() {
            match self.tls.write(data) {
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait(deadline),
                Err(e) => panic!("write: {e}"),
            }
        }
        while !self.tls.flush_pending().unwrap() {
            self.wait(deadline);
        }
    }

    /// Read until `done(&bytes)` or end-of-stream; returns the bytes and whether the
    /// stream ended cleanly (close_notify).
    pub fn read_until(&mut self, done: impl Fn(&[u8]) -> bool) -> (Vec<u8>, bool) {
        let deadline = Instant::now() + T;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if done(&got) {
                return (got, false);
            }
            match self.tls.read(&mut buf) {
                Ok(0) => return (got, true),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait(deadline),
                Err(e) => panic!("read: {e} ({:?})", tls_error(&e)),
            }
        }
    }
}
