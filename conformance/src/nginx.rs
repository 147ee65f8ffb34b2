//! Debian's nginx on 127.0.0.1 with a config of our own in a temp dir (its own pid, logs
//! and temp paths), serving:
//!
//! - `/small.txt` ([`Nginx::SMALL`]) and `/large.bin` ([`Nginx::LARGE_LEN`] bytes of
//!   [`pattern`](crate::pattern)) with Content-Length, on keep-alive connections;
//! - `/chunked/text.txt`: [`Nginx::text`] with every `MARK` replaced by `mark` (a
//!   `sub_filter`, which drops the length, so HTTP/1.1 clients get it chunked);
//! - `/close-delimited/text.txt`: the same with chunked encoding off, so the body ends
//!   when nginx closes the connection;
//! - `/no-keepalive/small.txt`: Content-Length and `Connection: close`;
//! - `/short-keepalive/small.txt`: a connection idle for 1 s after it is closed by nginx
//!   (for stale keep-alive connections).
//!
//! With [`Nginx::start_tls`] the same server also listens with TLS on a second port
//! (`listen 127.0.0.1:PORT ssl`, TLS 1.2 and 1.3) with a certificate the test made:
//! [`Nginx::https_url`].
//!
//! Its access log records `$connection $connection_requests $status $request_uri` per
//! request ([`Nginx::access_log`]), so tests can count requests per TCP connection from
//! the server's side.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{PeerError, ServerProcess, TempDir, free_port, pattern};

/// A running nginx; stopped on drop.
#[derive(Debug)]
pub struct Nginx {
    process: ServerProcess,
    dir: TempDir,
    tls_addr: Option<SocketAddr>,
}

/// A certificate chain and its private key, PEM, for nginx's TLS listener.
#[derive(Debug, Clone)]
pub struct TlsFiles<'a> {
    /// The server certificate (then any intermediates).
    pub cert_pem: &'a str,
    /// Its private key.
    pub key_pem: &'a str,
}

/// One line of the access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// nginx's connection serial number (`$connection`).
    pub connection: u64,
    /// The request's number on that connection, from 1 (`$connection_requests`).
    pub request: u64,
    /// The response status.
    pub status: u16,
    /// The request URI.
    pub uri: String,
}

impl Nginx {
    /// The body of `/small.txt` and `/no-keepalive/small.txt`.
    pub const SMALL: &'static str = "hello from nginx\n";
    /// The length of `/large.bin`.
    pub const LARGE_LEN: usize = 8 << 20;

    /// The source text behind `/chunked/text.txt` and `/close-delimited/text.txt` (those
    /// serve it with `MARK` replaced by `mark`): about 300 KB of numbered lines.
    pub fn text() -> String {
        (0..10_000)
            .map(|i| format!("line {i:05} MARK of the quote stream\n"))
            .collect()
    }

    /// The nginx binary: `$TICKWIRE_NGINX`, else `/usr/sbin/nginx`, else `nginx` on PATH.
    pub fn binary() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("TICKWIRE_NGINX") {
            return Some(PathBuf::from(p));
        }
        let sbin = Path::new("/usr/sbin/nginx");
        if sbin.is_file() {
            return Some(sbin.to_path_buf());
        }
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("nginx"))
                .find(|p| p.is_file())
        })
    }

    /// Write the config and files into a fresh temp dir and start nginx on a free port.
    pub fn start() -> Result<Nginx, PeerError> {
        Self::start_with(None)
    }

    /// Like [`start`](Self::start), and also listen with TLS on a second free port with
    /// `tls`'s certificate and key.
    pub fn start_tls(tls: TlsFiles<'_>) -> Result<Nginx, PeerError> {
        Self::start_with(Some(tls))
    }

    fn start_with(tls: Option<TlsFiles<'_>>) -> Result<Nginx, PeerError> {
        let nginx = Self::binary().filter(|p| p.is_file()).ok_or_else(|| {
            PeerError::Absent("nginx not found: `apt-get install nginx-light`".into())
        })?;
        let dir = TempDir::new("nginx").map_err(|e| PeerError::Failed(e.to_string()))?;
        write_files(dir.path()).map_err(|e| PeerError::Failed(format!("nginx files: {e}")))?;
        if let Some(tls) = &tls {
            std::fs::write(dir.path().join("cert.pem"), tls.cert_pem)
                .and_then(|()| std::fs::write(dir.path().join("key.pem"), tls.key_pem))
                .map_err(|e| PeerError::Failed(format!("nginx TLS files: {e}")))?;
        }
        let mut last = None;
        for _ in 0..3 {
            let port = free_port().map_err(|e| PeerError::Failed(e.to_string()))?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let tls_addr = match tls {
                Some(_) => Some(SocketAddr::from((
                    [127, 0, 0, 1],
                    free_port().map_err(|e| PeerError::Failed(e.to_string()))?,
                ))),
                None => None,
            };
            let conf = dir.path().join("nginx.conf");
            std::fs::write(&conf, config(dir.path(), addr, tls_addr))
                .map_err(|e| PeerError::Failed(format!("nginx.conf: {e}")))?;
            let mut cmd = Command::new(&nginx);
            cmd.arg("-p")
                .arg(dir.path())
                .arg("-e")
                .arg(dir.path().join("error.log"))
                .arg("-c")
                .arg(&conf);
            match ServerProcess::spawn(
                "nginx",
                cmd,
                addr,
                dir.path().join("stderr.log"),
                Duration::from_secs(20),
            ) {
                // A connect succeeds once the kernel has a socket listening, and nginx's
                // master listens on its ports one after the other: the plain port
                // accepting does not mean the TLS port does yet (a refused TLS connect
                // under load, once). Wait for it too.
                Ok(mut process) => {
                    let tls_up = match tls_addr {
                        Some(a) => process.wait_accepting(a, Duration::from_secs(20)),
                        None => Ok(()),
                    };
                    match tls_up {
                        Ok(()) => {
                            return Ok(Nginx {
                                process,
                                dir,
                                tls_addr,
                            });
                        }
                        Err(e) => last = Some(e),
                    }
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| PeerError::Failed("nginx did not start".into())))
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.process.addr()
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr())
    }

    /// The TLS listener's address (after [`start_tls`](Self::start_tls)).
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.tls_addr
    }

    /// `https://HOST:TLS_PORT` followed by `path` (`host`: the name to connect to and
    /// check the certificate against, such as `localhost` or `127.0.0.1`). Panics when
    /// nginx was started without TLS.
    pub fn https_url(&self, host: &str, path: &str) -> String {
        let port = self
            .tls_addr
            .expect("nginx was started without TLS (use Nginx::start_tls)")
            .port();
        format!("https://{host}:{port}{path}")
    }

    /// The requests nginx has logged so far, in order.
    pub fn access_log(&self) -> Vec<Access> {
        let text = std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let mut f = l.split(' ');
                Some(Access {
                    connection: f.next()?.parse().ok()?,
                    request: f.next()?.parse().ok()?,
                    status: f.next()?.parse().ok()?,
                    uri: f.next()?.to_string(),
                })
            })
            .collect()
    }

    /// The access log once it holds at least `n` requests (nginx logs a request just after
    /// its response is sent), or what it holds after 5 s.
    pub fn access_log_of(&self, n: usize) -> Vec<Access> {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let log = self.access_log();
            if log.len() >= n || std::time::Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// nginx's error log (for failure messages).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

fn write_files(dir: &Path) -> std::io::Result<()> {
    let www = dir.join("www");
    for sub in [
        "chunked",
        "close-delimited",
        "no-keepalive",
        "short-keepalive",
    ] {
        std::fs::create_dir_all(www.join(sub))?;
    }
    std::fs::create_dir_all(dir.join("tmp"))?;
    std::fs::write(www.join("small.txt"), Nginx::SMALL)?;
    std::fs::write(www.join("no-keepalive/small.txt"), Nginx::SMALL)?;
    std::fs::write(www.join("short-keepalive/small.txt"), Nginx::SMALL)?;
    let large: Vec<u8> = (0..Nginx::LARGE_LEN).map(pattern).collect();
    std::fs::write(www.join("large.bin"), large)?;
    let text = Nginx::text();
    std::fs::write(www.join("chunked/text.txt"), &text)?;
    std::fs::write(www.join("close-delimited/text.txt"), &text)?;
    // Started as root, nginx serves files from unprivileged workers (`nobody`): make the
    // tree readable whatever the umask.
    readable(dir)
}

fn readable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path)?;
    let mode = if meta.is_dir() { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            readable(&entry?.path())?;
        }
    }
    Ok(())
}

fn config(dir: &Path, addr: SocketAddr, tls_addr: Option<SocketAddr>) -> String {
    let d = dir.display();
    let tls = match tls_addr {
        Some(a) => format!(
            "listen {a} ssl;\n        ssl_certificate {d}/cert.pem;\n        \
             ssl_certificate_key {d}/key.pem;\n        ssl_protocols TLSv1.2 TLSv1.3;"
        ),
        None => String::new(),
    };
    format!(
        r#"daemon off;
master_process on;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    log_format tickwire '$connection $connection_requests $status $request_uri';
    access_log {d}/access.log tickwire;
    types {{ text/plain txt; application/octet-stream bin; }}
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 60s;
    keepalive_requests 10000;
    server {{
        listen {addr};
        {tls}
        root {d}/www;
        location /chunked/ {{
            sub_filter 'MARK' 'mark';
            sub_filter_once off;
            sub_filter_types *;
        }}
        location /close-delimited/ {{
            sub_filter 'MARK' 'mark';
            sub_filter_once off;
            sub_filter_types *;
            chunked_transfer_encoding off;
        }}
        location /no-keepalive/ {{
            keepalive_timeout 0;
        }}
        location /short-keepalive/ {{
            keepalive_timeout 1s;
        }}
    }}
}}
"#
    )
}
