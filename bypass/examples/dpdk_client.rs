//! A tickwire WebSocket client on smoltcp over a DPDK port: it connects to
//! an echo server, sends `--count` 128 B binary messages one at a time,
//! checks each echo, prints round-trip times (p50/p99/max) and closes.
//!
//! On a NIC bound to vfio-pci, hugepages mounted, the loop on CPU 2:
//!
//! ```sh
//! sudo target/release/examples/dpdk_client --lcores 2 --pci 0000:3b:00.0 --hugepages \
//!      192.0.2.50/24 192.0.2.10:9001 --gateway 192.0.2.1 --count 100000
//! ```
//!
//! Without a NIC or hugepages: DPDK's af_packet driver on any Linux interface
//! (here a veth end whose peer has the server):
//!
//! ```sh
//! sudo target/release/examples/dpdk_client --vdev net_af_packet0,iface=veth1 \
//!      10.0.0.2/24 10.0.0.1:9001
//! ```
//!
//! And with no network at all: `--ring` makes two DPDK ports joined by
//! rte_rings and runs tickwire's WebSocket echo server on smoltcp over the
//! second one, in the same loop (the addresses are then ignored):
//!
//! ```sh
//! sudo target/release/examples/dpdk_client --ring
//! ```

use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::ExitCode;
use std::time::Instant as StdInstant;

use smoltcp::iface::SocketStorage;
use smoltcp::time::Instant;
use smoltcp::wire::Ipv4Cidr;
use tickwire_bypass::dpdk::{Dpdk, DpdkDevice, EalConfig, PortConfig, PortId};
use tickwire_bypass::eth::EthLink;
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::ws::codec_instant;
use tickwire_bypass::{Endpoint, State};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{CloseCode, Message, Settings};

const USAGE: &str = "usage: dpdk_client [--lcores LIST] [--vdev SPEC | --pci ADDR | --ring] \
                     [--hugepages] [--port NAME] LOCAL_IP/PREFIX SERVER_IP:PORT \
                     [--gateway IP] [--count N]";

struct Args {
    eal: EalConfig,
    port: PortId,
    ring: bool,
    local: Ipv4Cidr,
    server: SocketAddrV4,
    gateway: Option<Ipv4Addr>,
    count: usize,
}

fn parse() -> Result<Args, String> {
    let mut eal = EalConfig::virtual_devices("0", 512);
    let (mut port, mut ring, mut count, mut gateway) = (PortId::Only, false, 10_000, None);
    let mut positional = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--lcores" => eal.lcores = value()?,
            "--vdev" => eal.vdevs.push(value()?),
            "--pci" => {
                let pci = value()?;
                port = PortId::Name(pci.clone());
                eal.pci_allow.push(pci);
                eal.no_pci = false;
            }
            "--hugepages" => {
                eal.no_huge = false;
                eal.memory_mb = None;
            }
            "--port" => port = PortId::Name(value()?),
            "--ring" => ring = true,
            "--gateway" => gateway = Some(value()?.parse().map_err(|e| format!("--gateway: {e}"))?),
            "--count" => count = value()?.parse().map_err(|e| format!("--count: {e}"))?,
            _ => positional.push(a),
        }
    }
    let (local, server) = match (ring, positional.as_slice()) {
        (true, _) => ("10.80.0.2/24".to_string(), "10.80.0.1:9001".to_string()),
        (false, [l, s]) => (l.clone(), s.clone()),
        _ => return Err("LOCAL_IP/PREFIX and SERVER_IP:PORT needed".into()),
    };
    let (ip, prefix) = local.split_once('/').ok_or("LOCAL_IP/PREFIX: no prefix")?;
    let ip: Ipv4Addr = ip.parse().map_err(|e| format!("LOCAL_IP: {e}"))?;
    let prefix: u8 = prefix.parse().map_err(|e| format!("PREFIX: {e}"))?;
    Ok(Args {
        eal,
        port,
        ring,
        local: Ipv4Cidr::new(ip, prefix),
        server: server.parse().map_err(|e| format!("SERVER_IP:PORT: {e}"))?,
        gateway,
        count,
    })
}

/// The echo server of `--ring`: tickwire's server endpoint on smoltcp over
/// the second port, turned once per turn of the client's loop.
struct RingServer<'s> {
    link: EthLink<'s, DpdkDevice>,
    h: smoltcp::iface::SocketHandle,
    ep: Endpoint<&'s mut [u8], &'s mut [u8], tickwire_codec::rand::NoMask>,
}

impl RingServer<'_> {
    fn turn(&mut self, now: Instant) -> Result<(), String> {
        self.link.poll(now).map_err(|e| e.to_string())?;
        while self.ep.tx().room() > 1024 {
            match self.ep.recv(self.link.socket(self.h)) {
                Ok(Some((Message::Binary(b), tx))) => {
                    tx.send_binary(b).map_err(|e| format!("echo: {e}"))?
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => return Err(format!("server: {e}")),
            }
        }
        self.ep
            .flush(self.link.socket(self.h))
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

fn run(args: Args) -> Result<(), String> {
    let t0 = StdInstant::now();
    let now = || Instant::from_micros(t0.elapsed().as_micros() as i64);
    // 1. EAL, the mempool and the port: the program owns them from here on.
    let dpdk = Dpdk::init(&args.eal).map_err(|e| e.to_string())?;
    let cfg = PortConfig {
        port: args.port.clone(),
        ..PortConfig::default()
    };
    let (device, peer) = if args.ring {
        let (a, b) = dpdk.ring_pair("tw", &cfg).map_err(|e| e.to_string())?;
        (a, Some(b))
    } else {
        (dpdk.open(&cfg).map_err(|e| e.to_string())?, None)
    };
    eprintln!("DPDK port: {:?}", device.details());

    // 2. All the loop's memory, up front.
    let mut mem = vec![0u8; 8 * 64 * 1024];
    let mut parts = mem.chunks_mut(64 * 1024);
    let mut next = || parts.next().expect("eight parts");
    let mut slots = [SocketStorage::EMPTY; 1];
    let mut server_slots = [SocketStorage::EMPTY; 1];

    // 3. smoltcp on the port; the server of --ring on the other one.
    let mut link = EthLink::new(device, &mut slots, args.local, args.gateway, 0x7477, now());
    let mut server = match peer {
        Some(dev) => {
            let addr = Ipv4Cidr::new(*args.server.ip(), args.local.prefix_len());
            let mut l = EthLink::new(dev, &mut server_slots, addr, None, 0x7478, now());
            let bufs = TcpBuffers {
                rx: next(),
                tx: next(),
            };
            let h = l
                .listen(bufs, args.server.port())
                .map_err(|e| e.to_string())?;
            let ep = Endpoint::server(next(), next(), &Settings::default(), codec_instant(now()));
            Some(RingServer { link: l, h, ep })
        }
        None => None,
    };
    let bufs = TcpBuffers {
        rx: next(),
        tx: next(),
    };
    let h = link
        .connect(bufs, (*args.server.ip(), args.server.port()), 49152)
        .map_err(|e| e.to_string())?;
    let mut rng = MaskRng::from_entropy().map_err(|e| format!("random: {e:?}"))?;
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let host = args.server.to_string();
    let hs = ClientHandshake::new(&host, "/", nonce);
    let mut ep = Endpoint::client(
        &hs,
        next(),
        next(),
        rng,
        &Settings::default(),
        codec_instant(now()),
    )
    .map_err(|e| e.to_string())?;

    // 4. The loop: flush, poll (one rx burst in, one tx burst out), read.
    let mut turn = |ep: &mut Endpoint<_, _, _>, link: &mut EthLink<'_, DpdkDevice>| {
        ep.flush(link.socket(h)).map_err(|e| e.to_string())?;
        link.poll(now()).map_err(|e| e.to_string())?;
        if let Some(s) = server.as_mut() {
            s.turn(now())?;
        }
        if t0.elapsed().as_secs() > 30 + args.count as u64 / 1000 {
            return Err("no progress: is the server there?".to_string());
        }
        Ok::<_, String>(())
    };
    while ep.state() == State::Handshake {
        turn(&mut ep, &mut link)?;
        ep.recv(link.socket(h)).map_err(|e| e.to_string())?;
    }
    let payload: Vec<u8> = (0..128u8).collect();
    let mut rtts = Vec::with_capacity(args.count);
    for i in 0..args.count {
        let start = StdInstant::now();
        ep.tx().send_binary(&payload).map_err(|e| e.to_string())?;
        loop {
            turn(&mut ep, &mut link)?;
            match ep.recv(link.socket(h)).map_err(|e| e.to_string())? {
                Some((Message::Binary(b), _)) if b == payload => break,
                Some((Message::Binary(_), _)) => return Err(format!("echo {i} differs")),
                _ => {}
            }
        }
        rtts.push(start.elapsed().as_nanos() as u64);
    }
    ep.tx()
        .close(Some(CloseCode::NORMAL), "done")
        .map_err(|e| e.to_string())?;
    while !ep.is_done() {
        turn(&mut ep, &mut link)?;
        while ep
            .recv(link.socket(h))
            .map_err(|e| e.to_string())?
            .is_some()
        {}
    }
    rtts.sort_unstable();
    let q = |p: f64| rtts[((rtts.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    println!(
        "{} round trips of 128 B: p50 {:.1} us, p99 {:.1} us, max {:.1} us; device {:?}",
        rtts.len(),
        q(0.5),
        q(0.99),
        q(1.0),
        link.device.stats()
    );
    // 5. Dropping the links stops and closes the ports, frees the pools and
    //    cleans EAL up.
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dpdk_client: {e}");
            ExitCode::FAILURE
        }
    }
}
