//! Prepared messages on connections driven in memory: the bytes each peer receives, the
//! room and close rules, the fallbacks, and (feature `deflate`) the compressed frame.

use std::string::String;
use std::vec;
use std::vec::Vec;

use crate::rand::MaskRng;
use crate::rand::NoMask;
use crate::time::Instant;
use crate::ws::connection::{Answer, CONTROL_ROOM, Connection, ConnectionError, Settings, State};
use crate::ws::handshake::ClientHandshake;
use crate::ws::{Masking, Message, PreparedMessage};

type Client = Connection<Vec<u8>, Vec<u8>, MaskRng>;
type Server = Connection<Vec<u8>, Vec<u8>, NoMask>;

const T0: Instant = Instant::from_nanos(1_000_000_000);

/// The server's write buffer.
const SERVER_OUT: usize = 8192;

/// Move everything `from` has queued into `to`.
fn pump<A, B, C, D, E, F>(from: &mut Connection<A, B, C>, to: &mut Connection<D, E, F>)
where
    A: AsRef<[u8]> + AsMut<[u8]>,
    B: AsRef<[u8]> + AsMut<[u8]>,
    C: Masking,
    D: AsRef<[u8]> + AsMut<[u8]>,
    E: AsRef<[u8]> + AsMut<[u8]>,
    F: Masking,
{
    while !from.transmit().is_empty() {
        let n = to.feed(from.transmit());
        from.handle_written(n);
        assert!(n > 0, "the receiver is full");
    }
}

fn pair_with(client: &Settings, server: &Settings, seed: u8) -> (Client, Server) {
    let hs = ClientHandshake::new("example.com", "/feed", [seed; 16]);
    let mut c = Connection::client(
        &hs,
        vec![0; 1 << 16],
        vec![0; 4096],
        MaskRng::from_seed([seed; 32]),
        client,
        T0,
    )
    .unwrap();
    let mut s = Connection::server(vec![0; 1 << 16], vec![0; SERVER_OUT], server, T0);
    pump(&mut c, &mut s);
    assert!(s.handle_upgrade(|_| Answer::default()).unwrap());
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(None));
    assert_eq!((c.state(), s.state()), (State::Open, State::Open));
    (c, s)
}

fn pair(seed: u8) -> (Client, Server) {
    pair_with(&Settings::default(), &Settings::default(), seed)
}

fn tick(n: usize) -> String {
    let mut s = String::new();
    let mut i = 0u32;
    while s.len() < n {
        s.push_str(&std::format!(
            "{{\"px\":{},\"q\":{}}}",
            64000 + i % 97,
            i % 7
        ));
        i += 1;
    }
    s.truncate(n);
    s
}

#[test]
fn every_connection_gets_the_frame_send_text_would_have_made() {
    let text = tick(128);
    let msg = PreparedMessage::text(&text);
    let (_, mut reference) = pair(9);
    reference.send_text(&text).unwrap();
    assert_eq!(msg.frame(), reference.transmit());
    assert_eq!(msg.payload(), text.as_bytes());
    for seed in 1..4 {
        let (mut c, mut s) = pair(seed);
        s.send_prepared(&msg).unwrap();
        assert_eq!(s.transmit(), msg.frame());
        pump(&mut s, &mut c);
        assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
    }
    // Binary, and a 64-bit length.
    let big = vec![7u8; 70_000];
    assert!(big.len() > SERVER_OUT);
    let (mut c, mut s) = pair_with(&Settings::default(), &Settings::default(), 5);
    let msg = PreparedMessage::binary(&big);
    assert_eq!(msg.frame().len(), 10 + big.len());
    let mut out = Vec::new();
    // Larger than the server's write buffer: refused whole, nothing queued.
    assert!(matches!(
        s.send_prepared(&msg),
        Err(ConnectionError::MessageTooLarge { .. })
    ));
    assert!(s.transmit().is_empty());
    let n = s
        .send_prepared_with(&PreparedMessage::binary(&big[..1000]), |b| {
            out.extend_from_slice(b);
            b.len()
        })
        .unwrap();
    assert_eq!(n, 1004);
    let n = c.feed(&out);
    assert_eq!(n, out.len());
    assert_eq!(c.poll_message(), Ok(Some(Message::Binary(&big[..1000]))));
}

#[test]
fn written_straight_out_when_nothing_is_queued_and_only_the_tail_is_kept() {
    let text = tick(128);
    let msg = PreparedMessage::text(&text);
    let (mut c, mut s) = pair(1);
    // The "socket" takes 50 bytes: the other 80 wait in the output.
    let mut wire = Vec::new();
    let took = s
        .send_prepared_with(&msg, |b| {
            wire.extend_from_slice(&b[..50]);
            50
        })
        .unwrap();
    assert_eq!(took, 50);
    assert_eq!(s.transmit(), &msg.frame()[50..]);
    // With bytes queued, the next one goes behind them: `write` is not called.
    let took = s
        .send_prepared_with(&msg, |_| panic!("bytes are queued ahead"))
        .unwrap();
    assert_eq!(took, 0);
    wire.extend_from_slice(s.transmit());
    s.handle_written(s.transmit().len());
    assert_eq!(c.feed(&wire), wire.len());
    assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
    assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
    assert_eq!(c.poll_message(), Ok(None));
}

#[test]
fn a_full_buffer_refuses_and_leaves_room_for_a_pong_and_a_close() {
    let text = tick(128);
    let msg = PreparedMessage::text(&text);
    let (mut c, mut s) = pair(2);
    let mut queued = 0;
    loop {
        match s.send_prepared_with(&msg, |_| 0) {
            Ok(0) => queued += 1,
            Ok(n) => panic!("wrote {n} through a socket that took nothing"),
            Err(ConnectionError::Backpressure) => break,
            Err(e) => panic!("{e:?}"),
        }
        assert!(queued < 100);
    }
    let pending = s.sender().pending();
    assert_eq!(pending, queued * msg.frame().len());
    assert!(s.sender().room() < msg.frame().len());
    assert!(SERVER_OUT - pending >= CONTROL_ROOM);
    // Refused: nothing queued, and `write` is never offered the bytes.
    assert_eq!(
        s.send_prepared_with(&msg, |_| panic!("refused messages are not written")),
        Err(ConnectionError::Backpressure)
    );
    assert_eq!(s.sender().pending(), pending);
    // The peer pings, we close: the pong and the close still fit.
    c.send_ping(b"are you there").unwrap();
    pump(&mut c, &mut s);
    assert_eq!(s.poll_message(), Ok(Some(Message::Ping(b"are you there"))));
    s.close(Some(crate::ws::CloseCode::NORMAL), "bye").unwrap();
    // Both queued at once, none held back: a 13-byte pong and a close with code and
    // reason, 2-byte headers.
    assert_eq!(s.sender().pending(), pending + (2 + 13) + (2 + 2 + 3));
    pump(&mut s, &mut c);
    for _ in 0..queued {
        assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
    }
    assert_eq!(c.poll_message(), Ok(Some(Message::Pong(b"are you there"))));
    assert!(matches!(c.poll_message(), Ok(Some(Message::Close(_)))));
    assert_eq!(s.send_prepared(&msg), Err(ConnectionError::AlreadyClosed));
    assert_eq!(c.state(), State::Closed);
}

#[test]
fn refused_during_the_handshake_and_after_a_close() {
    let msg = PreparedMessage::text("tick");
    let mut s = Server::server(vec![0; 4096], vec![0; 2048], &Settings::default(), T0);
    assert_eq!(
        s.send_prepared(&msg),
        Err(ConnectionError::HandshakeInProgress)
    );
    // Our close.
    let (mut c, mut s) = pair(3);
    s.close(None, "").unwrap();
    let queued = s.transmit().len();
    assert_eq!(
        s.send_prepared_with(&msg, |_| panic!("refused")),
        Err(ConnectionError::AlreadyClosed)
    );
    assert_eq!(s.transmit().len(), queued);
    // Closed after the peer's answer.
    pump(&mut s, &mut c);
    assert!(matches!(c.poll_message(), Ok(Some(Message::Close(None)))));
    pump(&mut c, &mut s);
    assert!(matches!(s.poll_message(), Ok(Some(Message::Close(None)))));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(s.send_prepared(&msg), Err(ConnectionError::AlreadyClosed));
    // The peer's close, echoed.
    let (mut c2, mut s2) = pair(4);
    c2.close(None, "").unwrap();
    pump(&mut c2, &mut s2);
    assert!(matches!(s2.poll_message(), Ok(Some(Message::Close(None)))));
    assert_eq!(s2.send_prepared(&msg), Err(ConnectionError::AlreadyClosed));
}

#[test]
fn a_client_or_a_small_fragment_size_encodes_the_payload_itself() {
    let text = tick(300);
    let msg = PreparedMessage::text(&text);
    // Client role: masked with a fresh key, so not the prepared bytes.
    let (mut c, mut s) = pair(6);
    assert_eq!(
        c.send_prepared_with(&msg, |_| panic!("a client does not send the server frame")),
        Ok(0)
    );
    assert_ne!(c.transmit(), msg.frame());
    assert_eq!(c.transmit().len(), msg.frame().len() + 4);
    pump(&mut c, &mut s);
    assert_eq!(s.poll_message(), Ok(Some(Message::Text(&text))));
    // A server that fragments at 100 bytes: three frames.
    let settings = Settings {
        fragment_size: 100,
        ..Settings::default()
    };
    let (mut c, mut s) = pair_with(&Settings::default(), &settings, 7);
    s.send_prepared(&msg).unwrap();
    assert_eq!(s.transmit().len(), 3 * (2 + 100));
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
    // A message within the fragment size is the prepared frame.
    let small = PreparedMessage::binary(&[1, 2, 3]);
    s.send_prepared(&small).unwrap();
    assert_eq!(s.transmit(), small.frame());
}

#[cfg(feature = "deflate")]
mod deflate {
    use core::time::Duration;

    use super::*;
    use crate::ws::deflate::{DeflateConfig, Deflater};

    fn with(cfg: DeflateConfig) -> Settings {
        let mut s = Settings {
            deflate: Some(cfg),
            ..Settings::default()
        };
        s.handshake_timeout = Some(Duration::from_secs(1));
        s
    }

    fn no_takeover() -> DeflateConfig {
        DeflateConfig {
            server_no_context_takeover: true,
            ..DeflateConfig::default()
        }
    }

    /// The server compresses nothing itself: every connection gets the frame compressed
    /// once, and the clients inflate the right text, also after messages of their own
    /// stream.
    #[test]
    fn without_server_context_takeover_the_frame_compressed_once_goes_out() {
        let cfg = no_takeover();
        let text = tick(2000);
        let msg = PreparedMessage::text(&text).with_deflate(&cfg).unwrap();
        let compressed = msg.compressed_frame().unwrap();
        assert!(compressed.len() < text.len() / 2);
        for seed in 1..4 {
            let (mut c, mut s) = pair_with(&with(cfg), &with(cfg), seed);
            assert!(s.deflate().unwrap().server_no_context_takeover);
            s.send_text(&tick(500)).unwrap();
            pump(&mut s, &mut c);
            assert_eq!(c.poll_message(), Ok(Some(Message::Text(&tick(500)))));
            s.send_prepared(&msg).unwrap();
            assert_eq!(s.transmit(), compressed);
            pump(&mut s, &mut c);
            assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
            s.send_text(&text).unwrap();
            pump(&mut s, &mut c);
            assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
        }
    }

    /// With server context takeover (the default) the connection compresses with its own
    /// stream: the compressed-once frame would desynchronise the peer's window. What
    /// follows still inflates right.
    #[test]
    fn with_server_context_takeover_each_connection_compresses() {
        let cfg = DeflateConfig::default();
        let text = tick(2000);
        let msg = PreparedMessage::text(&text).with_deflate(&cfg).unwrap();
        let (mut c, mut s) = pair_with(&with(cfg), &with(cfg), 1);
        assert!(!s.deflate().unwrap().server_no_context_takeover);
        // The connection's stream has history: its frame differs from the one made once.
        s.send_text(&text).unwrap();
        pump(&mut s, &mut c);
        assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
        for _ in 0..3 {
            s.send_prepared(&msg).unwrap();
            assert_ne!(s.transmit(), msg.compressed_frame().unwrap());
            assert!(s.transmit().len() < text.len() / 2);
            pump(&mut s, &mut c);
            assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
            s.send_text(&text).unwrap();
            pump(&mut s, &mut c);
            assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
        }
    }

    /// The frame was compressed with a 15-bit window; a client that asked the server for
    /// 9 bits gets the frame only when the payload is shorter than that window.
    #[test]
    fn a_smaller_negotiated_window_takes_the_frame_only_when_the_payload_fits_it() {
        let ours = no_takeover();
        let theirs = DeflateConfig {
            server_max_window_bits: 9,
            server_no_context_takeover: true,
            ..DeflateConfig::default()
        };
        let (mut c, mut s) = pair_with(&with(theirs), &with(ours), 2);
        assert_eq!(s.deflate().unwrap().server_max_window_bits, 9);
        for len in [400, 3000] {
            let text = tick(len);
            let msg = PreparedMessage::text(&text).with_deflate(&ours).unwrap();
            s.send_prepared(&msg).unwrap();
            let same = s.transmit() == msg.compressed_frame().unwrap();
            assert_eq!(same, len <= 512, "{len}");
            pump(&mut s, &mut c);
            assert_eq!(c.poll_message(), Ok(Some(Message::Text(&text))));
        }
    }

    /// Below the connection's threshold the plain frame goes out; without compression
    /// negotiated too.
    #[test]
    fn below_the_threshold_or_without_compression_the_plain_frame_goes_out() {
        let cfg = no_takeover();
        let short = PreparedMessage::binary(&[5; 20])
            .with_deflate(&cfg)
            .unwrap();
        let (mut c, mut s) = pair_with(&with(cfg), &with(cfg), 3);
        s.send_prepared(&short).unwrap();
        assert_eq!(s.transmit(), short.frame());
        pump(&mut s, &mut c);
        assert_eq!(c.poll_message(), Ok(Some(Message::Binary(&[5; 20]))));
        let long = PreparedMessage::text(&tick(1000))
            .with_deflate(&cfg)
            .unwrap();
        let (mut c, mut s) = pair_with(&Settings::default(), &with(cfg), 4);
        assert_eq!(s.deflate(), None);
        s.send_prepared(&long).unwrap();
        assert_eq!(s.transmit(), long.frame());
        pump(&mut s, &mut c);
        assert_eq!(c.poll_message(), Ok(Some(Message::Text(&tick(1000)))));
        // The compressed frame is the payload as one stream compresses it, reset.
        let mut z = Deflater::new(15, true, cfg.level, 0);
        let mut payload = Vec::new();
        z.compress(long.payload(), &mut payload).unwrap();
        assert!(long.compressed_frame().unwrap().ends_with(&payload));
    }

    /// A payload that compressing does not make smaller keeps only its plain frame:
    /// every connection sends it as it is, with or without server context takeover,
    /// and the connection's own stream goes on in step with the peer's.
    #[test]
    fn an_incompressible_prepared_message_goes_out_plain_everywhere() {
        let mut x = 0x9e37_79b9u32;
        let noise: Vec<u8> = (0..3000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for cfg in [no_takeover(), DeflateConfig::default()] {
            let msg = PreparedMessage::binary(&noise).with_deflate(&cfg).unwrap();
            assert_eq!(msg.compressed_frame(), None);
            let (mut c, mut s) = pair_with(&with(cfg), &with(cfg), 5);
            for _ in 0..2 {
                s.send_prepared(&msg).unwrap();
                assert_eq!(s.transmit(), msg.frame());
                pump(&mut s, &mut c);
                assert_eq!(c.poll_message(), Ok(Some(Message::Binary(&noise))));
                s.send_text(&tick(2000)).unwrap();
                assert!(s.transmit().len() < 1000);
                pump(&mut s, &mut c);
                assert_eq!(c.poll_message(), Ok(Some(Message::Text(&tick(2000)))));
            }
        }
    }
}
