//! Nine connections in one poll loop: a [`Stack`] on smoltcp over an AF_XDP
//! socket in one network namespace, servers nobody here wrote (and tickwire's
//! own) on the kernel's TCP in the other, a veth pair between them.
//!
//! | slot | scheme  | peer                                          | what happens              |
//! |------|---------|-----------------------------------------------|---------------------------|
//! | 0    | wss://  | Python websockets with ssl (echo)             | messages both ways        |
//! | 1    | ws://   | tickwire's blocking server (echo)             | messages both ways        |
//! | 2    | wss://  | tickwire's blocking server with TLS (echo)    | messages both ways        |
//! | 3    | https://| nginx (TLS, keep-alive)                       | requests one after another|
//! | 4    | http:// | nginx (keep-alive)                            | requests one after another|
//! | 5    | https://| `openssl s_server -www` (HTTP/1.0, close)     | one request, then Closed  |
//! | 6    | ws://   | Python websockets (echo), killed mid-stream   | Failed, reconnected, done |
//! | 7    | https://| a server answering the ClientHello with junk  | Failed(Tls), alone        |
//! | 8    | wss://  | a server resetting after the ClientHello      | Failed(Reset), alone      |
//!
//! Every message is checked byte for byte; the name `bypass.test` (not the
//! address) goes into the Host header, the SNI and the certificate check
//! against the test's own CA. Heap allocations are counted in the loop's
//! thread: none per message once all are established, plain and TLS alike
//! (TLS 1.3 records mode opens records in place and, with the bypass crate's
//! `std` feature, seals them in place too; see the crate docs).
//!
//! `rest_bytes_while_idle_mean_a_new_connection`: a response nobody asked for,
//! arriving while a REST connection is idle, makes the next request `Stale`
//! (nothing sent), that connection alone fails, and after `reconnect` the
//! request goes through on a new connection in the same slot.
//!
//! `wss_key_updates_from_a_tungstenite_rustls_server`: tungstenite over rustls
//! updates its keys (asking for ours) every 50 messages; every echo decrypts and
//! checks, in the codec's records mode.
//!
//! Needs root (namespaces, XDP). Peers: nginx, openssl, the websockets venv
//! (conformance/websockets/setup.sh). Without them each test skips loudly,
//! or fails when `TICKWIRE_REQUIRE_PEERS` is set (CI).
#![cfg(all(feature = "af-xdp", feature = "tls", target_os = "linux"))]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use smoltcp::iface::SocketStorage;
use smoltcp::wire::{EthernetAddress, HardwareAddress, Ipv4Cidr};
use tickwire_bypass::clock::LoopClock;
use tickwire_bypass::xdp::netns::{self, VethPair};
use tickwire_bypass::xdp::{Attach, UmemArea, XdpConfig, XdpDevice, XdpProgram};
use tickwire_bypass::{
    ConnError, ConnId, Event, NetConfig, Options, Remote, Scheme, Slot, SlotSizes, Stack,
};
use tickwire_codec::time::Instant;
use tickwire_codec::ws::{CloseCode, ConnectionError, Message};
use tickwire_conformance::{PeerError, ServerProcess, TempDir, skip_or_fail};

#[path = "../../codec/tests/common/mod.rs"]
mod common;
use common::allocs;

const HOST: &str = "bypass.test";
const N: usize = 9;
/// Messages each WebSocket connection sends (and gets back).
const MESSAGES: usize = 400;
/// Requests each keep-alive REST connection sends.
const REQUESTS: usize = 300;
/// Round trips each does before anything is counted.
const WARM: usize = 20;
/// Where the plain-only and then the TLS-only counted phases end.
const COUNTED: usize = 220;
/// Slot 6's peer is killed after this many echoes.
const KILL_AT: usize = 300;
/// Messages in flight per WebSocket connection.
const WINDOW: usize = 8;
/// The whole run's limit in real time.
const DEADLINE: Duration = Duration::from_secs(120);
const QUOTE: &str = r#"{"symbol":"BTCUSDT","bid":"97000.5","ask":"97000.6"}"#;

const P_WSS_PY: u16 = 9100;
const P_WS_TW: u16 = 9101;
const P_WSS_TW: u16 = 9102;
const P_HTTPS_NGINX: u16 = 8443;
const P_HTTP_NGINX: u16 = 8080;
const P_OPENSSL: u16 = 4433;
const P_WS_PY: u16 = 9104;
const P_JUNK: u16 = 4434;
const P_RESET: u16 = 4435;

const ECHO_PY: &str = r#"
import asyncio, ssl, sys
from websockets.asyncio.server import serve

async def echo(ws):
    async for m in ws:
        await ws.send(m)

async def main():
    host, port = sys.argv[1], int(sys.argv[2])
    ctx = None
    if len(sys.argv) > 3:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    async with serve(echo, host, port, ssl=ctx, max_size=None, compression=None,
                     ping_interval=None):
        await asyncio.Future()

asyncio.run(main())
"#;

fn env(test: &str) -> Option<VethPair> {
    let pair = VethPair::create().map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound => {
            PeerError::Absent(format!("{e} (run as root with iproute2 installed)"))
        }
        _ => PeerError::Failed(e.to_string()),
    });
    skip_or_fail(test, pair)
}

fn server_addr(port: u16) -> SocketAddr {
    SocketAddr::from((netns::SERVER_ADDR, port))
}

/// The peers' certificate for `bypass.test`, self-signed: the client's CA.
struct Cert {
    cert_pem: String,
    key_pem: String,
    cert: PathBuf,
    key: PathBuf,
}

fn cert(dir: &Path) -> Cert {
    let c = rcgen::generate_simple_self_signed(vec![HOST.to_owned()]).expect("certificate");
    let cert_pem = c.cert.pem();
    let key_pem = c.signing_key.serialize_pem();
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, &cert_pem).expect("cert.pem");
    std::fs::write(&key, &key_pem).expect("key.pem");
    Cert {
        cert_pem,
        key_pem,
        cert,
        key,
    }
}

fn nginx_binary() -> Result<PathBuf, PeerError> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| PeerError::Absent("nginx not found: `apt-get install nginx-light`".into()))
}

fn nginx(dir: &Path, c: &Cert) -> Result<ServerProcess, PeerError> {
    let bin = nginx_binary()?;
    let d = dir.join("nginx");
    std::fs::create_dir_all(d.join("tmp")).map_err(|e| PeerError::Failed(e.to_string()))?;
    let conf = format!(
        r#"daemon off;
master_process on;
worker_processes 1;
user root;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    access_log off;
    keepalive_timeout 60s;
    keepalive_requests 100000;
    server {{
        listen {http};
        listen {https} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        location = /quote {{
            default_type application/json;
            return 200 '{QUOTE}';
        }}
    }}
}}
"#,
        d = d.display(),
        http = server_addr(P_HTTP_NGINX),
        https = server_addr(P_HTTPS_NGINX),
        cert = c.cert.display(),
        key = c.key.display(),
    );
    let path = d.join("nginx.conf");
    std::fs::write(&path, conf).map_err(|e| PeerError::Failed(e.to_string()))?;
    let mut cmd = Command::new(bin);
    cmd.arg("-p")
        .arg(&d)
        .arg("-e")
        .arg(d.join("error.log"))
        .arg("-c")
        .arg(&path);
    ServerProcess::spawn(
        "nginx",
        cmd,
        server_addr(P_HTTP_NGINX),
        d.join("stderr.log"),
        Duration::from_secs(20),
    )
}

fn openssl(dir: &Path, c: &Cert) -> Result<ServerProcess, PeerError> {
    let mut cmd = Command::new("openssl");
    cmd.args(["s_server", "-quiet", "-www", "-accept"])
        .arg(server_addr(P_OPENSSL).to_string())
        .arg("-cert")
        .arg(&c.cert)
        .arg("-key")
        .arg(&c.key);
    ServerProcess::spawn(
        "openssl s_server",
        cmd,
        server_addr(P_OPENSSL),
        dir.join("openssl.log"),
        Duration::from_secs(20),
    )
    .map_err(|e| match e {
        PeerError::Failed(m) if m.contains("spawn") => {
            PeerError::Absent(format!("{m} (`apt-get install openssl`)"))
        }
        e => e,
    })
}

fn python_echo(
    python: &Path,
    dir: &Path,
    port: u16,
    tls: Option<&Cert>,
) -> Result<ServerProcess, PeerError> {
    let script = dir.join("echo.py");
    std::fs::write(&script, ECHO_PY).map_err(|e| PeerError::Failed(e.to_string()))?;
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .arg(netns::SERVER_ADDR.to_string())
        .arg(port.to_string());
    if let Some(c) = tls {
        cmd.arg(&c.cert).arg(&c.key);
    }
    ServerProcess::spawn(
        "python websockets",
        cmd,
        server_addr(port),
        dir.join(format!("websockets-{port}.log")),
        Duration::from_secs(20),
    )
}

/// tickwire's blocking server: every connection on its own thread, each data
/// message echoed.
fn tickwire_echo(listener: TcpListener, tls: Option<tickwire::tls::TlsServerConfig>) {
    let mut b = tickwire::ws::Server::builder();
    b = b
        .max_message_size(1 << 20)
        .read_timeout(Some(Duration::from_secs(60)));
    if let Some(t) = tls {
        b = b.tls(t);
    }
    let mut server = b.listener(listener).expect("tickwire server");
    std::thread::spawn(move || {
        while let Ok(mut c) = server.accept() {
            std::thread::spawn(move || {
                use tickwire::ws::Message as M;
                loop {
                    let r = c.recv_with(|msg, tx| match msg {
                        M::Text(t) => tx.send_text(t).map(|()| true),
                        M::Binary(b) => tx.send_binary(b).map(|()| true),
                        _ => Ok(false),
                    });
                    match r {
                        Ok(Some(_)) => {}
                        _ => return,
                    }
                }
            });
        }
    });
}

/// Answers every ClientHello with bytes that are not TLS.
fn junk_server(listener: TcpListener) {
    std::thread::spawn(move || {
        while let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            std::thread::sleep(Duration::from_secs(2));
        }
    });
}

/// Reads the ClientHello, then resets the connection (SO_LINGER 0).
fn reset_server(listener: TcpListener) {
    std::thread::spawn(move || {
        while let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let linger = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            use std::os::fd::AsRawFd;
            // SAFETY: setsockopt on an open socket with a valid linger struct.
            unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&raw const linger).cast(),
                    size_of::<libc::linger>() as libc::socklen_t,
                );
            }
            drop(s);
        }
    });
}

/// What each connection is to do, and what it saw.
struct Script {
    name: &'static str,
    remote: Remote,
    id: Option<ConnId>,
    kind: Kind,
    /// Messages sent / echoes checked (WebSocket); requests sent / responses checked (REST).
    sent: usize,
    done: usize,
    /// How far it may go now (the phases raise it).
    limit: usize,
    total: usize,
    waiting: bool,
    failures: Vec<String>,
    closed: bool,
    connects: usize,
    retry_at: Option<Instant>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Echo { tls: bool },
    Rest { tls: bool },
    OneShot,
    MustFail,
}

fn payload(slot: usize, i: usize) -> Vec<u8> {
    let len = [0usize, 1, 125, 126, 127, 1000, 1460, 4096, 9000][i % 9] + (i * 7) % 50;
    (0..len)
        .map(|k| (slot as u8) ^ (i as u8).wrapping_mul(31) ^ (k as u8).wrapping_mul(7))
        .collect()
}

#[test]
fn nine_connections_in_one_loop_over_af_xdp() {
    let test = "nine_connections_in_one_loop_over_af_xdp";
    let Some(python) = tickwire_conformance::websockets_python(test) else {
        return;
    };
    let Some(_) = skip_or_fail(test, nginx_binary()) else {
        return;
    };
    let Some(pair) = env(test) else {
        return;
    };
    let dir = TempDir::new("bypass-stack").expect("temp dir");
    let c = cert(dir.path());

    // The peers, all in the server namespace.
    let listen = |port| {
        pair.in_server(move || TcpListener::bind(server_addr(port)))
            .expect("server namespace")
            .expect("bind")
    };
    let server_tls =
        tickwire::tls::TlsServerConfig::from_pem(c.cert_pem.as_bytes(), c.key_pem.as_bytes())
            .expect("server TLS");
    tickwire_echo(listen(P_WS_TW), None);
    tickwire_echo(listen(P_WSS_TW), Some(server_tls));
    junk_server(listen(P_JUNK));
    reset_server(listen(P_RESET));
    let d = dir.path().to_owned();
    let started = pair
        .in_server(|| -> Result<_, PeerError> {
            Ok((
                nginx(&d, &c)?,
                openssl(&d, &c)?,
                python_echo(&python, &d, P_WSS_PY, Some(&c))?,
            ))
        })
        .expect("server namespace");
    let Some(peers) = skip_or_fail(test, started) else {
        return;
    };
    // Slot 6's peer lives on a thread in the server namespace that kills it
    // and starts it again when told.
    let (kill_tx, kill_rx) = mpsc::channel::<()>();
    let (up_tx, up_rx) = mpsc::channel::<()>();
    let (py, d) = (python.clone(), dir.path().to_owned());
    let keeper = pair.spawn_server(move || {
        let mut p = python_echo(&py, &d, P_WS_PY, None).expect("python ws peer");
        up_tx.send(()).unwrap();
        if kill_rx.recv().is_ok() {
            drop(p); // SIGTERM: the process dies mid-stream, the kernel ends its connection
            std::thread::sleep(Duration::from_millis(300));
            p = python_echo(&py, &d, P_WS_PY, None).expect("python ws peer again");
            let _ = up_tx.send(());
            let _ = kill_rx.recv();
        }
        drop(p);
    });
    up_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("python ws peer up");

    let client_tls = tickwire::tls::TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(c.cert_pem.as_bytes())
        .expect("CA")
        .build()
        .expect("client TLS")
        .client_config()
        .clone();
    let report = pair
        .in_client(move || client(client_tls, kill_tx, up_rx))
        .expect("client namespace");
    drop(keeper);
    drop(peers);
    println!("{report}");
}

fn client(
    tls: std::sync::Arc<tickwire_codec::tls::rustls::ClientConfig>,
    kill: mpsc::Sender<()>,
    up: mpsc::Receiver<()>,
) -> String {
    let clock = LoopClock::new();
    let start = std::time::Instant::now();
    let program = XdpProgram::attach(netns::CLIENT_IF, Attach::Auto).expect("attach XDP");
    let mut area = UmemArea::new(4096, 2048).expect("UMEM");
    let cfg = XdpConfig {
        frame_size: 2048,
        ring_size: 2048,
        ..XdpConfig::default()
    };
    let device = XdpDevice::open(netns::CLIENT_IF, area.as_mut_slice(), cfg).expect("XDP socket");
    program.insert(cfg.queue, &device).expect("XSKMAP");
    let mac = device.mac();

    // All memory, once.
    let sizes = SlotSizes::with_tls(64 * 1024, 32 * 1024, 32 * 1024);
    let mut arena = vec![0u8; N * sizes.arena_len()];
    let mut slots: Vec<Slot<'_>> = arena
        .chunks_mut(sizes.arena_len())
        .map(|a| Slot::new(a, sizes).expect("slot"))
        .collect();
    let mut sockets = [SocketStorage::EMPTY; N];
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(clock.now().as_nanos() ^ 0x5eed).to_le_bytes());
    let net = NetConfig {
        hardware: HardwareAddress::Ethernet(EthernetAddress(mac)),
        addr: Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX),
        gateway: None,
    };
    let mut stack =
        Stack::new(device, net, &mut sockets, &mut slots, seed, clock.now()).expect("stack");

    let remote = |scheme, port, path: &str| {
        Remote::new(scheme, HOST, netns::SERVER_ADDR, port, path).expect("remote")
    };
    let mut scripts = vec![
        script(
            "wss python websockets",
            remote(Scheme::Wss, P_WSS_PY, "/feed?x=1"),
            Kind::Echo { tls: true },
        ),
        script(
            "ws tickwire",
            remote(Scheme::Ws, P_WS_TW, "/"),
            Kind::Echo { tls: false },
        ),
        script(
            "wss tickwire",
            remote(Scheme::Wss, P_WSS_TW, "/"),
            Kind::Echo { tls: true },
        ),
        script(
            "https nginx",
            remote(Scheme::Https, P_HTTPS_NGINX, ""),
            Kind::Rest { tls: true },
        ),
        script(
            "http nginx",
            remote(Scheme::Http, P_HTTP_NGINX, ""),
            Kind::Rest { tls: false },
        ),
        script(
            "https openssl s_server",
            remote(Scheme::Https, P_OPENSSL, ""),
            Kind::OneShot,
        ),
        script(
            "ws python websockets (killed)",
            remote(Scheme::Ws, P_WS_PY, "/"),
            Kind::Echo { tls: false },
        ),
        script(
            "https junk server",
            remote(Scheme::Https, P_JUNK, ""),
            Kind::MustFail,
        ),
        script(
            "wss reset server",
            remote(Scheme::Wss, P_RESET, "/"),
            Kind::MustFail,
        ),
    ];
    let options = Options {
        tls: Some(tls),
        ..Options::default()
    };
    for s in scripts.iter_mut() {
        let id = stack
            .connect(s.remote.clone(), options.clone(), clock.now())
            .expect("connect");
        s.id = Some(id);
        s.connects = 1;
    }
    let payloads: Vec<Vec<Vec<u8>>> = (0..N)
        .map(|k| (0..MESSAGES).map(|i| payload(k, i)).collect())
        .collect();

    let mut log = String::new();
    let run = |scripts: &mut Vec<Script>,
               stack: &mut Stack<'_, XdpDevice<'_>>,
               until: &dyn Fn(&[Script]) -> bool,
               what: &str| {
        while !until(scripts) {
            assert!(
                start.elapsed() < DEADLINE,
                "stalled: {what}: {}\n{stack:#?}",
                state(scripts)
            );
            turn(stack, scripts, &payloads, clock.now());
        }
    };

    // 1. Everything connects (or fails as it must) and warms up.
    for s in scripts.iter_mut() {
        s.limit = WARM;
    }
    run(
        &mut scripts,
        &mut stack,
        &|s| s.iter().all(|s| s.settled(WARM)),
        "warm-up",
    );
    for s in &scripts[7..] {
        assert_eq!(s.failures.len(), 1, "{}: {:?}", s.name, s.failures);
    }
    assert!(
        scripts[7].failures[0].starts_with("TLS"),
        "{:?}",
        scripts[7].failures
    );
    assert_eq!(scripts[8].failures[0], "Reset", "{:?}", scripts[8].failures);
    assert!(
        scripts[5].closed,
        "s_server's close-delimited response ends the connection"
    );

    // 2. Plain connections only: not one heap allocation per message.
    let plain = [1usize, 4, 6];
    for &k in &plain {
        scripts[k].limit = COUNTED;
    }
    let before = allocs();
    run(
        &mut scripts,
        &mut stack,
        &|s| plain.iter().all(|&k| s[k].done >= COUNTED),
        "plain",
    );
    let plain_allocs = allocs() - before;
    let plain_msgs: usize = plain.iter().map(|_| COUNTED - WARM).sum();

    // 3. TLS connections only: not one heap allocation per message either
    // (records opened and sealed in place).
    let tls = [0usize, 2, 3];
    for &k in &tls {
        scripts[k].limit = COUNTED;
    }
    let before = allocs();
    run(
        &mut scripts,
        &mut stack,
        &|s| tls.iter().all(|&k| s[k].done >= COUNTED),
        "tls",
    );
    let tls_allocs = allocs() - before;
    let tls_msgs: usize = tls.iter().map(|_| COUNTED - WARM).sum();

    // 4. Everyone to the end; slot 6's peer killed mid-stream, reconnected.
    for s in scripts.iter_mut() {
        s.limit = s.total;
    }
    // Messages still in flight when the peer dies: it is killed mid-stream.
    scripts[6].limit = KILL_AT + WINDOW;
    run(
        &mut scripts,
        &mut stack,
        &|s| s[6].done >= KILL_AT,
        "to the kill",
    );
    let others_before: usize = [0, 1, 2, 3, 4].iter().map(|&k| scripts[k].done).sum();
    kill.send(()).unwrap();
    run(
        &mut scripts,
        &mut stack,
        &|s| !s[6].failures.is_empty(),
        "the kill seen",
    );
    let others_at_failure: usize = [0, 1, 2, 3, 4].iter().map(|&k| scripts[k].done).sum();
    let at_failure = state(&scripts);
    // Reconnected (after the caller's backoff, refused while the peer was down)
    // and echoing again.
    let done_at_failure = scripts[6].done;
    scripts[6].limit = scripts[6].total;
    run(
        &mut scripts,
        &mut stack,
        &|s| s[6].connects > 1 && s[6].done >= done_at_failure + 2 * WINDOW,
        "reconnected",
    );
    let others_at_reconnect: usize = [0, 1, 2, 3, 4].iter().map(|&k| scripts[k].done).sum();
    let at_reconnect = state(&scripts);
    drop(up);
    run(
        &mut scripts,
        &mut stack,
        &|s| s.iter().all(|s| s.settled(s.total)),
        "the end",
    );

    // Close the WebSockets and REST connections cleanly.
    for k in [0, 1, 2, 3, 4, 6] {
        let id = scripts[k].id.unwrap();
        stack.close(id, CloseCode::NORMAL, "bye").expect("close");
    }
    run(
        &mut scripts,
        &mut stack,
        &|s| [0, 1, 2, 3, 4, 6].iter().all(|&k| s[k].closed),
        "close",
    );

    let stats = stack.device().stats();
    let _ = write_report(
        &mut log,
        &scripts,
        plain_allocs,
        plain_msgs,
        tls_allocs,
        tls_msgs,
        stats,
    );
    for s in &scripts[..7] {
        if s.name.contains("killed") {
            assert_eq!(
                s.connects,
                s.failures.len() + 1,
                "{}: {:?}",
                s.name,
                s.failures
            );
            assert!(!s.failures.is_empty());
        } else {
            assert!(s.failures.is_empty(), "{}: {:?}", s.name, s.failures);
        }
    }
    assert!(
        others_at_reconnect > others_at_failure && others_at_failure >= others_before,
        "the others carried on while slot 6 was down: {others_before} {others_at_failure} \
         {others_at_reconnect}\n{at_failure}\n{at_reconnect}"
    );
    assert_eq!(
        plain_allocs, 0,
        "heap allocations on plain connections: {log}"
    );
    assert_eq!(
        tls_allocs, 0,
        "heap allocations on TLS connections ({tls_msgs} messages): {log}"
    );
    log
}

fn script(name: &'static str, remote: Remote, kind: Kind) -> Script {
    let total = match kind {
        Kind::Echo { .. } => MESSAGES,
        Kind::Rest { .. } => REQUESTS,
        Kind::OneShot => 1,
        Kind::MustFail => 0,
    };
    Script {
        name,
        remote,
        id: None,
        kind,
        sent: 0,
        done: 0,
        limit: 0,
        total,
        waiting: false,
        failures: Vec::new(),
        closed: false,
        connects: 0,
        retry_at: None,
    }
}

impl Script {
    /// Whether it reached `n` (or its end), or failed as it must.
    fn settled(&self, n: usize) -> bool {
        match self.kind {
            Kind::MustFail => !self.failures.is_empty(),
            Kind::OneShot => self.closed,
            _ => self.done >= n.min(self.total),
        }
    }
}

fn state(scripts: &[Script]) -> String {
    scripts
        .iter()
        .map(|s| {
            let closed = if s.closed { " closed" } else { "" };
            format!(
                "{}: {}/{}{closed} {:?}",
                s.name, s.done, s.limit, s.failures
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One turn of the loop: poll, events, reads, sends.
fn turn(
    stack: &mut Stack<'_, XdpDevice<'_>>,
    scripts: &mut [Script],
    payloads: &[Vec<Vec<u8>>],
    now: Instant,
) {
    let moved = stack.poll(now);
    while let Some((id, ev)) = stack.next_event() {
        let k = id.slot();
        let s = &mut scripts[k];
        if s.id != Some(id) {
            continue;
        }
        match ev {
            Event::Connected => {}
            Event::Readable => {}
            Event::Closed => s.closed = true,
            Event::Failed(e) => {
                s.failures.push(describe(&e));
                s.waiting = false;
                if s.kind == (Kind::Echo { tls: false }) && k == 6 {
                    // The caller's backoff: 100 ms on the loop's clock.
                    s.retry_at = Some(now.saturating_add(Duration::from_millis(100)));
                }
            }
        }
    }
    for (k, s) in scripts.iter_mut().enumerate() {
        let Some(id) = s.id else { continue };
        if let Some(at) = s.retry_at
            && now >= at
        {
            s.retry_at = None;
            s.id = Some(stack.reconnect(id, now).expect("reconnect"));
            s.connects += 1;
            // Whatever was in flight is lost with the connection: resend it.
            s.sent = s.done;
            continue;
        }
        if !stack.is_open(id) {
            continue;
        }
        match s.kind {
            Kind::Echo { .. } => {
                loop {
                    match stack.recv(id) {
                        // The peer's answer to our close.
                        Ok(Some((Message::Close(_), _))) => {}
                        Ok(Some((msg, _))) => {
                            let Message::Binary(b) = msg else {
                                panic!("{}: unexpected {msg:?}", s.name)
                            };
                            assert!(
                                b == &payloads[k][s.done][..],
                                "{}: echo {} differs",
                                s.name,
                                s.done
                            );
                            s.done += 1;
                        }
                        Ok(None) => break,
                        Err(_) => break, // its Failed event says why
                    }
                }
                while s.sent < s.limit && s.sent < s.done + WINDOW {
                    match stack
                        .sender(id)
                        .map(|tx| tx.send_binary(&payloads[k][s.sent]))
                    {
                        Ok(Ok(())) => s.sent += 1,
                        Ok(Err(ConnectionError::Backpressure)) => break,
                        // It just failed (its Failed event comes with the next poll).
                        Ok(Err(_)) if !stack.is_open(id) => break,
                        Ok(Err(e)) => panic!("{}: send: {e}", s.name),
                        Err(e) => panic!("{}: sender: {e}", s.name),
                    }
                }
            }
            Kind::Rest { .. } | Kind::OneShot => {
                if s.waiting {
                    match stack.response(id) {
                        Ok(Some(r)) => {
                            assert_eq!(r.status(), 200, "{}", s.name);
                            if s.kind == Kind::OneShot {
                                assert!(
                                    r.body_str().unwrap_or("").contains("s_server"),
                                    "{}: {:?}",
                                    s.name,
                                    r.body_str()
                                );
                            } else {
                                assert_eq!(r.body(), QUOTE.as_bytes(), "{}", s.name);
                            }
                            s.done += 1;
                            s.waiting = false;
                        }
                        Ok(None) => {}
                        Err(_) => {}
                    }
                }
                if !s.waiting && s.sent < s.limit.min(s.total) && s.done == s.sent {
                    match stack.request(id, now, |w| w.get("/quote").finish()) {
                        Ok(()) => {
                            s.sent += 1;
                            s.waiting = true;
                        }
                        Err(ConnError::Backpressure) => {}
                        Err(e) => panic!("{}: request: {e}", s.name),
                    }
                }
            }
            Kind::MustFail => {}
        }
    }
    if !moved && !stack.device_mut().has_rx() {
        let _ = stack.device_mut().wait(1);
    }
}

fn describe(e: &ConnError) -> String {
    match e {
        ConnError::Tls(t) => format!("TLS {t}"),
        ConnError::Reset => "Reset".into(),
        e => format!("{e:?}"),
    }
}

fn write_report(
    out: &mut String,
    scripts: &[Script],
    plain_allocs: u64,
    plain_msgs: usize,
    tls_allocs: u64,
    tls_msgs: usize,
    stats: tickwire_bypass::xdp::Stats,
) -> std::fmt::Result {
    use std::fmt::Write as _;
    for s in scripts {
        writeln!(
            out,
            "{:32} done {:4}/{:4} connects {} closed {} failures {:?}",
            s.name, s.done, s.total, s.connects, s.closed, s.failures
        )?;
    }
    writeln!(
        out,
        "allocations: plain {plain_allocs} over {plain_msgs} round trips; \
         TLS {tls_allocs} over {tls_msgs} round trips; device {stats:?}"
    )
}

/// A keep-alive server that answers each request, then, 20 ms after the first
/// answer, sends a response nobody asked for (a 408, as servers do before they
/// close an idle connection) and keeps the connection open. Counts connections.
fn unsolicited_server(
    listener: TcpListener,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    std::thread::spawn(move || {
        while let Ok((mut s, _)) = listener.accept() {
            let n = accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let mut answered = 0;
                loop {
                    let Ok(k) = s.read(&mut chunk) else { return };
                    if k == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..k]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        let body = QUOTE.as_bytes();
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                        let _ = s.write_all(head.as_bytes());
                        let _ = s.write_all(body);
                        answered += 1;
                        if n == 0 && answered == 1 {
                            std::thread::sleep(Duration::from_millis(20));
                            let _ = s.write_all(
                                b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n",
                            );
                        }
                    }
                }
            });
        }
    });
}

/// A REST connection that received bytes nobody asked for while idle is not
/// reused (RFC 9112 §6.3): the next request is refused with `Stale` before a byte
/// of it is sent, the connection fails alone, and after `reconnect` (the same
/// slot, the same memory) the request goes through.
#[test]
fn rest_bytes_while_idle_mean_a_new_connection() {
    let test = "rest_bytes_while_idle_mean_a_new_connection";
    let Some(pair) = env(test) else {
        return;
    };
    const PORT: u16 = 8090;
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let listener = pair
        .in_server(|| TcpListener::bind(server_addr(PORT)))
        .expect("server namespace")
        .expect("bind");
    unsolicited_server(listener, accepted.clone());
    let result = pair
        .in_client(|| {
            let clock = LoopClock::new();
            let start = std::time::Instant::now();
            let program = XdpProgram::attach(netns::CLIENT_IF, Attach::Auto).expect("attach XDP");
            let mut area = UmemArea::new(256, 2048).expect("UMEM");
            let cfg = XdpConfig {
                frame_size: 2048,
                ring_size: 128,
                ..XdpConfig::default()
            };
            let device =
                XdpDevice::open(netns::CLIENT_IF, area.as_mut_slice(), cfg).expect("XDP socket");
            program.insert(cfg.queue, &device).expect("XSKMAP");
            let net = NetConfig {
                hardware: HardwareAddress::Ethernet(EthernetAddress(device.mac())),
                addr: Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX),
                gateway: None,
            };
            let sizes = SlotSizes::plain(16 * 1024, 8 * 1024, 4 * 1024);
            let mut arena = vec![0u8; sizes.arena_len()];
            let mut slots = [Slot::new(&mut arena, sizes).expect("slot")];
            let mut sockets = [SocketStorage::EMPTY; 1];
            let mut stack = Stack::new(device, net, &mut sockets, &mut slots, [7; 32], clock.now())
                .expect("stack");
            let remote =
                Remote::new(Scheme::Http, HOST, netns::SERVER_ADDR, PORT, "").expect("remote");
            let mut id = stack
                .connect(remote, Options::default(), clock.now())
                .expect("connect");
            let events = std::cell::RefCell::new(Vec::new());
            let wait =
                |stack: &mut Stack<'_, XdpDevice<'_>>,
                 what: &str,
                 until: &mut dyn FnMut(&mut Stack<'_, XdpDevice<'_>>) -> bool| {
                    while !until(stack) {
                        assert!(start.elapsed() < Duration::from_secs(30), "stalled: {what}");
                        stack.poll(clock.now());
                        while let Some((_, ev)) = stack.next_event() {
                            events.borrow_mut().push(ev);
                        }
                    }
                };
            wait(&mut stack, "connect", &mut |s| s.is_open(id));
            stack
                .request(id, clock.now(), |w| w.get("/quote").finish())
                .expect("request 1");
            let mut got = false;
            wait(&mut stack, "response 1", &mut |s| {
                if let Ok(Some(r)) = s.response(id) {
                    assert_eq!((r.status(), r.body()), (200, QUOTE.as_bytes()));
                    got = true;
                }
                got
            });
            // Let the unsolicited 408 arrive while the connection is idle.
            let t = clock.now();
            wait(&mut stack, "idle", &mut |_| {
                clock.now().saturating_duration_since(t) > Duration::from_millis(200)
            });
            let refused = stack.request(id, clock.now(), |w| w.get("/quote").finish());
            assert_eq!(
                refused,
                Err(ConnError::Stale),
                "bytes that arrived while idle"
            );
            wait(&mut stack, "the failure event", &mut |_| true);
            stack.poll(clock.now());
            while let Some((_, ev)) = stack.next_event() {
                events.borrow_mut().push(ev);
            }
            assert!(
                events.borrow().contains(&Event::Failed(ConnError::Stale)),
                "{events:?}"
            );
            id = stack.reconnect(id, clock.now()).expect("reconnect");
            wait(&mut stack, "reconnect", &mut |s| s.is_open(id));
            stack
                .request(id, clock.now(), |w| w.get("/quote").finish())
                .expect("request 2");
            let mut got = false;
            wait(&mut stack, "response 2", &mut |s| {
                if let Ok(Some(r)) = s.response(id) {
                    assert_eq!(
                        (r.status(), r.body()),
                        (200, QUOTE.as_bytes()),
                        "not the 408"
                    );
                    got = true;
                }
                got
            });
            events.into_inner()
        })
        .expect("client namespace");
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "{result:?}"
    );
}

/// tungstenite over rustls (std): echoes every binary message and, before every
/// 50th echo, updates its traffic keys asking the client to update its own
/// (TLS 1.3 KeyUpdate, update_requested). Returns the KeyUpdates sent.
fn tungstenite_rustls_server(listener: TcpListener, c: &Cert) -> std::thread::JoinHandle<usize> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = vec![CertificateDer::from_pem_slice(c.cert_pem.as_bytes()).expect("cert")];
    let key = PrivateKeyDer::from_pem_slice(c.key_pem.as_bytes()).expect("key");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    let config = std::sync::Arc::new(config);
    std::thread::spawn(move || {
        let (tcp, _) = listener.accept().expect("accept");
        tcp.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let conn = rustls::ServerConnection::new(config).expect("rustls");
        let tls = rustls::StreamOwned::new(conn, tcp);
        let mut ws = tungstenite::accept(tls).expect("tungstenite handshake");
        let (mut n, mut updates) = (0, 0);
        loop {
            match ws.read() {
                Ok(tungstenite::Message::Binary(b)) => {
                    n += 1;
                    if n % 50 == 0 {
                        ws.get_mut().conn.refresh_traffic_keys().expect("KeyUpdate");
                        updates += 1;
                    }
                    ws.send(tungstenite::Message::Binary(b)).expect("echo");
                }
                Ok(_) => {}
                Err(_) => return updates,
            }
        }
    })
}

/// wss:// against tungstenite over rustls, which updates its keys (and asks for
/// ours) every 50 messages: every echo still decrypts and checks, and the
/// connection closes cleanly.
#[test]
fn wss_key_updates_from_a_tungstenite_rustls_server() {
    let test = "wss_key_updates_from_a_tungstenite_rustls_server";
    let Some(pair) = env(test) else {
        return;
    };
    const PORT: u16 = 9443;
    const COUNT: usize = 300;
    let dir = TempDir::new("bypass-keyupdate").expect("temp dir");
    let c = cert(dir.path());
    let listener = pair
        .in_server(|| TcpListener::bind(server_addr(PORT)))
        .expect("server namespace")
        .expect("bind");
    let server = tungstenite_rustls_server(listener, &c);
    let client_tls = tickwire::tls::TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(c.cert_pem.as_bytes())
        .expect("CA")
        .build()
        .expect("client TLS")
        .client_config()
        .clone();
    let (echoes, records_mode) = pair
        .in_client(move || {
            let clock = LoopClock::new();
            let start = std::time::Instant::now();
            let program = XdpProgram::attach(netns::CLIENT_IF, Attach::Auto).expect("attach XDP");
            let mut area = UmemArea::new(256, 2048).expect("UMEM");
            let cfg = XdpConfig {
                frame_size: 2048,
                ring_size: 128,
                ..XdpConfig::default()
            };
            let device =
                XdpDevice::open(netns::CLIENT_IF, area.as_mut_slice(), cfg).expect("XDP socket");
            program.insert(cfg.queue, &device).expect("XSKMAP");
            let net = NetConfig {
                hardware: HardwareAddress::Ethernet(EthernetAddress(device.mac())),
                addr: Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX),
                gateway: None,
            };
            let sizes = SlotSizes::with_tls(32 * 1024, 16 * 1024, 16 * 1024);
            let mut arena = vec![0u8; sizes.arena_len()];
            let mut slots = [Slot::new(&mut arena, sizes).expect("slot")];
            let mut sockets = [SocketStorage::EMPTY; 1];
            let mut stack = Stack::new(device, net, &mut sockets, &mut slots, [9; 32], clock.now())
                .expect("stack");
            let remote =
                Remote::new(Scheme::Wss, HOST, netns::SERVER_ADDR, PORT, "/").expect("remote");
            let options = Options {
                tls: Some(client_tls),
                ..Options::default()
            };
            let id = stack
                .connect(remote, options, clock.now())
                .expect("connect");
            let (mut sent, mut done, mut closed, mut records) = (0usize, 0usize, false, false);
            while !closed {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "stalled at {done}"
                );
                stack.poll(clock.now());
                while let Some((_, ev)) = stack.next_event() {
                    match ev {
                        Event::Failed(e) => panic!("failed after {done} echoes: {e}"),
                        Event::Closed => closed = true,
                        _ => {}
                    }
                }
                if !stack.is_open(id) {
                    continue;
                }
                records |= stack.tls(id).is_some_and(|t| t.is_records_mode());
                while let Ok(Some((msg, _))) = stack.recv(id) {
                    if let Message::Binary(b) = msg {
                        assert!(b == &payload(0, done)[..], "echo {done}");
                        done += 1;
                    }
                }
                while sent < COUNT && sent < done + WINDOW {
                    match stack
                        .sender(id)
                        .expect("sender")
                        .send_binary(&payload(0, sent))
                    {
                        Ok(()) => sent += 1,
                        Err(ConnectionError::Backpressure) => break,
                        Err(e) => panic!("send: {e}"),
                    }
                }
                if done == COUNT && stack.is_open(id) {
                    stack.close(id, CloseCode::NORMAL, "bye").expect("close");
                }
            }
            (done, records)
        })
        .expect("client namespace");
    let updates = server.join().expect("server thread");
    assert_eq!(echoes, COUNT);
    assert_eq!(updates, COUNT / 50, "KeyUpdates the server sent");
    assert!(records_mode, "the codec's records mode ran the connection");
}
