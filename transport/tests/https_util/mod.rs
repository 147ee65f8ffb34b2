//! The HTTP/1.1 server the https:// tests (blocking and async clients) run against:
//! the codec's RequestReader + ResponseWriter over the transport's TLS server stream,
//! one thread per connection on 127.0.0.1, counting requests per connection, the SNI
//! of each ClientHello and the connections the client ended with close_notify.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tickwire::codec::http::{RequestReader, ResponseWriter};
use tickwire::tls::TlsErrorKind;
use tickwire::tls::rustls::server::{ClientHello, ResolvesServerCert};
use tickwire::tls::rustls::sign::CertifiedKey;
use tickwire::tls::{TlsServerConfig, TlsStream};

const T: Duration = Duration::from_secs(20);

/// Requests per accepted connection, and the SNI each connection sent.
#[derive(Clone, Default)]
pub struct Seen {
    pub counts: Arc<[AtomicUsize; 8]>,
    pub sni: Arc<Mutex<Vec<Option<String>>>>,
    /// Connections the client ended with close_notify.
    pub clean: Arc<AtomicUsize>,
}

impl Seen {
    pub fn per_connection(&self) -> Vec<usize> {
        self.counts
            .iter()
            .map(|n| n.load(Ordering::SeqCst))
            .filter(|n| *n > 0)
            .collect()
    }

    /// Connections the client ended with close_notify.
    pub fn close_notifies(&self) -> usize {
        self.clean.load(Ordering::SeqCst)
    }

    /// The SNI of each ClientHello, in order.
    pub fn sni(&self) -> Vec<Option<String>> {
        self.sni.lock().unwrap().clone()
    }
}

/// A TLS HTTP/1.1 server on 127.0.0.1:0 serving up to `conns` connections, one thread
/// each: `/chunked` answers a chunked body of 50 numbered lines, `/close` answers with
/// `Connection: close`, `/hangup` closes at once (no close_notify), anything else
/// echoes `METHOD path body`.
pub fn serve(tls: TlsServerConfig, conns: usize) -> (u16, Seen, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Seen::default();
    let mut config = (**tls.server_config()).clone();
    config.cert_resolver = Arc::new(RecordSni {
        inner: config.cert_resolver.clone(),
        seen: seen.sni.clone(),
    });
    let tls = TlsServerConfig::from_server_config(Arc::new(config));
    let s2 = seen.clone();
    let h = thread::spawn(move || {
        let mut workers = Vec::new();
        for i in 0..conns {
            let Ok((s, _)) = l.accept() else { return };
            let tls = tls.clone();
            let seen = s2.clone();
            workers.push(thread::spawn(move || connection(s, &tls, &seen, i)));
        }
        for w in workers {
            let _ = w.join();
        }
    });
    (port, seen, h)
}

/// The server's certificate choice, recording the SNI of each ClientHello.
#[derive(Debug)]
struct RecordSni {
    inner: Arc<dyn ResolvesServerCert>,
    seen: Arc<Mutex<Vec<Option<String>>>>,
}

impl ResolvesServerCert for RecordSni {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello.server_name().map(str::to_owned);
        self.seen.lock().unwrap().push(name);
        self.inner.resolve(hello)
    }
}

fn connection(s: TcpStream, tls: &TlsServerConfig, seen: &Seen, i: usize) {
    s.set_read_timeout(Some(T)).unwrap();
    s.set_nodelay(true).unwrap();
    let Ok(mut s) = TlsStream::server(s, tls) else {
        return;
    };
    let count = &seen.counts[i];
    let mut reader: RequestReader<Vec<u8>> = RequestReader::new(vec![0u8; 64 << 10]);
    let mut out = vec![0u8; 64 << 10];
    loop {
        match reader.poll() {
            Ok(Some(req)) => {
                count.fetch_add(1, Ordering::SeqCst);
                let n = match req.path() {
                    "/chunked" => {
                        let mut w = ResponseWriter::new(&mut out, 200, "OK").chunked();
                        for i in 0..50 {
                            w.chunk(format!("line {i:02}\n").as_bytes());
                        }
                        w.finish().unwrap()
                    }
                    "/close" => ResponseWriter::new(&mut out, 200, "OK")
                        .header("Connection", "close")
                        .body(b"bye")
                        .finish()
                        .unwrap(),
                    "/hangup" => return,
                    path => {
                        let text = format!(
                            "{} {path} {}",
                            req.method_str(),
                            String::from_utf8_lossy(req.body())
                        );
                        ResponseWriter::new(&mut out, 200, "OK")
                            .body(text.as_bytes())
                            .finish()
                            .unwrap()
                    }
                };
                let close = req.path() == "/close";
                if s.write_all(&out[..n]).and_then(|()| s.flush()).is_err() {
                    return;
                }
                if close {
                    let _ = s.close_notify();
                    return;
                }
                continue;
            }
            Ok(None) => {}
            Err(_) => return,
        }
        match s.read(reader.spare_mut()) {
            // `Ok(0)` only after the client's close_notify; a bare FIN is an error.
            Ok(0) => {
                seen.clean.fetch_add(1, Ordering::SeqCst);
                let _ = s.close_notify();
                return;
            }
            Err(_) => {
                let _ = s.close_notify();
                return;
            }
            Ok(n) => reader.commit(n),
        }
    }
}

/// The kind of the TLS error a REST call (blocking or tokio) failed with; the error
/// names the client's URL.
pub fn tls_kind<T: std::fmt::Debug>(r: Result<T, tickwire::rest::Error>) -> TlsErrorKind {
    match r {
        Err(e @ tickwire::rest::Error::Tls { .. }) => {
            let text = e.to_string();
            assert!(text.starts_with("https://"), "{text}");
            let tickwire::rest::Error::Tls { error, .. } = e else {
                unreachable!()
            };
            error.kind()
        }
        other => panic!("not a TLS error: {other:?}"),
    }
}
