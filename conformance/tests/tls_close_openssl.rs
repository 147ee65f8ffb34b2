//! TLS shutdown against OpenSSL (issue 29): every path that ends a TLS connection sends
//! close_notify after the data queued before it, also when the socket is backed up at
//! the moment of the close. The peer is Debian's `openssl s_server` or `s_client`,
//! started by the test on 127.0.0.1 with `-msg -msgfile`: the test reads in that log
//! that OpenSSL received our close_notify (`<<< ... Alert ..., warning close_notify`).
//!
//! The socket is backed up by stopping the peer (`SIGSTOP`): it reads nothing, the
//! kernel buffers fill and our writes time out or would block; it is resumed
//! (`SIGCONT`) while our side is closing, once our connection has stood still (bytes
//! queued, nothing moving) for ten times the write timeout, as `/proc/net/tcp` shows: the
//! close must wait for it (within the close timeout) and then get out behind everything
//! queued. Each test runs three ways: TLS
//! 1.3 with records mode (the codec's own record layer), TLS 1.3 on rustls's record
//! layer (no secret extraction), and TLS 1.2.
//!
//! Without an `openssl` binary the tests skip with a loud message, unless
//! `TICKWIRE_REQUIRE_PEERS` is set (CI), where a missing peer fails.

#[path = "../../transport/tests/tls_util/mod.rs"]
mod tls_util;

mod openssl_util;

#[path = "../../transport/tests/net_events/mod.rs"]
mod net_events;

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use openssl_util::{Blocking, Files, free_port, have_openssl, s_server_command};
use tickwire::codec::ws::handshake::accept_key;
use tickwire::rest::{self, RequestWriter, ResponseReader};
use tickwire::tls::{TlsConfig, TlsServerConfig};
use tickwire::ws::{self, Message};
use tls_util::{Ca, Leaf};

/// The longest the test waits for the peer (to start, to log our close_notify).
const T: Duration = Duration::from_secs(30);
/// How long a connection's send queue must stand still before
/// [`OpenSsl::resume_when_stalled`] resumes the peer: ten times the write timeout (a
/// loaded machine may not run the writer for a while; the old best-effort closes gave up
/// after one write timeout), far within the close timeouts every test sets ([`T`]). (The
/// REST tests once kept the default 5 s: on a loaded machine the resumed peer then did
/// not drain the queue in time and the client dropped the connection mid-record.)
const STALL: Duration = Duration::from_secs(2);
/// Write timeout of the connections under test: a write into the stopped peer's full
/// buffers fails with it, leaving the bytes queued.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);

/// One way to run a test.
#[derive(Debug, Clone, Copy)]
struct Variant {
    name: &'static str,
    /// OpenSSL's protocol flag.
    flag: &'static str,
    /// Our config allows records mode (used by TLS 1.3 only).
    records: bool,
}

const VARIANTS: [Variant; 3] = [
    Variant {
        name: "tls13-records",
        flag: "-tls1_3",
        records: true,
    },
    Variant {
        name: "tls13-rustls",
        flag: "-tls1_3",
        records: false,
    },
    Variant {
        name: "tls12",
        flag: "-tls1_2",
        records: true,
    },
];

/// Run `test` for every variant (unless `openssl` is missing: then skip), with a CA,
/// a server certificate for "localhost" and a scratch directory of PEM files; then fail
/// naming each variant that failed.
fn each_variant(tag: &str, test: impl Fn(Variant, &Ca, &Leaf, &Files)) {
    if !have_openssl() {
        return;
    }
    let ca = Ca::new("close CA");
    let leaf = ca.server(&["localhost"]);
    let failed: Vec<&str> = VARIANTS
        .into_iter()
        .filter(|v| {
            let files = Files::new(&format!("{tag}-{}", v.name), &ca, &leaf);
            let run = || test(*v, &ca, &leaf, &files);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err()
        })
        .map(|v| v.name)
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

impl Variant {
    fn tls13(&self) -> bool {
        self.flag == "-tls1_3"
    }

    fn client_config(&self, ca: &Ca) -> TlsConfig {
        let config = ca.client_config();
        let mut rustls = (**config.client_config()).clone();
        rustls.enable_secret_extraction = self.records;
        TlsConfig::from_client_config(Arc::new(rustls))
    }

    fn server_config(&self, leaf: &Leaf) -> TlsServerConfig {
        let config = leaf.server_config();
        let mut rustls = (**config.server_config()).clone();
        rustls.enable_secret_extraction = self.records;
        TlsServerConfig::from_server_config(Arc::new(rustls))
    }
}

/// `openssl s_server` or `s_client` with `-msg -msgfile`, stdin open (what we write
/// is sent to our side), stdout read by a thread (what it received; the first MiB is
/// kept). Killed on drop (resumed first if stopped).
struct OpenSsl {
    child: Child,
    stdin: ChildStdin,
    out: Arc<Mutex<Vec<u8>>>,
    msgfile: PathBuf,
}

impl OpenSsl {
    /// Run `cmd` with its `-msg` log in a new file of `files`.
    fn spawn(mut cmd: Command, files: &Files) -> OpenSsl {
        static LOGS: AtomicUsize = AtomicUsize::new(0);
        let n = LOGS.fetch_add(1, Ordering::Relaxed);
        let msgfile = files.path(&format!("msg-{n}.txt"));
        let mut child = cmd
            .arg("-msg")
            .arg("-msgfile")
            .arg(&msgfile)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&out);
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut kept = kept.lock().unwrap();
                let room = (1usize << 20).saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buf[..room]);
            }
        });
        OpenSsl {
            child,
            stdin,
            out,
            msgfile,
        }
    }

    /// `s_server` on a free port, once it accepts connections.
    fn s_server(files: &Files, flag: &str) -> (OpenSsl, SocketAddr) {
        let port = free_port();
        let mut cmd = s_server_command(files, port);
        cmd.arg(flag);
        let peer = OpenSsl::spawn(cmd, files);
        peer.wait_out("s_server listening", |o| contains(o, b"ACCEPT"));
        (peer, ([127, 0, 0, 1], port).into())
    }

    /// `s_client` connecting to our server on `port` (no certificate check).
    fn s_client(files: &Files, port: u16, flag: &str) -> OpenSsl {
        let mut cmd = Command::new("openssl");
        cmd.arg("s_client")
            .arg("-connect")
            .arg(format!("127.0.0.1:{port}"))
            .args(["-servername", "localhost"])
            .arg(flag);
        OpenSsl::spawn(cmd, files)
    }

    /// Send `bytes` to our side (as application data).
    fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// What it received (and printed) so far, once `done` says so.
    fn wait_out(&self, what: &str, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + T;
        loop {
            {
                let out = self.out.lock().unwrap();
                if done(&out) {
                    return out.clone();
                }
            }
            assert!(Instant::now() < deadline, "openssl: no {what}");
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Answer the WebSocket upgrade request our client sent (s_server only).
    fn answer_upgrade(&mut self) {
        let req = self.wait_out("upgrade request", |o| contains(o, b"\r\n\r\n"));
        let req = String::from_utf8_lossy(&req).into_owned();
        let key = req
            .lines()
            .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
            .expect("no Sec-WebSocket-Key")
            .trim()
            .to_owned();
        let accept = accept_key(key.as_bytes());
        let accept = std::str::from_utf8(&accept).unwrap();
        self.send(
            format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
            )
            .as_bytes(),
        );
    }

    fn signal(pid: u32, sig: &str) {
        let ok = Command::new("kill")
            .arg(sig)
            .arg(pid.to_string())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    }

    /// Stop it: it reads nothing until resumed.
    fn stop(&self) {
        Self::signal(self.child.id(), "-STOP");
    }

    fn resume(&self) {
        Self::signal(self.child.id(), "-CONT");
    }

    /// Resume it, from another thread, once our connection `local` -> `remote` is
    /// stalled: bytes wait in our send queue, and neither it nor the peer's receive
    /// queue (which the kernel grows while the peer reads nothing) has changed for
    /// [`STALL`]. Then a blocking write has timed out (or we are closing), however slow
    /// the machine.
    fn resume_when_stalled(&self, local: SocketAddr, remote: SocketAddr) -> JoinHandle<()> {
        let pid = self.child.id();
        thread::spawn(move || {
            let deadline = Instant::now() + T;
            let mut last = ((0, 0), Instant::now());
            while Instant::now() < deadline {
                let ours = net_events::tcp(local, Some(remote)).map_or(0, |t| t.tx);
                let theirs = net_events::tcp(remote, Some(local)).map_or(0, |t| t.rx);
                if ours == 0 || (ours, theirs) != last.0 {
                    last = ((ours, theirs), Instant::now());
                } else if last.1.elapsed() >= STALL {
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
            Self::signal(pid, "-CONT");
        })
    }

    /// Its `-msg` log.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.msgfile).unwrap_or_default()
    }

    /// Wait until its log shows our close_notify received; returns the log.
    fn expect_close_notify(&self, what: &str) -> String {
        let deadline = Instant::now() + T;
        loop {
            let log = self.log();
            if received_close_notify(&log).is_some() {
                return log;
            }
            if Instant::now() > deadline {
                let tail: Vec<&str> = log.lines().filter(|l| !l.starts_with(' ')).collect();
                let tail = tail[tail.len().saturating_sub(12)..].join("\n");
                panic!("{what}: OpenSSL never received our close_notify; its log ends:\n{tail}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for OpenSsl {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-CONT")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The line of a `-msg` log where a close_notify alert was received, if any.
fn received_close_notify(log: &str) -> Option<usize> {
    log.lines()
        .position(|l| l.starts_with("<<<") && l.contains("Alert") && l.contains("close_notify"))
}

/// The peer's close frame (1000): unmasked from a server, masked from a client.
const CLOSE_FROM_SERVER: [u8; 4] = [0x88, 0x02, 0x03, 0xe8];
const CLOSE_FROM_CLIENT: [u8; 8] = [0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xe8 ^ 2];

const UPGRADE_REQUEST: &[u8] = b"GET /close HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
    Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

/// Messages of [`CHUNK`] bytes sent by [`flood`].
const CHUNK: usize = 256 << 10;
/// Sends that time out before the flood stops: by then the write buffer (1 MiB by
/// default) is full too, more than the kernel can take later by growing its buffers
/// (it does, a little, even while the peer reads nothing).
const TIMEOUTS: usize = 6;

/// Binary messages until the stopped peer's buffers and ours are full: the kernel's
/// (a send times out) and then our write buffer (later sends time out unqueued).
fn flood(mut send: impl FnMut(&[u8]) -> Result<(), ws::Error>) {
    let chunk = vec![0x5a; CHUNK];
    let mut timeouts = 0;
    for _ in 0..4096 {
        match send(&chunk) {
            Ok(()) => {}
            Err(ws::Error::WriteTimeout) => {
                timeouts += 1;
                if timeouts == TIMEOUTS {
                    return;
                }
            }
            Err(e) => panic!("send: {e}"),
        }
    }
    panic!("the socket never backed up");
}

/// The peer sends `close` (its close frame) and, once it has arrived unread on our
/// connection `local` -> `remote`, stops reading.
fn close_then_stop(peer: &mut OpenSsl, close: &[u8], local: SocketAddr, remote: SocketAddr) {
    peer.send(close);
    net_events::wait_arrived(local, remote);
    peer.stop();
}

/// With our connection `local` -> `remote` backed up: resume the peer once it is
/// stalled (see [`OpenSsl::resume_when_stalled`]) while `recv_close` (which owns the
/// connection: it is dropped when it returns) takes the peer's close (or says what came
/// instead); then the peer must log our close_notify.
fn recv_close_backed_up(
    peer: &OpenSsl,
    name: &str,
    (local, remote): (SocketAddr, SocketAddr),
    recv_close: impl FnOnce() -> Result<(), String>,
) {
    let resume = peer.resume_when_stalled(local, remote);
    if let Err(other) = recv_close() {
        panic!("{name}: not the peer's close: {other}");
    }
    resume.join().unwrap();
    peer.expect_close_notify(name);
}

fn is_close(got: Result<Option<Message<'_>>, ws::Error>) -> Result<(), String> {
    match got {
        Ok(Some(Message::Close(_))) => Ok(()),
        other => Err(format!("{other:?}")),
    }
}

/// The WebSocket close handshake of a blocking client (wss:// to `s_server`): the
/// peer's close arrives, the peer stops reading, our messages back the socket up, then
/// `recv` returns the peer's close and the client is dropped. The echo and close_notify
/// go out once the peer reads again. (Before issue 29 the echo's flush gave up at the
/// write timeout and the client went without close_notify.)
#[test]
fn ws_client_close_handshake_backed_up() {
    each_variant("wsc", |v, ca, _, files| {
        let (mut peer, addr) = OpenSsl::s_server(files, v.flag);
        let config = v.client_config(ca);
        let connect = thread::spawn(move || {
            ws::Client::builder()
                .tls(config)
                .write_timeout(Some(WRITE_TIMEOUT))
                .close_timeout(T)
                .connect(&format!("wss://localhost:{}/close", addr.port()))
        });
        peer.answer_upgrade();
        let mut c = connect.join().unwrap().unwrap();
        let local = c.local_addr().unwrap();
        close_then_stop(&mut peer, &CLOSE_FROM_SERVER, local, addr);
        flood(|b| c.send_binary(b));
        assert_eq!(
            c.tls().unwrap().is_records_mode(),
            v.records && v.tls13(),
            "{}",
            v.name
        );
        recv_close_backed_up(&peer, v.name, (local, addr), move || is_close(c.recv()));
    });
}

/// The same in the server role: our blocking wss server, `s_client` as the WebSocket
/// client.
#[test]
fn ws_server_close_handshake_backed_up() {
    each_variant("wss", |v, _, leaf, files| {
        let mut server = ws::Server::builder()
            .tls(v.server_config(leaf))
            .handshake_timeout(T)
            .write_timeout(Some(WRITE_TIMEOUT))
            .close_timeout(T)
            .bind("127.0.0.1:0")
            .unwrap();
        let port = server.local_addr().unwrap().port();
        let mut peer = OpenSsl::s_client(files, port, v.flag);
        peer.send(UPGRADE_REQUEST);
        let mut c = server.accept().unwrap();
        c.handshake().unwrap();
        peer.wait_out("101 response", |o| contains(o, b"101 Switching"));
        let (local, remote) = (c.local_addr().unwrap(), c.peer_addr().unwrap());
        close_then_stop(&mut peer, &CLOSE_FROM_CLIENT, local, remote);
        flood(|b| c.send_binary(b));
        recv_close_backed_up(&peer, v.name, (local, remote), move || is_close(c.recv()));
    });
}

/// The tokio client's close handshake, split into halves (the write half floods, the
/// read half receives), as [`ws_client_close_handshake_backed_up`]: the read half
/// returns the peer's close only once the echo, close_notify and the FIN are out.
/// (Before issue 29 it tried one flush and returned, and a client dropped then never
/// sent them.)
#[test]
fn tokio_ws_client_close_handshake_backed_up() {
    let rt = runtime();
    each_variant("twsc", |v, ca, _, files| {
        let (mut peer, addr) = OpenSsl::s_server(files, v.flag);
        let config = v.client_config(ca);
        let connect = rt.spawn(async move {
            tickwire::tokio::ws::Client::builder()
                .tls(config)
                .write_timeout(Some(WRITE_TIMEOUT))
                .close_timeout(T)
                .connect(&format!("wss://localhost:{}/close", addr.port()))
                .await
        });
        peer.answer_upgrade();
        let c = rt.block_on(connect).unwrap().unwrap();
        let local = c.local_addr().unwrap();
        close_then_stop(&mut peer, &CLOSE_FROM_SERVER, local, addr);
        let (mut rx, mut tx) = c.split();
        let rt = &rt;
        flood(|b| rt.block_on(tx.send_binary(b)));
        recv_close_backed_up(&peer, v.name, (local, addr), move || {
            let got = is_close(rt.block_on(rx.recv()));
            drop(tx);
            got
        });
    });
}

/// The tokio server's close handshake against `s_client` (unsplit): `recv` returns the
/// peer's close only once the echo, close_notify and the FIN are out. (Before issue 29
/// it returned at once, and a connection dropped then never sent them.)
#[test]
fn tokio_ws_server_close_handshake_backed_up() {
    let rt = runtime();
    each_variant("twss", |v, _, leaf, files| {
        let mut server = rt
            .block_on(
                tickwire::tokio::ws::Server::builder()
                    .tls(v.server_config(leaf))
                    .handshake_timeout(T)
                    .write_timeout(Some(WRITE_TIMEOUT))
                    .close_timeout(T)
                    .bind("127.0.0.1:0"),
            )
            .unwrap();
        let port = server.local_addr().unwrap().port();
        let mut peer = OpenSsl::s_client(files, port, v.flag);
        peer.send(UPGRADE_REQUEST);
        let mut c = rt.block_on(server.accept()).unwrap();
        rt.block_on(c.handshake()).unwrap();
        peer.wait_out("101 response", |o| contains(o, b"101 Switching"));
        let (local, remote) = (c.local_addr().unwrap(), c.peer_addr().unwrap());
        close_then_stop(&mut peer, &CLOSE_FROM_CLIENT, local, remote);
        let rt = &rt;
        flood(|b| rt.block_on(c.send_binary(b)));
        recv_close_backed_up(&peer, v.name, (local, remote), move || {
            is_close(rt.block_on(c.recv()))
        });
    });
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A POST whose body the stopped peer's buffers cannot take: its write times out.
fn big_post(host: &str) -> RequestWriter<Vec<u8>> {
    RequestWriter::new(vec![0; big_body_len() + 4096], host).unwrap()
}

/// A body more than the kernel buffers of a loopback connection take: ours grows up to
/// the largest `tcp_wmem`, the stopped peer's receive buffer up to the largest
/// `tcp_rmem` (32 MiB on Debian), even while it reads nothing.
fn big_body_len() -> usize {
    let max = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}"))
            .ok()
            .and_then(|t| t.split_whitespace().last()?.parse::<usize>().ok())
            .unwrap_or(32 << 20)
    };
    (max("tcp_rmem") + max("tcp_wmem")) * 3 / 2
}

/// A blocking REST request whose write times out into a stopped server: the client
/// drops the connection, after close_notify behind the bytes queued (within the close
/// timeout, 5 s by default). (Before issue 29: dropped without close_notify.)
#[test]
fn rest_failed_write_backed_up() {
    each_variant("restw", |v, ca, _, files| {
        let (peer, addr) = OpenSsl::s_server(files, v.flag);
        // The close (the queued bytes, then close_notify) waits for the resumed server
        // to drain megabytes: on a loaded machine that can take longer than the default
        // 5 s close timeout, after which the client drops the connection mid-record.
        let mut c = rest::Client::builder()
            .tls(v.client_config(ca))
            .write_timeout(Some(WRITE_TIMEOUT))
            .close_timeout(T)
            .read_timeout(Some(T))
            .connect(&format!("https://localhost:{}", addr.port()))
            .unwrap();
        let mut w = big_post(c.host_header());
        let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
        let body = vec![0x5a; big_body_len()];
        peer.stop();
        let resume = peer.resume_when_stalled(c.local_addr().unwrap(), addr);
        let req = w.post("/orders").body(&body).finish().unwrap();
        match c.send(&req, &mut r) {
            Err(rest::Error::WriteTimeout { .. }) => {}
            other => panic!("{}: {other:?}", v.name),
        }
        resume.join().unwrap();
        peer.expect_close_notify(v.name);
    });
}

/// A blocking REST request that fails on the read side (the stopped server never
/// answers: read timeout): the connection is dropped after close_notify. (Before issue
/// 29: without.)
#[test]
fn rest_failed_read_sends_close_notify() {
    each_variant("restr", |v, ca, _, files| {
        let (peer, addr) = OpenSsl::s_server(files, v.flag);
        let mut c = rest::Client::builder()
            .tls(v.client_config(ca))
            .read_timeout(Some(Duration::from_millis(300)))
            .connect(&format!("https://localhost:{}", addr.port()))
            .unwrap();
        let mut w = RequestWriter::new(vec![0; 4096], c.host_header()).unwrap();
        let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
        peer.stop();
        match c.send(&w.get("/quote").finish().unwrap(), &mut r) {
            Err(rest::Error::ReadTimeout { .. }) => {}
            other => panic!("{}: {other:?}", v.name),
        }
        peer.resume();
        peer.expect_close_notify(v.name);
    });
}

/// A kept-alive REST connection found stale (the server sent a 408 nobody asked for)
/// is replaced: the old one is closed with close_notify, while the server is stopped.
/// (Before issue 29: dropped without.)
#[test]
fn rest_stale_connection_replaced_sends_close_notify() {
    each_variant("rests", |v, ca, _, files| {
        let (mut peer, addr) = OpenSsl::s_server(files, v.flag);
        let mut c = rest::Client::builder()
            .tls(v.client_config(ca))
            .idle_probe(Some(Duration::ZERO))
            .connect_timeout(Duration::from_millis(500))
            .read_timeout(Some(T))
            .connect(&format!("https://localhost:{}", addr.port()))
            .unwrap();
        let mut w = RequestWriter::new(vec![0; 4096], c.host_header()).unwrap();
        let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
        let answer = thread::scope(|s| {
            let server = s.spawn(|| {
                peer.wait_out("request", |o| contains(o, b"GET /quote"));
                peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            });
            let resp = c.send(&w.get("/quote").finish().unwrap(), &mut r);
            server.join().unwrap();
            resp.map(|r| r.status())
        });
        assert_eq!(answer.unwrap(), 200, "{}", v.name);
        peer.send(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n");
        net_events::wait_arrived(c.local_addr().unwrap(), addr);
        peer.stop();
        // The probe finds the 408 and closes; the reconnect meets the stopped server.
        let again = c.send(&w.get("/quote").finish().unwrap(), &mut r);
        assert!(again.is_err(), "{}", v.name);
        assert_eq!(c.stats().stale_probed, 1, "{}", v.name);
        peer.resume();
        peer.expect_close_notify(v.name);
    });
}

/// `disconnect`, drop and a pool's shutdown (dropping it) send close_notify while the
/// server is stopped (it reads them once resumed).
#[test]
fn rest_disconnect_drop_and_pool_send_close_notify() {
    each_variant("restd", |v, ca, _, files| {
        for how in ["disconnect", "drop", "pool"] {
            let (peer, addr) = OpenSsl::s_server(files, v.flag);
            let url = format!("https://localhost:{}", addr.port());
            let builder = rest::Client::builder().tls(v.client_config(ca));
            match how {
                "disconnect" => {
                    let mut c = builder.connect(&url).unwrap();
                    peer.stop();
                    c.disconnect();
                    peer.resume();
                    peer.expect_close_notify(how);
                    drop(c);
                }
                "drop" => {
                    let c = builder.connect(&url).unwrap();
                    peer.stop();
                    drop(c);
                    peer.resume();
                    peer.expect_close_notify(how);
                }
                _ => {
                    let config = rest::PoolConfig {
                        size: 1,
                        ..rest::PoolConfig::default()
                    };
                    let pool = rest::ClientPool::with_builder(builder, &url, config).unwrap();
                    peer.stop();
                    drop(pool);
                    peer.resume();
                    peer.expect_close_notify(how);
                }
            }
        }
    });
}

/// A tokio REST request cancelled while its body is backed up (the future dropped by
/// a timeout): the connection it held closes with close_notify behind the bytes
/// queued, finished by a task once the server reads again. (Before issue 29: dropped
/// without close_notify.)
#[test]
fn tokio_rest_cancelled_send_backed_up() {
    let rt = runtime();
    each_variant("trest", |v, ca, _, files| {
        for how in ["cancelled", "write-timeout"] {
            let (peer, addr) = OpenSsl::s_server(files, v.flag);
            // As in rest_failed_write_backed_up: the close may wait longer than 5 s here.
            let mut builder = tickwire::tokio::rest::Client::builder()
                .tls(v.client_config(ca))
                .close_timeout(T);
            if how == "write-timeout" {
                builder = builder.write_timeout(Some(WRITE_TIMEOUT));
            }
            let url = format!("https://localhost:{}", addr.port());
            let mut c = rt.block_on(builder.connect(&url)).unwrap();
            let mut w = big_post(c.host_header());
            let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(vec![0; 4096]);
            let body = vec![0x5a; big_body_len()];
            peer.stop();
            let resume = peer.resume_when_stalled(c.local_addr().unwrap(), addr);
            rt.block_on(async {
                let req = w.post("/orders").body(&body).finish().unwrap();
                // Cancelled (the future dropped) half a second in, or failed by the
                // write timeout.
                let wait = if how == "cancelled" {
                    Duration::from_millis(500)
                } else {
                    T
                };
                let sent = tokio::time::timeout(wait, c.send(&req, &mut r));
                match (how, sent.await) {
                    ("cancelled", Err(_elapsed)) => {}
                    ("write-timeout", Ok(Err(rest::Error::WriteTimeout { .. }))) => {}
                    (_, other) => panic!("{} {how}: {other:?}", v.name),
                }
            });
            resume.join().unwrap();
            peer.expect_close_notify(&format!("{} {how}", v.name));
            drop(c);
        }
    });
}

/// A `TlsStream` closing into a full ciphertext buffer: the stopped peer's buffers are
/// full and so is ours, to within a few bytes (and, on TLS 1.3, the peer's KeyUpdate
/// request is answered into what is left). `close_notify` says "not yet" rather than
/// failing, and goes out once the peer reads again, after the answer. (Before issue
/// 29: an `InvalidData` error, and no close_notify.)
#[test]
fn tls_stream_close_notify_into_a_full_buffer() {
    each_variant("stream", |v, ca, _, files| {
        let (mut peer, addr) = OpenSsl::s_server(files, v.flag);
        let mut s = Blocking::connect(addr, &v.client_config(ca));
        // Data both ways: the handshake is over and the session tickets are taken
        // (then records mode takes over, where allowed).
        s.write_all(b"hello\n");
        peer.wait_out("hello", |o| contains(o, b"hello\n"));
        peer.send(b"welcome\n");
        s.read_until(|b| b.ends_with(b"\n"));
        assert_eq!(
            s.tls.codec().is_records_mode(),
            v.records && v.tls13(),
            "{}",
            v.name
        );
        if v.tls13() {
            // s_server's `K`: a KeyUpdate that requests ours.
            peer.send(b"K\n");
            net_events::wait_arrived(s.tls.get_ref().local_addr().unwrap(), addr);
        }
        peer.stop();
        // Fill the socket, then our buffer, with ever smaller records; again once the
        // peer's window is closed (an event: until then the kernel may still take
        // bytes, as ACKs of what is in flight arrive, and the buffer would drain).
        let local = s.tls.get_ref().local_addr().unwrap();
        for round in 0..2 {
            if round == 1 {
                net_events::wait_zero_window(local, addr);
            }
            for size in [16 << 10, 1024, 64, 1] {
                loop {
                    match s.tls.write(&vec![b'x'; size]) {
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) => panic!("{}: write: {e}", v.name),
                    }
                }
            }
        }
        // The KeyUpdate request is taken now: its answer goes into what is left.
        s.tls.read_available().unwrap();
        match s.tls.close_notify() {
            Ok(false) => {}
            other => panic!("{}: close_notify into a full buffer: {other:?}", v.name),
        }
        peer.resume();
        let deadline = Instant::now() + T;
        loop {
            match s.tls.close_notify() {
                Ok(true) => break,
                Ok(false) => s.wait(deadline),
                Err(e) => panic!("{}: close_notify: {e}", v.name),
            }
        }
        let log = peer.expect_close_notify(v.name);
        if v.tls13() {
            let close = received_close_notify(&log).unwrap();
            let answer = log
                .lines()
                .position(|l| l.starts_with("<<<") && l.contains("KeyUpdate"));
            assert!(
                answer.is_some_and(|a| a < close),
                "{}: our KeyUpdate answer did not come before close_notify",
                v.name
            );
        }
    });
}
