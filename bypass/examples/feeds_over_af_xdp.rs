//! A gateway's loop in one program: market-data WebSockets and order-entry
//! REST connections (plain or TLS) on smoltcp over AF_XDP, one `Stack`, one
//! thread, the TSC for a clock. Each `wss://` feed prints the messages it
//! gets; each `https://` connection GETs its path once a second. A connection
//! that drops is reconnected after a backoff that doubles up to 5 s.
//!
//! ```sh
//! cargo build --release -p tickwire-bypass --example feeds_over_af_xdp
//! sudo target/release/examples/feeds_over_af_xdp eth1 192.0.2.50/24 192.0.2.1 \
//!      wss://stream.example.com/ws/btcusdt@trade https://api.example.com/api/v3/time
//! ```
//!
//! Names are resolved once, before the loop; the Host header, SNI and the
//! certificate check use the name. See the README ("Kernel bypass with
//! AF_XDP") before pointing it at an interface the machine needs: every frame
//! of queue 0 goes to this program while it runs.

use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::Duration;

use smoltcp::iface::SocketStorage;
use smoltcp::wire::{EthernetAddress, HardwareAddress, Ipv4Cidr};
use tickwire_bypass::clock::LoopClock;
use tickwire_bypass::resolve::resolve;
use tickwire_bypass::xdp::{Attach, UmemArea, XdpConfig, XdpDevice, XdpProgram};
use tickwire_bypass::{Event, NetConfig, Options, Remote, Scheme, Slot, SlotSizes, Stack};
use tickwire_codec::time::Instant;
use tickwire_codec::ws::Message;

const USAGE: &str = "usage: feeds_over_af_xdp IFACE LOCAL_IP/PREFIX GATEWAY URL...";

/// One URL split into what a `Remote` takes (no query-string or userinfo magic).
fn split(url: &str) -> Result<(Scheme, String, u16, String), String> {
    let (scheme, rest) = url.split_once("://").ok_or(format!("{url}: no scheme"))?;
    let scheme = match scheme {
        "ws" => Scheme::Ws,
        "wss" => Scheme::Wss,
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        s => return Err(format!("{url}: scheme {s} (ws, wss, http, https)")),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().map_err(|e| format!("{url}: port: {e}"))?),
        None => (authority, if scheme.is_tls() { 443 } else { 80 }),
    };
    Ok((scheme, host.to_owned(), port, path.to_owned()))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        return Err("missing arguments".into());
    }
    let (ip, prefix) = args[1].split_once('/').ok_or("LOCAL_IP/PREFIX")?;
    let local = Ipv4Cidr::new(
        ip.parse::<Ipv4Addr>().map_err(|e| e.to_string())?,
        prefix.parse().map_err(|e| format!("prefix: {e}"))?,
    );
    let gateway: Ipv4Addr = args[2].parse().map_err(|e| format!("GATEWAY: {e}"))?;

    // Before the loop: names, TLS settings, memory, the clock.
    let mut remotes = Vec::new();
    for url in &args[3..] {
        let (scheme, host, port, path) = split(url)?;
        let addr = resolve(&host, port).map_err(|e| e.to_string())?;
        // A WebSocket's path is its request target; REST paths go on each request.
        let base = if scheme.is_ws() { path.as_str() } else { "" };
        let remote = Remote::new(scheme, &host, addr, port, base).map_err(|e| e.to_string())?;
        remotes.push((remote, path));
    }
    // The compiled-in roots (webpki-roots); `add_ca_pem` for a venue's own CA.
    let tls = tickwire::tls::TlsConfig::builder()
        .build()
        .map_err(|e| e.to_string())?
        .client_config()
        .clone();
    let options = Options {
        tls: Some(tls),
        request_timeout: Duration::from_secs(5),
        ..Options::default()
    };
    let sizes = SlotSizes::with_tls(256 * 1024, 1 << 20, 64 * 1024);
    let mut arena = vec![0u8; remotes.len() * sizes.arena_len()];
    let mut slots: Vec<Slot<'_>> = arena
        .chunks_mut(sizes.arena_len())
        .map(|a| Slot::new(a, sizes))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut sockets: Vec<SocketStorage<'_>> =
        (0..slots.len()).map(|_| SocketStorage::EMPTY).collect();
    let clock = LoopClock::new();
    println!(
        "clock: {}",
        if clock.is_tsc() {
            "TSC"
        } else {
            "monotonic (no invariant TSC)"
        }
    );

    let program = XdpProgram::attach(&args[0], Attach::Auto).map_err(|e| e.to_string())?;
    let mut umem = UmemArea::new(4096, 2048).map_err(|e| e.to_string())?;
    let cfg = XdpConfig {
        frame_size: 2048,
        ..XdpConfig::default()
    };
    let device = XdpDevice::open(&args[0], umem.as_mut_slice(), cfg).map_err(|e| e.to_string())?;
    program
        .insert(cfg.queue, &device)
        .map_err(|e| e.to_string())?;
    let net = NetConfig {
        hardware: HardwareAddress::Ethernet(EthernetAddress(device.mac())),
        addr: local,
        gateway: Some(gateway),
    };
    let mut seed = [0u8; 32];
    tickwire_codec::rand::MaskRng::from_entropy()
        .map_err(|e| e.to_string())?
        .fill_bytes(&mut seed);
    let mut stack = Stack::new(device, net, &mut sockets, &mut slots, seed, clock.now())
        .map_err(|e| e.to_string())?;

    struct Conn {
        id: tickwire_bypass::ConnId,
        rest: bool,
        path: String,
        backoff: Duration,
        retry_at: Option<Instant>,
        next_get: Instant,
    }
    let mut conns = Vec::new();
    for (remote, path) in remotes {
        let rest = !remote.scheme().is_ws();
        let id = stack
            .connect(remote, options.clone(), clock.now())
            .map_err(|e| e.to_string())?;
        conns.push(Conn {
            id,
            rest,
            path,
            backoff: Duration::from_millis(100),
            retry_at: None,
            next_get: clock.now(),
        });
    }

    // The loop: busy-polls (a trading loop owns its core).
    loop {
        let now = clock.now();
        stack.poll(now);
        while let Some((id, event)) = stack.next_event() {
            let Some(c) = conns.iter_mut().find(|c| c.id == id) else {
                continue;
            };
            match event {
                Event::Connected => {
                    println!("{}: connected", id.slot());
                    c.backoff = Duration::from_millis(100);
                }
                Event::Readable => {
                    while let Ok(Some((msg, _))) = stack.recv(id) {
                        if let Message::Text(t) = msg {
                            println!("{}: {t}", id.slot());
                        }
                    }
                    if let Ok(Some(r)) = stack.response(id) {
                        println!(
                            "{}: {} {}",
                            id.slot(),
                            r.status(),
                            r.body_str().unwrap_or("(binary)")
                        );
                    }
                }
                Event::Closed | Event::Failed(_) => {
                    if let Event::Failed(e) = &event {
                        eprintln!("{}: {e}; again in {:?}", id.slot(), c.backoff);
                    }
                    c.retry_at = Some(now.saturating_add(c.backoff));
                    c.backoff = (c.backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
        for c in conns.iter_mut() {
            if c.retry_at.is_some_and(|at| now >= at) {
                c.retry_at = None;
                if let Ok(id) = stack.reconnect(c.id, now) {
                    c.id = id;
                }
            }
            if c.rest && stack.is_open(c.id) && now >= c.next_get {
                let path = c.path.as_str();
                if stack.request(c.id, now, |w| w.get(path).finish()).is_ok() {
                    c.next_get = now.saturating_add(Duration::from_secs(1));
                }
            }
        }
    }
}
