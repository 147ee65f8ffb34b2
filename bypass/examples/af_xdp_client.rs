//! A tickwire WebSocket client on smoltcp over AF_XDP, on a real NIC (or any
//! Linux interface): it connects to an echo server, sends `--count` 128 B
//! binary messages one at a time, checks each echo, prints round-trip times,
//! and closes. See the README, "Kernel bypass with AF_XDP", before pointing it
//! at an interface the machine needs: every frame of the bound queue goes to
//! this program while it runs.
//!
//! ```sh
//! sudo target/release/examples/af_xdp_client eth1 192.0.2.50/24 192.0.2.10:9001 \
//!      --queue 0 --gateway 192.0.2.1 --mode auto --attach auto --count 10000
//! ```

use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::ExitCode;
use std::time::Instant as StdInstant;

use smoltcp::iface::SocketStorage;
use smoltcp::time::Instant;
use smoltcp::wire::Ipv4Cidr;
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::ws::codec_instant;
use tickwire_bypass::xdp::{Attach, BindMode, UmemArea, XdpConfig, XdpDevice, XdpLink, XdpProgram};
use tickwire_bypass::{Endpoint, State};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{CloseCode, Message, Settings};

const USAGE: &str = "usage: af_xdp_client IFACE LOCAL_IP/PREFIX SERVER_IP:PORT \
                     [--queue N] [--gateway IP] [--mode auto|copy|zerocopy] \
                     [--attach auto|native|generic] [--count N]";

struct Args {
    iface: String,
    local: Ipv4Cidr,
    server: SocketAddrV4,
    queue: u32,
    gateway: Option<Ipv4Addr>,
    mode: BindMode,
    attach: Attach,
    count: usize,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut next = |what: &str| it.next().ok_or_else(|| format!("missing {what}"));
    let iface = next("IFACE")?;
    let local = next("LOCAL_IP/PREFIX")?;
    let (ip, prefix) = local.split_once('/').ok_or("LOCAL_IP/PREFIX: no prefix")?;
    let ip: Ipv4Addr = ip.parse().map_err(|e| format!("LOCAL_IP: {e}"))?;
    let prefix: u8 = prefix.parse().map_err(|e| format!("PREFIX: {e}"))?;
    let server = next("SERVER_IP:PORT")?
        .parse()
        .map_err(|e| format!("SERVER_IP:PORT: {e}"))?;
    let mut a = Args {
        iface,
        local: Ipv4Cidr::new(ip, prefix),
        server,
        queue: 0,
        gateway: None,
        mode: BindMode::Auto,
        attach: Attach::Auto,
        count: 10_000,
    };
    while let Ok(flag) = next("flag") {
        let value = next(&flag)?;
        match (flag.as_str(), value.as_str()) {
            ("--queue", v) => a.queue = v.parse().map_err(|e| format!("--queue: {e}"))?,
            ("--gateway", v) => a.gateway = Some(v.parse().map_err(|e| format!("--gateway: {e}"))?),
            ("--count", v) => a.count = v.parse().map_err(|e| format!("--count: {e}"))?,
            ("--mode", "auto") => a.mode = BindMode::Auto,
            ("--mode", "copy") => a.mode = BindMode::Copy,
            ("--mode", "zerocopy") => a.mode = BindMode::ZeroCopy,
            ("--attach", "auto") => a.attach = Attach::Auto,
            ("--attach", "native") => a.attach = Attach::Native,
            ("--attach", "generic") => a.attach = Attach::Generic,
            (f, v) => return Err(format!("unknown option {f} {v}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("af_xdp_client: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = MaskRng::from_entropy()?;
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let seed = u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());

    // The redirect program first, then the socket, then the socket into the map.
    let program = XdpProgram::attach(&a.iface, a.attach)?;
    let cfg = XdpConfig {
        queue: a.queue,
        mode: a.mode,
        ..XdpConfig::default()
    };
    let mut umem = UmemArea::new(2 * cfg.ring_size as usize, cfg.frame_size)?;
    let device = XdpDevice::open(&a.iface, umem.as_mut_slice(), cfg)?;
    program.insert(a.queue, &device)?;
    println!(
        "{}: queue {}, XDP program {}, socket in {} mode, MAC {:02x?}, frame MTU {}",
        a.iface,
        a.queue,
        if program.is_native() {
            "native"
        } else {
            "generic"
        },
        if device.is_zero_copy() {
            "zero-copy"
        } else {
            "copy"
        },
        device.mac(),
        device.mtu()
    );

    // Memory for smoltcp and the codec, all of it before the loop.
    let mut mem = vec![0u8; 4 * 64 * 1024];
    let (tcp, ws) = mem.split_at_mut(2 * 64 * 1024);
    let (rx, tx) = tcp.split_at_mut(64 * 1024);
    let (read, write) = ws.split_at_mut(64 * 1024);
    let mut slots = [SocketStorage::EMPTY; 1];
    let t0 = StdInstant::now();
    let now = || Instant::from_micros(t0.elapsed().as_micros() as i64);
    let mut link = XdpLink::new(device, &mut slots, a.local, a.gateway, seed, now());
    let h = link.connect(
        TcpBuffers { rx, tx },
        (*a.server.ip(), a.server.port()),
        49152 + (seed % 16384) as u16,
    )?;
    // Delayed ACKs: an echo's ACK rides on the next message rather than costing
    // a frame (and, in copy mode, a sendto) of its own inside the round trip.
    link.socket(h)
        .set_ack_delay(Some(smoltcp::time::Duration::from_millis(10)));
    let host = a.server.to_string();
    let hs = ClientHandshake::new(&host, "/", nonce);
    let settings = Settings::default();
    let mut ep = Endpoint::client(&hs, read, write, rng, &settings, codec_instant(now()))?;

    let deadline = |what: &str| -> Result<(), String> {
        if t0.elapsed().as_secs() > 30 {
            Err(format!("timed out: {what}"))
        } else {
            Ok(())
        }
    };
    while ep.state() == State::Handshake {
        ep.flush(link.socket(h))?;
        link.poll(now())?;
        ep.recv(link.socket(h))?;
        deadline("opening handshake")?;
    }

    let mut payload = [0u8; 128];
    let mut rtts = Vec::with_capacity(a.count);
    for i in 0..a.count {
        payload[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let start = StdInstant::now();
        ep.tx().send_binary(&payload)?;
        ep.flush(link.socket(h))?;
        loop {
            link.poll(now())?;
            match ep.recv(link.socket(h))? {
                Some((Message::Binary(b), _)) if b == payload => break,
                Some((Message::Binary(_), _)) => return Err("echo differs".into()),
                Some(_) => {}
                None => deadline("echo")?,
            }
        }
        rtts.push(start.elapsed());
    }
    ep.tx().close(Some(CloseCode::NORMAL), "done")?;
    while !ep.is_done() {
        ep.flush(link.socket(h))?;
        link.poll(now())?;
        while ep.recv(link.socket(h))?.is_some() {}
        deadline("close handshake")?;
    }
    link.poll(now())?;
    rtts.sort();
    if !rtts.is_empty() {
        let q = |p: usize| rtts[(rtts.len() - 1) * p / 100];
        println!(
            "{} round trips of 128 B: min {:?}, p50 {:?}, p99 {:?}; {:?}",
            rtts.len(),
            rtts[0],
            q(50),
            q(99),
            link.device.stats()
        );
    }
    Ok(())
}
