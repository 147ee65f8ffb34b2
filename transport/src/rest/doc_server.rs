//! A tiny HTTP/1.1 server on 127.0.0.1 for the REST doctests, so their examples run:
//! every request is answered `200 OK` with `METHOD /path` (the target without its
//! query) as the body, on a keep-alive connection. Not part of the API.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::thread;

/// Start the server on a free port and return its address; it runs until the process
/// ends.
#[doc(hidden)]
pub fn doc_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = l.local_addr().expect("local address");
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            thread::spawn(move || serve(s));
        }
    });
    addr
}

/// The same server over TLS with `config` (for the `https://` doctests: a certificate
/// of a private CA).
#[cfg(feature = "tls")]
#[doc(hidden)]
pub fn doc_server_tls(config: crate::tls::TlsServerConfig) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = l.local_addr().expect("local address");
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let config = config.clone();
            thread::spawn(move || {
                let Ok(mut tls) = crate::tls::TlsStream::server(s, &config) else {
                    return;
                };
                // A blocking socket: each step reads until the handshake is done.
                while let Ok(false) = tls.handshake() {}
                serve(tls);
            });
        }
    });
    addr
}

fn serve(mut s: impl Read + Write) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() < end + 4 + len {
                break;
            }
            buf.drain(..end + 4 + len);
            let mut words = head.split(' ');
            let method = words.next().unwrap_or("");
            let path = words.next().unwrap_or("").split('?').next().unwrap_or("");
            let body = format!("{method} {path}");
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{}",
                body.len(),
                if method == "HEAD" { "" } else { &body }
            );
            if s.write_all(resp.as_bytes())
                .and_then(|()| s.flush())
                .is_err()
            {
                return;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
