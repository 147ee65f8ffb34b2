//! A market-data fan-out server, evented: one thread, one `mio::Poll` (tickwire
//! re-exports the mio it is built on as `tickwire::mio`), many WebSocket subscribers.
//!
//! Clients connect and send `subscribe`; every tick is encoded once as a
//! [`PreparedMessage`] and sent to every subscriber with `send_prepared`. A subscriber
//! whose write buffer is full (it reads slower than the feed) misses that tick
//! (`Error::Backpressure`: nothing was queued for it) and the others are not held up;
//! its queued bytes go out when its socket is writable again. Keepalive pings and
//! dead-peer detection run on the connections' own timers (`timeout_at` /
//! `handle_timeout`). Built with feature `deflate`, the server takes
//! `DeflateConfig::fan_out()`, so the frame compressed once goes to every subscriber
//! that negotiated compression.
//!
//! Usage: `fanout_server [ADDR] [--ticks N] [--wait-for N] [--interval-ms MS]`
//! (default `127.0.0.1:9003`, ticks without end, every 100 ms, starting at once).
//! `tests/example_fanout.rs` runs it against three clients.

use std::time::{Duration, Instant};

use tickwire::mio::{Events, Interest, Poll, Token};
use tickwire::ws::{CloseCode, Error, Message, PreparedMessage, Server, ServerConnection};

const LISTENER: Token = Token(usize::MAX);

/// What `serve` is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Stop after this many ticks, closing every connection (`None`: never).
    pub ticks: Option<u64>,
    /// Time between ticks.
    pub interval: Duration,
    /// Start ticking once this many clients subscribed.
    pub wait_for: usize,
}

/// One client.
struct Subscriber {
    conn: ServerConnection,
    subscribed: bool,
    /// Ticks it missed because its write buffer was full.
    missed: u64,
}

/// The server's settings: small buffers (a tick is ~100 bytes), pings after 15 s of
/// silence, a peer silent for 45 s is dropped; permessage-deflate with feature `deflate`.
pub fn server_builder() -> tickwire::ws::ServerBuilder {
    let b = Server::builder()
        .write_buffer_size(64 << 10)
        .keepalive(Some(Duration::from_secs(15)))
        .dead_peer_timeout(Some(Duration::from_secs(45)));
    #[cfg(feature = "deflate")]
    let b = b.deflate(tickwire::ws::DeflateConfig::fan_out());
    b
}

/// The tick `seq`, encoded once for every subscriber (compressed once too, with
/// feature `deflate`).
fn tick(seq: u64) -> Result<PreparedMessage, Error> {
    let text = format!(
        r#"{{"seq":{seq},"s":"BTCUSDT","b":"{}.10","a":"{}.20"}}"#,
        64_000 + seq % 500,
        64_000 + seq % 500
    );
    let msg = PreparedMessage::text(&text);
    #[cfg(feature = "deflate")]
    let msg = msg.with_deflate(&tickwire::ws::DeflateConfig::fan_out())?;
    Ok(msg)
}

/// Run the feed on `server` until `opts.ticks` ticks went out and every connection
/// closed. Returns how many ticks were sent.
pub fn serve(mut server: Server, opts: Options) -> Result<u64, Error> {
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut server, LISTENER, Interest::READABLE)?;
    let mut subs: Vec<Option<Subscriber>> = Vec::new();
    let mut events = Events::with_capacity(256);
    let mut seq = 0;
    let mut next_tick: Option<Instant> = None;
    let mut closing = false;
    loop {
        // Sleep until the next tick or the first connection timer.
        let now = Instant::now();
        let timers = subs.iter().flatten().filter_map(|s| s.conn.timeout_at());
        let wake = timers.chain(next_tick).min();
        let timeout = wake.map(|t| t.saturating_duration_since(now));
        poll.poll(&mut events, timeout)?;

        for event in events.iter() {
            if event.token() == LISTENER {
                while let Some(mut conn) = server.try_accept()? {
                    let i = subs.iter().position(Option::is_none).unwrap_or_else(|| {
                        subs.push(None);
                        subs.len() - 1
                    });
                    poll.registry().register(
                        &mut conn,
                        Token(i),
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                    subs[i] = Some(Subscriber {
                        conn,
                        subscribed: false,
                        missed: 0,
                    });
                    // Bytes may have arrived before registration: drive it once now.
                    service(&poll, &mut subs[i]);
                }
            } else if let Some(slot) = subs.get_mut(event.token().0) {
                service(&poll, slot);
            }
        }

        let now = Instant::now();
        for slot in subs.iter_mut() {
            let expired = slot.as_mut().is_some_and(|s| {
                s.conn.timeout_at().is_some_and(|t| t <= now) && s.conn.handle_timeout(now).is_err()
            });
            if expired {
                drop_slot(&poll, slot);
            }
        }

        let subscribed = subs.iter().flatten().filter(|s| s.subscribed).count();
        if next_tick.is_none() && !closing && subscribed >= opts.wait_for {
            next_tick = Some(now);
        }
        if next_tick.is_some_and(|t| t <= now) {
            let msg = tick(seq)?; // PreparedMessage::text(..), with_deflate(..) with feature `deflate`
            seq += 1;
            for slot in subs.iter_mut() {
                let Some(s) = slot.as_mut().filter(|s| s.subscribed) else {
                    continue;
                };
                match s.conn.send_prepared(&msg) {
                    Ok(()) => {}
                    // This one is behind: it misses the tick, the others do not wait.
                    Err(Error::Backpressure) => s.missed += 1,
                    Err(_) => drop_slot(&poll, slot),
                }
            }
            next_tick = Some(now + opts.interval);
            if opts.ticks.is_some_and(|n| seq >= n) {
                next_tick = None;
                closing = true;
                for slot in subs.iter_mut() {
                    let closed = slot
                        .as_mut()
                        .is_some_and(|s| s.conn.close(CloseCode::NORMAL, "feed over").is_err());
                    if closed {
                        drop_slot(&poll, slot);
                    }
                }
            }
        }
        if closing && subs.iter().all(Option::is_none) {
            return Ok(seq);
        }
    }
}

/// On readiness: write what is queued, then read what arrived (a `subscribe`; pings
/// are answered and a close echoed by the library). Drops a finished connection.
fn service(poll: &Poll, slot: &mut Option<Subscriber>) {
    let Some(s) = slot.as_mut() else { return };
    let mut alive = !s.conn.wants_write() || s.conn.flush().is_ok();
    while alive {
        match s.conn.try_recv() {
            Ok(Some(Message::Text("subscribe"))) => s.subscribed = true,
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => alive = false,
        }
    }
    if !alive || (s.conn.is_closed() && !s.conn.wants_write()) {
        if s.missed > 0 {
            eprintln!("fanout_server: a subscriber missed {} ticks", s.missed);
        }
        drop_slot(poll, slot);
    }
}

fn drop_slot(poll: &Poll, slot: &mut Option<Subscriber>) {
    if let Some(mut s) = slot.take() {
        let _ = poll.registry().deregister(&mut s.conn);
    }
}

/// The value after `--flag` on the command line.
fn arg<T: std::str::FromStr>(flag: &str) -> Option<T> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1)?.parse().ok()
}

#[allow(dead_code)] // tests/example_fanout.rs includes this file for `serve`
fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[i - 1].starts_with("--")))
        .map(|(_, a)| a.clone())
        .unwrap_or_else(|| "127.0.0.1:9003".to_owned());
    let opts = Options {
        ticks: arg("--ticks"),
        interval: Duration::from_millis(arg("--interval-ms").unwrap_or(100)),
        wait_for: arg("--wait-for").unwrap_or(0),
    };
    let server = server_builder().bind(addr.as_str())?;
    println!("fanout_server: listening on {}", server.local_addr()?);
    let sent = serve(server, opts)?;
    println!("fanout_server: {sent} ticks sent");
    Ok(())
}
