//! 10,000 messages each way through the smoltcp loop, every byte checked, and
//! not one heap allocation in the loop once the session is set up.
//!
//! Sizes run from 0 B to 64 KiB (a quarter of them at the edges of the frame
//! header's length encodings), text and binary, whole and fragmented (text
//! split anywhere, inside characters too). Both directions run at once, with
//! a ping from each side every 500 messages. The clock is simulated (1 ms a
//! turn): nothing in the loop asks the operating system for anything.

use smoltcp::iface::SocketStorage;
use smoltcp::time::{Duration, Instant};
use tickwire_bypass::{RingDevice, Session, Sizes, State};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{CloseCode, Config, Message};

// The counting allocator shared with the codec's no-allocation tests.
#[path = "../../codec/tests/common/mod.rs"]
mod common;
use common::allocs;

const COUNT: usize = 10_000;
const MAX_LEN: usize = 64 * 1024;
const PING_EVERY: usize = 500;

// The test's own generator, independent of the codec.
#[path = "support/gen.rs"]
mod generator;
use generator::Gen;

/// One message of a direction's script.
#[derive(Debug, Clone, Copy)]
struct Spec {
    at: usize,
    len: usize,
    text: bool,
    /// 0: one frame; otherwise the fragment size.
    fragment: usize,
}

/// A direction's messages: specs and one byte store holding every payload.
struct Script {
    specs: Vec<Spec>,
    bytes: Vec<u8>,
}

impl Script {
    fn payload(&self, s: &Spec) -> &[u8] {
        &self.bytes[s.at..s.at + s.len]
    }
}

/// Sizes the header encodes differently, and their neighbours.
const EDGES: &[usize] = &[
    0, 1, 2, 124, 125, 126, 127, 128, 1000, 4095, 4096, 4097, 65534, 65535, 65536,
];

fn size(g: &mut Gen) -> usize {
    match g.below(20) {
        0..=4 => EDGES[g.below(EDGES.len())],
        5..=10 => g.below(126),
        11..=15 => 126 + g.below(4096 - 126),
        16..=18 => 4096 + g.below(16 * 1024),
        _ => g.below(MAX_LEN + 1),
    }
}

/// Pools the payloads are cut from (cutting is a memcpy, fast even in a
/// debug build): random bytes, and valid UTF-8 of 1- to 4-byte characters.
struct Pools {
    binary: Vec<u8>,
    text: Vec<u8>,
}

const POOL_LEN: usize = 2 * MAX_LEN;

impl Pools {
    fn new(g: &mut Gen) -> Self {
        const CHARS: &[&str] = &["a", "Z", " ", "é", "ü", "€", "∀", "😀", "𝄞", "\u{7f}"];
        let mut binary = Vec::with_capacity(POOL_LEN);
        while binary.len() < POOL_LEN {
            binary.extend_from_slice(&g.next().to_le_bytes());
        }
        let mut text = String::with_capacity(POOL_LEN + 4);
        while text.len() < POOL_LEN {
            text.push_str(CHARS[g.below(CHARS.len())]);
        }
        Pools {
            binary,
            text: text.into_bytes(),
        }
    }

    /// `len` random bytes.
    fn binary(&self, g: &mut Gen, len: usize, out: &mut Vec<u8>) {
        let at = g.below(POOL_LEN - len + 1);
        out.extend_from_slice(&self.binary[at..at + len]);
    }

    /// Exactly `len` bytes of valid UTF-8: whole characters from the pool,
    /// padded with ASCII where the next character would not fit.
    fn text(&self, g: &mut Gen, len: usize, out: &mut Vec<u8>) {
        let boundary = |mut i: usize| {
            while i > 0 && self.text[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            i
        };
        let start = boundary(g.below(POOL_LEN - len + 1));
        let end = boundary(start + len);
        out.extend_from_slice(&self.text[start..end]);
        out.resize(out.len() + len - (end - start), b'.');
    }
}

fn script(seed: u64) -> Script {
    let mut g = Gen(seed);
    let pools = Pools::new(&mut g);
    let mut specs = Vec::with_capacity(COUNT);
    let mut bytes = Vec::new();
    for _ in 0..COUNT {
        let len = size(&mut g);
        let text = g.below(2) == 0;
        let at = bytes.len();
        if text {
            pools.text(&mut g, len, &mut bytes);
        } else {
            pools.binary(&mut g, len, &mut bytes);
        }
        let fragment = if len > 0 && g.below(3) == 0 {
            // At most ~64 frames a message, at least one byte a frame.
            (len / 64).max(1) + g.below(len)
        } else {
            0
        };
        specs.push(Spec {
            at,
            len,
            text,
            fragment,
        });
    }
    Script { specs, bytes }
}

/// Check `msg` against the next expected message of `script`.
fn check(msg: &Message<'_>, script: &Script, next: &mut usize, who: &str) {
    let i = *next;
    let spec = &script.specs[i];
    let want = script.payload(spec);
    let (text, got) = match msg {
        Message::Text(t) => (true, t.as_bytes()),
        Message::Binary(b) => (false, *b),
        other => panic!("{who}: message {i}: unexpected {other:?}"),
    };
    assert_eq!(text, spec.text, "{who}: message {i}: kind");
    assert_eq!(got.len(), want.len(), "{who}: message {i}: length");
    assert!(got == want, "{who}: message {i}: bytes differ");
    *next += 1;
}

/// Queue as many of `script`'s messages as the send buffer takes.
fn send_some<W: AsRef<[u8]> + AsMut<[u8]>, M: tickwire_codec::ws::Masking>(
    tx: &mut tickwire_bypass::Tx<W, M>,
    script: &Script,
    next: &mut usize,
    pings: &mut usize,
) {
    while *next < script.specs.len() {
        let spec = &script.specs[*next];
        let p = script.payload(spec);
        let r = match (spec.text, spec.fragment) {
            (true, f) => {
                let s = std::str::from_utf8(p).expect("script text is UTF-8");
                tx.send_text_fragmented(s, f)
            }
            (false, f) => tx.send_binary_fragmented(p, f),
        };
        match r {
            Ok(()) => *next += 1,
            Err(tickwire_codec::ws::ConnectionError::Backpressure) => return,
            Err(e) => panic!("send {}: {e}", *next),
        }
        if next.is_multiple_of(PING_EVERY) {
            match tx.send_ping(&(*next as u64).to_be_bytes()) {
                Ok(()) => *pings += 1,
                Err(e) => panic!("ping: {e}"),
            }
        }
    }
}

#[test]
fn ten_thousand_messages_each_way_without_allocating() {
    let up = script(0x9E37_79B9_7F4A_7C15);
    let down = script(0xD1B5_4A32_D192_ED03);
    let total: usize = up.specs.iter().chain(&down.specs).map(|s| s.len).sum();

    // Setup: every allocation of the run happens here.
    const SLOTS: usize = 16;
    let device = RingDevice::<_, SLOTS>::new(vec![0u8; SLOTS * 65535]);
    let sizes = Sizes {
        tcp: 64 * 1024,
        ws: MAX_LEN + 8 * 1024,
    };
    let mut arena = vec![0u8; sizes.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let mut rng = MaskRng::from_seed([7; 32]);
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let hs = ClientHandshake::new("127.0.0.1:9001", "/", nonce);
    let mut now = Instant::ZERO;
    let mut session = Session::new(
        device,
        &mut arena,
        sizes,
        &mut slots,
        hs,
        rng,
        Config::default(),
        42,
        now,
    )
    .expect("session");

    let mut turns = 0u32;
    let tick = |now: &mut Instant, turns: &mut u32| {
        *now += Duration::from_millis(1);
        *turns += 1;
        assert!(*turns < 200_000, "loop stalled");
    };
    while !(session.client.is_open() && session.server.is_open()) {
        session.poll(now).expect("poll");
        assert!(session.server_recv().expect("server handshake").is_none());
        assert!(session.client_recv().expect("client handshake").is_none());
        tick(&mut now, &mut turns);
    }

    let before = allocs();
    let (mut sent_up, mut sent_down, mut got_up, mut got_down) = (0, 0, 0, 0);
    let (mut pings_up, mut pings_down, mut pongs_up, mut pongs_down) = (0, 0, 0, 0);
    while got_up < COUNT || got_down < COUNT || pongs_up < pings_up || pongs_down < pings_down {
        send_some(session.client.tx(), &up, &mut sent_up, &mut pings_up);
        send_some(session.server.tx(), &down, &mut sent_down, &mut pings_down);
        session.poll(now).expect("poll");
        while let Some((msg, _)) = session.server_recv().expect("server recv") {
            match msg {
                Message::Ping(_) => {}
                Message::Pong(p) => {
                    pongs_down += 1;
                    assert_eq!(p.len(), 8, "server: pong payload");
                }
                m => check(&m, &up, &mut got_up, "server"),
            }
        }
        while let Some((msg, _)) = session.client_recv().expect("client recv") {
            match msg {
                Message::Ping(_) => {}
                Message::Pong(p) => {
                    pongs_up += 1;
                    assert_eq!(p.len(), 8, "client: pong payload");
                }
                m => check(&m, &down, &mut got_down, "client"),
            }
        }
        tick(&mut now, &mut turns);
    }
    session
        .client
        .tx()
        .close(Some(CloseCode::NORMAL), "bye")
        .expect("close");
    let (mut client_close, mut server_close) = (None, None);
    while !session.is_closed() {
        session.poll(now).expect("poll");
        while let Some((msg, _)) = session.server_recv().expect("server recv") {
            if let Message::Close(c) = msg {
                server_close = c.map(|c| c.code);
            }
        }
        while let Some((msg, _)) = session.client_recv().expect("client recv") {
            if let Message::Close(c) = msg {
                client_close = c.map(|c| c.code);
            }
        }
        tick(&mut now, &mut turns);
    }
    let in_loop = allocs() - before;

    assert_eq!(in_loop, 0, "heap allocations in the loop");
    assert_eq!((got_up, got_down), (COUNT, COUNT));
    assert_eq!((pongs_up, pongs_down), (pings_up, pings_down));
    assert_eq!(pings_up, COUNT / PING_EVERY);
    assert_eq!(server_close, Some(CloseCode::NORMAL));
    assert_eq!(client_close, Some(CloseCode::NORMAL));
    assert_eq!(session.client.state(), State::Closed);
    assert_eq!(session.server.state(), State::Closed);
    assert_eq!(session.link.device.dropped(), 0);
    println!(
        "{} messages, {} payload bytes, {} turns, 0 allocations in the loop",
        2 * COUNT,
        total,
        turns
    );
}
