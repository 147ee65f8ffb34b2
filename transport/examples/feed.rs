//! An exchange-like market-data feed over ws://, and a consumer that measures it.
//!
//! - `feed server [ADDR] [TICKS_PER_SEC]`: streams JSON quote ticks to every client from
//!   one evented thread (default `127.0.0.1:9010`, 100000/s). Each tick carries its send
//!   time (`ts`, ns since the Unix epoch). A client that cannot keep up loses ticks
//!   (counted), as with a real exchange's conflation.
//! - `feed client [URL] [SECONDS]`: consumes the feed (blocking mode) and prints
//!   messages/s each second, then a latency histogram (send to receive, same host clock).
//! - `feed demo [SECONDS]`: both in one process.

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mio::{Events, Interest, Poll, Token};
use tickwire::ws::{Client, CloseCode, Error, Message, Server, ServerConnection};

const LISTENER: Token = Token(usize::MAX);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let result = match arg(0) {
        Some("server") => server(arg(1).unwrap_or("127.0.0.1:9010"), num(arg(2), 100_000)),
        Some("client") => client(
            arg(1).unwrap_or("ws://127.0.0.1:9010/quotes"),
            num(arg(2), 10),
        ),
        Some("demo") => demo(num(arg(1), 3)),
        _ => {
            eprintln!(
                "usage: feed server [ADDR] [TICKS_PER_SEC] | client [URL] [SECONDS] | demo [SECONDS]"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("feed: {e:#}");
        std::process::exit(1);
    }
}

fn num(s: Option<&str>, default: u64) -> u64 {
    s.and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn demo(seconds: u64) -> Result<(), Error> {
    let srv = Server::builder().bind("127.0.0.1:0")?;
    let addr = srv.local_addr()?;
    std::thread::spawn(move || {
        if let Err(e) = serve(srv, 100_000) {
            eprintln!("feed server: {e:#}");
        }
    });
    client(&format!("ws://{addr}/quotes"), seconds)
}

fn server(addr: &str, rate: u64) -> Result<(), Error> {
    let srv = Server::builder().bind(addr)?;
    println!(
        "feed: serving {rate} ticks/s on ws://{}/",
        srv.local_addr()?
    );
    serve(srv, rate)
}

/// One thread: accept, handshake, and push ticks to every open connection.
fn serve(mut srv: Server, rate: u64) -> Result<(), Error> {
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut srv, LISTENER, Interest::READABLE)?;
    let mut conns: Vec<Option<ServerConnection>> = Vec::new();
    let mut events = Events::with_capacity(64);
    let mut tick = String::with_capacity(256);
    let (start, mut seq, mut dropped) = (Instant::now(), 0u64, 0u64);
    let interval = Duration::from_micros(200);
    loop {
        poll.poll(&mut events, Some(interval))?;
        for event in events.iter() {
            if event.token() == LISTENER {
                while let Some(mut c) = srv.try_accept()? {
                    let i = conns
                        .iter()
                        .position(Option::is_none)
                        .unwrap_or(conns.len());
                    poll.registry().register(
                        &mut c,
                        Token(i),
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                    if i == conns.len() {
                        conns.push(None);
                    }
                    conns[i] = Some(c);
                }
            }
        }
        // Drive handshakes, answer pings and closes, drop finished connections.
        for slot in conns.iter_mut() {
            let Some(c) = slot else { continue };
            let alive = loop {
                match c.try_recv() {
                    Ok(Some(_)) => {}
                    Ok(None) => break !c.is_closed(),
                    Err(_) => break false,
                }
            };
            if (!alive || (c.wants_write() && c.flush().is_err()))
                && let Some(mut c) = slot.take()
            {
                let _ = poll.registry().deregister(&mut c);
            }
        }
        // Ticks due by now.
        let due = start.elapsed().as_nanos() as u64 * rate / 1_000_000_000;
        while seq < due {
            seq += 1;
            tick.clear();
            let mid = 60_000.0 + (seq % 1000) as f64 * 0.5;
            let _ = write!(
                tick,
                r#"{{"type":"quote","seq":{seq},"sym":"BTC-USD","bid":{:.2},"ask":{:.2},"ts":{}}}"#,
                mid - 0.25,
                mid + 0.25,
                now_ns()
            );
            for c in conns.iter_mut().flatten() {
                if c.is_handshaking() || c.is_closed() {
                    continue;
                }
                match c.send_text(&tick) {
                    Ok(()) => {}
                    Err(Error::Backpressure) => dropped += 1,
                    Err(_) => {}
                }
            }
        }
        if seq % (rate * 10).max(1) == 0 && dropped > 0 {
            println!("feed: {dropped} ticks dropped for slow consumers");
        }
    }
}

fn client(url: &str, seconds: u64) -> Result<(), Error> {
    let mut c = Client::builder()
        .read_timeout(Some(Duration::from_secs(5)))
        .connect(url)?;
    println!("feed: connected to {url}");
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut lat: Vec<u64> = Vec::with_capacity(1 << 22);
    let (mut count, mut last_seq, mut gaps) = (0u64, 0u64, 0u64);
    let mut second = Instant::now();
    while Instant::now() < end {
        let Some(msg) = c.recv()? else { break };
        let Message::Text(t) = msg else { continue };
        let now = now_ns();
        if let (Some(ts), Some(seq)) = (field(t, "\"ts\":"), field(t, "\"seq\":")) {
            if lat.len() < lat.capacity() {
                lat.push(now.saturating_sub(ts));
            }
            if last_seq != 0 && seq != last_seq + 1 {
                gaps += 1;
            }
            last_seq = seq;
        }
        count += 1;
        if second.elapsed() >= Duration::from_secs(1) {
            println!("feed: {count} msg/s");
            count = 0;
            second = Instant::now();
        }
    }
    c.close(CloseCode::NORMAL, "")?;
    // Drain until the server's close (ticks still in flight are discarded).
    while let Ok(Some(_)) = c.recv() {}
    report(&mut lat, gaps);
    Ok(())
}

/// The unsigned integer after `key` in a flat JSON object.
fn field(json: &str, key: &str) -> Option<u64> {
    let rest = &json[json.find(key)? + key.len()..];
    let end = rest
        .find(|ch: char| !ch.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn report(lat: &mut [u64], gaps: u64) {
    if lat.is_empty() {
        println!("feed: no ticks received");
        return;
    }
    lat.sort_unstable();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize];
    println!(
        "feed: {} ticks, {gaps} sequence gaps; latency (send -> receive):",
        lat.len()
    );
    for (name, p) in [
        ("p50", 0.5),
        ("p90", 0.9),
        ("p99", 0.99),
        ("p99.9", 0.999),
        ("max", 1.0),
    ] {
        println!("  {name:>6} {:>10.1} us", pct(p) as f64 / 1000.0);
    }
    // A coarse histogram: powers of two in microseconds.
    let mut bucket = 1u64;
    let mut from = 0;
    while from < lat.len() {
        let to = lat.partition_point(|&x| x < bucket * 1000);
        if to > from {
            let share = (to - from) as f64 * 100.0 / lat.len() as f64;
            let bar = "#".repeat((share / 2.0).ceil() as usize);
            println!("  < {bucket:>7} us {share:>6.2}% {bar}");
        }
        from = to;
        bucket *= 2;
    }
}
