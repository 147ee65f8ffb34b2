//! The bypass stack on DPDK (feature `dpdk`), on this machine without a NIC
//! or hugepages (`--no-huge -m 256 --no-pci`, virtual devices):
//!
//! - (a) a DPDK client on one end of a veth pair through `net_af_packet`, in
//!   its own network namespace, against servers on the kernel's TCP stack in
//!   the other namespace: tickwire's and tungstenite's WebSocket servers
//!   (10,000 messages each way, every byte checked by both ends, pings both
//!   ways, the close handshake) and a REST server (10,000 `POST /echo`, every
//!   body checked, then a quote, an order and a 404).
//! - (b) two DPDK processes joined by `net_memif` (shared memory): a tickwire
//!   WebSocket server and client, both on smoltcp over DPDK, no kernel on the
//!   data path; the same 10,000 messages each way.
//!
//! Not one heap allocation in any smoltcp-side loop from the first message to
//! the end of the close (counting global allocator, per thread).
//!
//! DPDK's EAL runs once per process, so each DPDK side runs in a child
//! process: this test binary again, with `TICKWIRE_DPDK_CHILD` saying which
//! side, through `ip netns exec` where it lives in a namespace. Namespaces,
//! memif sockets and EAL file prefixes carry the parent's process id and a
//! counter, so parallel tests (and the AF_XDP tests) never collide.
//!
//! Needs root (namespaces; af_packet's raw socket). Without it, or when EAL
//! cannot start, each test prints a loud SKIPPED line, or fails when
//! `TICKWIRE_REQUIRE_PEERS` is set (CI).
#![cfg(all(feature = "dpdk", feature = "af-xdp", target_os = "linux"))]

use std::io::{self, BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration as StdDuration;

use smoltcp::iface::SocketStorage;
use smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use tickwire_bypass::dpdk::{DpdkDevice, EalConfig, PortConfig};
use tickwire_bypass::eth::EthLink;
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::xdp::netns;
use tickwire_conformance::{PeerError, skip_or_fail};

// The counting allocator shared with the codec's no-allocation tests.
#[path = "../../codec/tests/common/mod.rs"]
mod common;
// The test's own generator, independent of the codec.
#[path = "support/gen.rs"]
mod generator;
// The scripts and the peers, shared with the AF_XDP tests.
#[path = "support/peers.rs"]
mod peers;

use peers::{COUNT, Clock, PING_EVERY, SEED, Script};

const WS_PORT: u16 = 9001;
const HTTP_PORT: u16 = 8080;
/// Which side a child process runs (unset: not a child).
const CHILD: &str = "TICKWIRE_DPDK_CHILD";
/// A child's exit code when EAL (or the port) cannot start here.
const UNAVAILABLE: i32 = 77;
/// The line a child prints when its port is up (memif server).
const READY: &str = "DPDK-READY";
/// The line a child prints with what it saw.
const REPORT: &str = "DPDK-REPORT";
/// smoltcp's addresses on the memif link (no kernel has them).
const MEMIF_SERVER: Ipv4Address = Ipv4Address::new(10, 79, 0, 1);
const MEMIF_CLIENT: Ipv4Address = Ipv4Address::new(10, 79, 0, 2);

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A name no other test process or test of this one uses.
fn unique(what: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("tw{}-{n}-{what}", std::process::id())
}

// ---------------------------------------------------------------- children

/// The entry point of the child processes; a no-op when run by itself.
#[test]
#[ignore = "the DPDK side of the other tests, run in a child process they start"]
fn dpdk_child() {
    let Ok(role) = std::env::var(CHILD) else {
        return;
    };
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("child needs {k}"));
    match role.as_str() {
        "veth-client" => veth_client(var("TW_DPDK_PREFIX"), var("TW_DPDK_REST") == "1"),
        "memif-server" => memif_side(var("TW_DPDK_PREFIX"), var("TW_DPDK_SOCKET"), true),
        "memif-client" => memif_side(var("TW_DPDK_PREFIX"), var("TW_DPDK_SOCKET"), false),
        "stack-client" => stack_client(var("TW_DPDK_PREFIX"), var("TW_DPDK_CA")),
        other => panic!("unknown child role {other}"),
    }
}

/// EAL with `vdev` on a floating lcore, and its one port; exits with
/// UNAVAILABLE (the parent skips or fails) when DPDK cannot start here.
fn open(prefix: String, vdev: String, port: &str) -> DpdkDevice {
    let mut eal = EalConfig::virtual_devices("0@(0-1)", 256).vdev(vdev);
    eal.file_prefix = Some(prefix);
    let cfg = PortConfig {
        mbufs: 2047,
        ..PortConfig::named(port)
    };
    match DpdkDevice::open(&eal, &cfg) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("DPDK unavailable: {e}");
            std::process::exit(UNAVAILABLE);
        }
    }
}

/// (a): the client side, inside the client namespace: af_packet on the veth
/// end, smoltcp at 10.77.0.2, the WebSocket script against port 9001, then
/// (if `rest`) the REST script against port 8080.
fn veth_client(prefix: String, rest: bool) {
    let clock = Clock::start();
    let script = Script::new(SEED);
    let device = open(
        prefix,
        format!("net_af_packet0,iface={}", netns::CLIENT_IF),
        "net_af_packet0",
    );
    let details = device.details().clone();
    const TCP: usize = 256 * 1024;
    let mut tcp_mem = vec![0u8; 4 * TCP];
    let (ws_tcp, rest_tcp) = tcp_mem.split_at_mut(2 * TCP);
    let (ws_rx, ws_tx) = ws_tcp.split_at_mut(TCP);
    let (rest_rx, rest_tx) = rest_tcp.split_at_mut(TCP);
    let mut slots = [SocketStorage::EMPTY; 2];
    let addr = Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX);
    let mut link = EthLink::new(device, &mut slots, addr, None, SEED, clock.now());
    let server = netns::SERVER_ADDR;
    let h = link
        .connect(
            TcpBuffers {
                rx: ws_rx,
                tx: ws_tx,
            },
            (server, WS_PORT),
            49152,
        )
        .expect("connect");
    let ws = with_stats(&mut link, |link| {
        peers::ws_client(
            link,
            h,
            &format!("{server}:{WS_PORT}"),
            &clock,
            &script,
            &mut peers::yield_core,
        )
    });
    check_ws_client(&ws);
    let mut rest_report = None;
    if rest {
        let h = link
            .connect(
                TcpBuffers {
                    rx: rest_rx,
                    tx: rest_tx,
                },
                (server, HTTP_PORT),
                49153,
            )
            .expect("connect REST");
        let r = with_stats(&mut link, |link| {
            peers::rest_client(
                link,
                h,
                &format!("{server}:{HTTP_PORT}"),
                &clock,
                &script,
                &mut peers::yield_core,
            )
        });
        assert_eq!(r.echoes, COUNT, "REST echoes checked");
        assert_eq!(r.statuses, [200, 201, 404]);
        assert_eq!(r.allocs_in_loop, 0, "heap allocations in the REST loop");
        rest_report = Some(r);
    }
    println!(
        "{REPORT} port {details:?}; ws {ws:?}; rest {rest_report:?}; device {:?}; port counters {:?}",
        link.device.stats(),
        link.device.port_stats().ok()
    );
}

/// Run `f`; if it fails, say what the device and the port counted first.
fn with_stats<R>(
    link: &mut EthLink<'_, DpdkDevice>,
    f: impl FnOnce(&mut EthLink<'_, DpdkDevice>) -> R,
) -> R {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut *link)));
    r.unwrap_or_else(|p| {
        eprintln!(
            "device {:?}; port counters (in, out, missed, in errors, out errors, no mbuf) {:?}; free mbufs {}",
            link.device.stats(),
            link.device.port_stats().ok(),
            link.device.free_mbufs()
        );
        std::panic::resume_unwind(p)
    })
}

/// What every smoltcp-side WebSocket client must have seen.
fn check_ws_client(r: &peers::WsReport) {
    assert_eq!(r.echoes, COUNT, "echoes the client checked");
    assert_eq!(r.pongs, COUNT / PING_EVERY, "pongs for the client's pings");
    assert_eq!(r.server_pings, COUNT / 1000, "server pings seen");
    assert_eq!(r.close, Some(1000), "close code echoed");
    assert_eq!(r.allocs_in_loop, 0, "heap allocations in the client loop");
}

/// (b): one end of the memif link: the tickwire WebSocket server (listening
/// at 10.79.0.1) or the client (10.79.0.2), smoltcp over DPDK both.
fn memif_side(prefix: String, socket: String, server: bool) {
    let clock = Clock::start();
    let script = Script::new(SEED);
    let (role, mac, me) = if server {
        ("server", "02:74:77:00:00:01", MEMIF_SERVER)
    } else {
        ("client", "02:74:77:00:00:02", MEMIF_CLIENT)
    };
    let device = open(
        prefix,
        format!("net_memif0,role={role},socket={socket},mac={mac}"),
        "net_memif0",
    );
    let details = device.details().clone();
    println!("{READY}");
    const TCP: usize = 256 * 1024;
    let mut tcp_mem = vec![0u8; 2 * TCP];
    let (rx, tx) = tcp_mem.split_at_mut(TCP);
    let bufs = TcpBuffers { rx, tx };
    let mut slots = [SocketStorage::EMPTY; 1];
    let mut link = EthLink::new(
        device,
        &mut slots,
        Ipv4Cidr::new(me, 24),
        None,
        SEED ^ u64::from(server),
        clock.now(),
    );
    if server {
        let h = link.listen(bufs, WS_PORT).expect("listen");
        let r = with_stats(&mut link, |link| {
            peers::ws_server(link, h, &clock, &script, &mut peers::yield_core)
        });
        assert_eq!(r.messages, COUNT, "messages the server checked");
        assert_eq!(r.pongs, COUNT / 1000, "pongs for the server's pings");
        assert_eq!(r.close, Some(1000), "the client's close code");
        assert_eq!(r.allocs_in_loop, 0, "heap allocations in the server loop");
        println!(
            "{REPORT} port {details:?}; server {r:?}; device {:?}",
            link.device.stats()
        );
        // Keep answering (the client's last ACK, a retransmitted FIN) until the
        // parent says the client is done, by closing our stdin.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        std::thread::spawn(move || {
            let _ = io::copy(&mut io::stdin(), &mut io::sink());
            flag.store(true, Ordering::Release);
        });
        while !done.load(Ordering::Acquire) {
            if !link.poll(clock.now()).expect("poll") {
                std::thread::yield_now();
            }
        }
    } else {
        // The control channel brings the link up once both ends are there.
        while !link.device.link_up() {
            clock.check("memif link up");
            std::thread::sleep(StdDuration::from_millis(1));
        }
        let h = link
            .connect(bufs, (MEMIF_SERVER, WS_PORT), 49152)
            .expect("connect");
        let r = with_stats(&mut link, |link| {
            peers::ws_client(
                link,
                h,
                &format!("{MEMIF_SERVER}:{WS_PORT}"),
                &clock,
                &script,
                &mut peers::yield_core,
            )
        });
        check_ws_client(&r);
        println!(
            "{REPORT} port {details:?}; client {r:?}; device {:?}",
            link.device.stats()
        );
    }
}

/// Messages per connection of the Stack test.
const STACK_MESSAGES: usize = 2_000;
/// The name the Stack test's certificate is for (SNI and verification).
const STACK_HOST: &str = "bypass.test";
const WSS_PORT: u16 = 9443;

/// (c): the crate's `Stack` (many connections, plain and TLS, one loop) on
/// the DPDK device: a `wss://` and a `ws://` connection to tickwire's servers
/// across the veth pair, STACK_MESSAGES each, every echo checked; the CA is
/// the PEM file `ca`.
fn stack_client(prefix: String, ca: String) {
    use smoltcp::wire::{EthernetAddress, HardwareAddress};
    use tickwire_bypass::clock::LoopClock;
    use tickwire_bypass::{Event, NetConfig, Options, Remote, Scheme, Slot, SlotSizes, Stack};
    use tickwire_codec::ws::Message;

    let pem = std::fs::read(&ca).expect("CA file");
    let tls = tickwire::tls::TlsConfig::builder()
        .system_roots(false)
        .add_ca_pem(&pem)
        .expect("CA")
        .build()
        .expect("client TLS")
        .client_config()
        .clone();
    let device = open(
        prefix,
        format!("net_af_packet0,iface={}", netns::CLIENT_IF),
        "net_af_packet0",
    );
    let clock = LoopClock::new();
    let start = std::time::Instant::now();
    let sizes = SlotSizes::with_tls(64 * 1024, 32 * 1024, 32 * 1024);
    let mut arena = vec![0u8; 2 * sizes.arena_len()];
    let mut slots: Vec<Slot<'_>> = arena
        .chunks_mut(sizes.arena_len())
        .map(|a| Slot::new(a, sizes).expect("slot"))
        .collect();
    let mut sockets = [SocketStorage::EMPTY; 2];
    let net = NetConfig {
        hardware: HardwareAddress::Ethernet(EthernetAddress(device.mac())),
        addr: Ipv4Cidr::new(netns::XDP_ADDR, netns::PREFIX),
        gateway: None,
    };
    let mut stack = Stack::new(
        device,
        net,
        &mut sockets,
        &mut slots,
        [0x35; 32],
        clock.now(),
    )
    .expect("stack");
    let options = Options {
        tls: Some(tls),
        ..Options::default()
    };
    let remote = |scheme, port| {
        Remote::new(scheme, STACK_HOST, netns::SERVER_ADDR, port, "/").expect("remote")
    };
    let ids = [
        stack
            .connect(remote(Scheme::Wss, WSS_PORT), options.clone(), clock.now())
            .expect("connect wss"),
        stack
            .connect(remote(Scheme::Ws, WS_PORT), options, clock.now())
            .expect("connect ws"),
    ];
    let payload = |k: usize, i: usize| -> Vec<u8> {
        (0..(i * 37 + k * 11) % 3000)
            .map(|j| (i ^ j ^ k) as u8)
            .collect()
    };
    let payloads: Vec<Vec<Vec<u8>>> = (0..2)
        .map(|k| (0..STACK_MESSAGES).map(|i| payload(k, i)).collect())
        .collect();
    let (mut open_, mut sent, mut got) = ([false; 2], [0usize; 2], [0usize; 2]);
    while got.iter().any(|&g| g < STACK_MESSAGES) {
        assert!(start.elapsed().as_secs() < 120, "stalled: {got:?} echoes");
        let moved = stack.poll(clock.now());
        while let Some((id, event)) = stack.next_event() {
            let k = ids.iter().position(|&i| i == id).expect("our connection");
            match event {
                Event::Connected => open_[k] = true,
                Event::Readable => {
                    while let Some((msg, _)) = stack.recv(id).expect("recv") {
                        match msg {
                            Message::Binary(b) => {
                                assert!(b == &payloads[k][got[k]][..], "echo {k}/{}", got[k]);
                                got[k] += 1;
                            }
                            other => panic!("connection {k}: {other:?}"),
                        }
                    }
                }
                Event::Closed | Event::Failed(_) => panic!("connection {k}: {event:?}"),
            }
        }
        for k in 0..2 {
            // Four messages in flight per connection.
            while open_[k] && sent[k] < STACK_MESSAGES && sent[k] < got[k] + 4 {
                match stack
                    .sender(ids[k])
                    .expect("sender")
                    .send_binary(&payloads[k][sent[k]])
                {
                    Ok(()) => sent[k] += 1,
                    Err(_) => break,
                }
            }
        }
        if !moved {
            std::thread::yield_now();
        }
    }
    println!(
        "{REPORT} stack over DPDK af_packet: wss {} and ws {} echoes checked; device {:?}",
        got[0],
        got[1],
        stack.device().stats()
    );
}

// ---------------------------------------------------------------- parents

/// A child process running `role`, in network namespace `ns` if given.
fn spawn_child(role: &str, ns: Option<&str>, env: &[(&str, String)]) -> io::Result<Child> {
    let exe = std::env::current_exe()?;
    let mut cmd = match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args([
        "--ignored",
        "--exact",
        "dpdk_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, role)
    .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd.spawn()
}

/// Wait for a child; its output, or why it failed (absent: DPDK cannot run here).
fn finish(test: &str, role: &str, child: Child) -> Result<String, PeerError> {
    let out = child
        .wait_with_output()
        .map_err(|e| PeerError::Failed(format!("{role}: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0) => {
            print_reports(test, role, &stdout);
            Ok(stdout)
        }
        Some(UNAVAILABLE) => Err(PeerError::Absent(format!(
            "{role}: DPDK cannot start here: {}",
            stderr.trim()
        ))),
        _ => panic!(
            "{test}: {role} failed ({}):\n{stdout}\n{stderr}",
            out.status
        ),
    }
}

/// Show the report lines of a child's output.
fn print_reports(test: &str, role: &str, out: &str) {
    for line in out.lines().filter_map(|l| l.find(REPORT).map(|i| &l[i..])) {
        println!("{test}: {role}: {line}");
    }
}

fn run_veth(test: &str, server: fn(TcpListener, &Script) -> (usize, usize), rest: bool) {
    let Some(pair) = peers::veth_env(test) else {
        return;
    };
    let ws_listener = peers::listen(&pair, WS_PORT);
    let http = rest.then(|| peers::listen(&pair, HTTP_PORT));
    let ws = std::thread::spawn(move || server(ws_listener, &Script::new(SEED)));
    let http = http.map(|l| std::thread::spawn(move || peers::http_server(l)));
    let child = spawn_child(
        "veth-client",
        Some(pair.client_ns()),
        &[
            ("TW_DPDK_PREFIX", unique("a")),
            ("TW_DPDK_REST", if rest { "1" } else { "0" }.into()),
        ],
    )
    .expect("start the DPDK client");
    let Some(_) = skip_or_fail(test, finish(test, "veth client", child)) else {
        return;
    };
    let (got, pongs) = ws.join().expect("server thread");
    assert_eq!(got, COUNT, "messages the server checked");
    assert_eq!(pongs, COUNT / 1000, "pongs for the server's pings");
    if let Some(h) = http {
        assert_eq!(h.join().expect("http thread"), COUNT + 3, "requests served");
    }
    drop(pair);
}

#[test]
fn dpdk_af_packet_client_against_tickwire_server_and_rest() {
    run_veth(
        "dpdk_af_packet_client_against_tickwire_server_and_rest",
        peers::tickwire_server,
        true,
    );
}

#[test]
fn dpdk_af_packet_client_against_tungstenite_server() {
    run_veth(
        "dpdk_af_packet_client_against_tungstenite_server",
        peers::tungstenite_server,
        false,
    );
}

/// tickwire's blocking server with TLS `tls` (or plain): every connection on
/// its own thread, every data message echoed.
fn tickwire_echo(listener: TcpListener, tls: Option<tickwire::tls::TlsServerConfig>) {
    let mut b = tickwire::ws::Server::builder()
        .max_message_size(1 << 20)
        .read_timeout(Some(StdDuration::from_secs(60)));
    if let Some(t) = tls {
        b = b.tls(t);
    }
    let mut server = b.listener(listener).expect("tickwire server");
    std::thread::spawn(move || {
        while let Ok(mut c) = server.accept() {
            std::thread::spawn(move || {
                use tickwire::ws::Message as M;
                while let Ok(Some(_)) = c.recv_with(|msg, tx| match msg {
                    M::Text(t) => tx.send_text(t).map(|()| true),
                    M::Binary(b) => tx.send_binary(b).map(|()| true),
                    _ => Ok(false),
                }) {}
            });
        }
    });
}

/// (c): the Stack of the crate (issue 34) over the DPDK device, TLS and plain.
#[test]
fn dpdk_stack_wss_and_ws_over_af_packet() {
    let test = "dpdk_stack_wss_and_ws_over_af_packet";
    let Some(pair) = peers::veth_env(test) else {
        return;
    };
    let c = rcgen::generate_simple_self_signed(vec![STACK_HOST.to_owned()]).expect("certificate");
    let (cert_pem, key_pem) = (c.cert.pem(), c.signing_key.serialize_pem());
    let ca = std::env::temp_dir().join(format!("{}.pem", unique("ca")));
    std::fs::write(&ca, &cert_pem).expect("CA file");
    let server_tls =
        tickwire::tls::TlsServerConfig::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())
            .expect("server TLS");
    tickwire_echo(peers::listen(&pair, WSS_PORT), Some(server_tls));
    tickwire_echo(peers::listen(&pair, WS_PORT), None);
    let child = spawn_child(
        "stack-client",
        Some(pair.client_ns()),
        &[
            ("TW_DPDK_PREFIX", unique("st")),
            ("TW_DPDK_CA", ca.display().to_string()),
        ],
    )
    .expect("start the DPDK client");
    let done = finish(test, "stack client", child);
    let _ = std::fs::remove_file(&ca);
    skip_or_fail(test, done);
    drop(pair);
}

#[test]
fn dpdk_to_dpdk_over_memif() {
    let test = "dpdk_to_dpdk_over_memif";
    let socket = format!("/tmp/{}.sock", unique("memif"));
    let _ = std::fs::remove_file(&socket);
    let env = |side: &str| {
        vec![
            ("TW_DPDK_PREFIX", unique(side)),
            ("TW_DPDK_SOCKET", socket.clone()),
        ]
    };
    let mut server = spawn_child("memif-server", None, &env("s")).expect("start the DPDK server");
    // The client connects to the server's socket: wait until the server's port is up.
    let out = server.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(out).lines();
    let mut early = String::new();
    let ready = loop {
        match lines.next() {
            // The harness's "test dpdk_child ... " may precede it on its line.
            Some(Ok(l)) if l.ends_with(READY) => break true,
            Some(Ok(l)) => {
                early.push_str(&l);
                early.push('\n');
            }
            _ => break false,
        }
    };
    if !ready {
        let mut err = String::new();
        let _ = server.stderr.take().map(|mut e| e.read_to_string(&mut err));
        let status = server.wait().expect("server exit");
        let absent = status.code() == Some(UNAVAILABLE);
        let e = format!("memif server: {status}: {early}{err}");
        let e = if absent {
            PeerError::Absent(e)
        } else {
            PeerError::Failed(e)
        };
        skip_or_fail(test, Err::<(), _>(e));
        return;
    }
    // The rest of the server's stdout, read while the client runs.
    let rest =
        std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    let client = spawn_child("memif-client", None, &env("c")).expect("start the DPDK client");
    let client = finish(test, "memif client", client);
    // The client is done: let the server go.
    drop(server.stdin.take());
    let status = server.wait().expect("server exit");
    let server_out = rest.join().expect("server output");
    let mut err = String::new();
    let _ = server.stderr.take().map(|mut e| e.read_to_string(&mut err));
    let _ = std::fs::remove_file(&socket);
    assert!(
        status.success(),
        "{test}: memif server failed ({status}):\n{server_out}\n{err}"
    );
    print_reports(test, "memif server", &server_out);
    skip_or_fail(test, client);
}
