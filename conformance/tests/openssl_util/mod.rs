//! What the OpenSSL interop tests share: whether `openssl` runs here, a scratch
//! directory with the PEM files it reads, a child process killed on drop, a free port.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command};

use crate::tls_util::{Ca, Leaf};

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

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
