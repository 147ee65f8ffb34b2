//! Zero heap allocations per compressed message in the steady state: a client whose read
//! buffer (64 KiB) is far smaller than its message limit (1 MiB) receives compressed
//! messages that inflate past the read buffer's size, into the connection's own buffer,
//! which grows while the first messages arrive and is then reused (sender and receiver,
//! with and without context takeover).
#![cfg(feature = "deflate")]

use tickwire_codec::rand::{MaskRng, NoMask};
use tickwire_codec::time::Instant;
use tickwire_codec::ws::connection::doc_pump;
use tickwire_codec::ws::deflate::DeflateConfig;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{Connection, Message, Settings};

mod common;
use common::allocs;

type Client = Connection<Vec<u8>, Vec<u8>, MaskRng>;
type Server = Connection<Vec<u8>, Vec<u8>, NoMask>;

fn json(n: usize, seed: usize) -> String {
    let mut s = String::new();
    let mut k = seed;
    while s.len() < n {
        s.push_str(&format!("{{\"px\":{},\"qty\":{}}},", k % 997, k % 13));
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    s.truncate(n);
    s
}

fn pair(cfg: DeflateConfig) -> (Client, Server) {
    let now = Instant::from_nanos(0);
    let mut settings = Settings {
        deflate: Some(cfg),
        ..Settings::default()
    };
    settings.limits.max_message_size = 1 << 20;
    let hs = ClientHandshake::new("example.com", "/", [7; 16]);
    let rng = MaskRng::from_seed([1; 32]);
    let mut c = Connection::client(
        &hs,
        vec![0; 64 << 10],
        vec![0; 64 << 10],
        rng,
        &settings,
        now,
    )
    .unwrap();
    let mut s = Connection::server(vec![0; 64 << 10], vec![0; 1 << 20], &settings, now);
    doc_pump(&mut c, &mut s);
    assert!(s.handle_upgrade(|_| Default::default()).unwrap());
    doc_pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(None));
    assert!(c.deflate().is_some());
    (c, s)
}

#[test]
fn compressed_messages_above_the_read_buffer_do_not_allocate_once_warm() {
    let texts: Vec<String> = [200, 5000, 70_000, 150_000, 9000]
        .iter()
        .enumerate()
        .map(|(i, &n)| json(n, i))
        .collect();
    for no_takeover in [false, true] {
        let (mut c, mut s) = pair(DeflateConfig {
            server_no_context_takeover: no_takeover,
            ..DeflateConfig::default()
        });
        let mut round = |i: usize| {
            let text = &texts[i % texts.len()];
            s.send_text(text).unwrap();
            assert!(doc_pump(&mut s, &mut c) < 64 << 10);
            match c.poll_message() {
                Ok(Some(Message::Text(t))) => assert_eq!(t.len(), text.len()),
                other => panic!("{:?}", other.map(|m| m.map(|m| m.payload().len()))),
            }
        };
        // Warm up: every size once, so the buffers have grown.
        for i in 0..texts.len() * 2 {
            round(i);
        }
        let before = allocs();
        for i in 0..300 {
            round(i);
        }
        assert_eq!(
            allocs() - before,
            0,
            "allocations in the steady state (no_context_takeover {no_takeover})"
        );
    }
}
