//! Tests of the permessage-deflate streams and of compressed frames through
//! the reader and writer.

use std::vec;
use std::vec::Vec;

use super::*;
use crate::rand::MaskSource;
use crate::ws::{Config, Error, FrameReader, FrameWriter, Message, Role};

/// A JSON-like message `i`, repetitive as market data is.
fn json(i: usize) -> Vec<u8> {
    std::format!(
        "{{\"e\":\"trade\",\"s\":\"BTCUSDT\",\"t\":{},\"p\":\"{}.{:02}\",\"q\":\"0.{:04}\",\"m\":{}}}",
        1_000_000 + i,
        60_000 + i % 97,
        i % 100,
        (i * 37) % 10_000,
        i.is_multiple_of(2)
    )
    .into_bytes()
}

/// Bytes from a xorshift stream (incompressible).
fn noise(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// Messages of every kind a round trip should survive.
fn messages() -> Vec<Vec<u8>> {
    let mut m: Vec<Vec<u8>> = (0..20).map(json).collect();
    m.push(Vec::new());
    m.push(vec![b'a'; 70_000]);
    m.push(noise(3000, 7));
    m.push(json(3).repeat(50));
    m.push(noise(100, 9));
    m.extend((20..30).map(json));
    m
}

/// A payload that inflates to `mib` MiB of zeros from about 1 KiB per MiB: the first
/// MiB compressed, then the second (which refers back into zeros only) repeated, each
/// message's tail put back between them (one DEFLATE stream). Compressing that much
/// would take seconds in a debug build; this takes two MiB.
pub(crate) fn zeros_bomb(mib: usize) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    let mut z = Deflater::new(15, false, 9, 0);
    let (mut first, mut next) = (Vec::new(), Vec::new());
    z.compress(&zeros, &mut first).unwrap();
    z.compress(&zeros, &mut next).unwrap();
    let mut payload = first;
    for _ in 1..mib {
        payload.extend_from_slice(&TAIL);
        payload.extend_from_slice(&next);
    }
    payload
}

fn inflate_all(inf: &mut Inflater, payload: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    inf.inflate(payload, &mut out, 1 << 20)?;
    Ok(out)
}

#[test]
fn rfc7692_examples() {
    // §7.2.3.1: "Hello" in one compressed message.
    let hello = [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
    let mut inf = Inflater::new(15, false);
    assert_eq!(inflate_all(&mut inf, &hello).unwrap(), b"Hello");
    // §7.2.3.2: the same again, now a back-reference into the shared window.
    assert_eq!(
        inflate_all(&mut inf, &[0xf2, 0x00, 0x11, 0x00, 0x00]).unwrap(),
        b"Hello"
    );
    // Without context takeover the second message is the first one's bytes again.
    let mut inf = Inflater::new(15, true);
    assert_eq!(inflate_all(&mut inf, &hello).unwrap(), b"Hello");
    assert_eq!(inflate_all(&mut inf, &hello).unwrap(), b"Hello");
    // ... and a back-reference to the previous message is invalid.
    assert_eq!(
        inflate_all(&mut inf, &[0xf2, 0x00, 0x11, 0x00, 0x00]),
        Err(Error::InvalidCompressedData)
    );
    // §7.2.3.3: a stored block.
    let stored = [
        0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
    ];
    assert_eq!(
        inflate_all(&mut Inflater::new(15, false), &stored).unwrap(),
        b"Hello"
    );
    // §7.2.3.4: a block with BFINAL set, then an empty block's header; the
    // stream goes on (context carried over) with the next message.
    let bfinal = [0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00];
    let mut inf = Inflater::new(15, false);
    assert_eq!(inflate_all(&mut inf, &bfinal).unwrap(), b"Hello");
    assert_eq!(inflate_all(&mut inf, &hello).unwrap(), b"Hello");
    assert_eq!(
        inflate_all(&mut inf, &[0xf2, 0x00, 0x11, 0x00, 0x00]).unwrap(),
        b"Hello"
    );
    // §7.2.3.5: two DEFLATE blocks in one message.
    let two = [
        0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00,
    ];
    assert_eq!(
        inflate_all(&mut Inflater::new(15, false), &two).unwrap(),
        b"Hello"
    );
    // §7.2.3.6: an empty message compresses to one 0x00 byte.
    assert_eq!(
        inflate_all(&mut Inflater::new(15, false), &[0x00]).unwrap(),
        b""
    );
    let mut def = Deflater::new(15, false, 6, 0);
    let mut out = Vec::new();
    def.compress(b"", &mut out).unwrap();
    assert_eq!(out, [0x00]);
    // And "Hello" compresses as §7.2.3.1 shows.
    let mut out = Vec::new();
    def.compress(b"Hello", &mut out).unwrap();
    assert_eq!(out, hello);
}

/// Every window size and both takeover settings: what a Deflater makes, an
/// Inflater with exactly the agreed window inflates back (8 bits included,
/// which compresses with 9), message after message; with context takeover a
/// repeated message compresses to less than without.
#[test]
fn round_trips_every_window_and_takeover() {
    let msgs = messages();
    for bits in 8..=15u8 {
        for nct in [false, true] {
            let mut def = Deflater::new(bits, nct, 6, 0);
            let mut inf = Inflater::new(bits, nct);
            for (i, m) in msgs.iter().enumerate() {
                let mut c = Vec::new();
                def.compress(m, &mut c).unwrap();
                assert!(!c.ends_with(&TAIL) || c.len() < 4, "tail kept");
                let back = inflate_all(&mut inf, &c)
                    .unwrap_or_else(|e| panic!("bits {bits} nct {nct} msg {i}: {e}"));
                assert_eq!(back, *m, "bits {bits} nct {nct} msg {i}");
            }
            // The same message twice: with takeover the second is a reference.
            let m = json(1).repeat(3);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            def.compress(&m, &mut a).unwrap();
            def.compress(&m, &mut b).unwrap();
            if nct {
                assert_eq!(a.len(), b.len(), "bits {bits}");
            } else {
                assert!(
                    b.len() * 4 < a.len(),
                    "bits {bits}: {} vs {}",
                    b.len(),
                    a.len()
                );
            }
            assert_eq!(inflate_all(&mut inf, &a).unwrap(), m);
            assert_eq!(inflate_all(&mut inf, &b).unwrap(), m);
        }
    }
}

/// A window-8 stream (compressed with 9 bits) inflates with 8 bits, context
/// carried across messages. (Inside one
/// message zlib's inflate finds earlier bytes in its output whatever the
/// window, so the check is a message repeated in the next one: the repeat's
/// matches reach back `period` bytes, into the window.)
#[test]
fn window_8_streams_fit_a_256_byte_window() {
    let run = |deflate_bits: u8, period: usize| {
        let mut def = Deflater::new(deflate_bits, false, 9, 0);
        let mut inf = Inflater::new(8, false);
        let unit = noise(period, period as u32);
        for _ in 0..3 {
            let mut c = Vec::new();
            def.compress(&unit, &mut c).unwrap();
            match inflate_all(&mut inf, &c) {
                Ok(back) => assert_eq!(back, unit),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    };
    for period in 200..=300 {
        assert_eq!(run(8, period), Ok(()), "period {period}");
    }
    // zlib-rs's inflater is no strict judge of the window (it also takes a
    // 10-bit stream's 260-byte matches with 8 bits); C zlib is, and
    // conformance/tests/deflate_python.rs checks these streams with it.
    assert_eq!(run(10, 260), Ok(()));
}

#[test]
fn levels_and_threshold() {
    let m = json(5).repeat(20);
    for level in 0..=9 {
        let mut def = Deflater::new(15, false, level, 0);
        let mut c = Vec::new();
        def.compress(&m, &mut c).unwrap();
        assert_eq!(inflate_all(&mut Inflater::new(15, false), &c).unwrap(), m);
        if level > 0 {
            assert!(c.len() < m.len() / 4, "level {level}: {}", c.len());
        }
    }
    let def = Deflater::new(15, false, 6, 64);
    assert!(!def.should_compress(63));
    assert!(def.should_compress(64));
}

/// `compress_into` with exactly `max_compressed_len` never runs out of room,
/// on incompressible data of every length up to 2 KiB and some larger ones,
/// and gives what `compress` gives.
#[test]
fn compress_into_bound_holds() {
    let mut lens: Vec<usize> = (0..2048)
        .step_by(if cfg!(miri) { 409 } else { 3 })
        .collect();
    lens.extend([65_535, 65_536, 200_000]);
    for (level, nct) in [(0, false), (1, false), (1, true), (6, false), (9, true)] {
        let mut a = Deflater::new(15, nct, level, 0);
        let mut b = Deflater::new(15, nct, level, 0);
        for &len in &lens {
            let m = noise(len, len as u32 + 1);
            let mut out = vec![0u8; Deflater::max_compressed_len(len)];
            let n = a.compress_into(&m, &mut out).unwrap();
            let mut v = Vec::new();
            b.compress(&m, &mut v).unwrap();
            assert_eq!(out[..n], v[..], "level {level} len {len}");
        }
    }
    let mut d = Deflater::new(15, false, 6, 0);
    let mut small = [0u8; 19];
    assert_eq!(
        d.compress_into(&[1; 8], &mut small),
        Err(crate::ws::EncodeError::BufferFull)
    );
}

/// A decompression bomb stops at the limit with `MessageTooLarge`, in both
/// forms, and the Vec's capacity never passes the limit.
#[test]
fn bombs_are_bounded() {
    let mut def = Deflater::new(15, false, 9, 0);
    let mut bomb = Vec::new();
    def.compress(&vec![0u8; 4 << 20], &mut bomb).unwrap();
    assert!(bomb.len() < 8 << 10, "{}", bomb.len());
    for max in [0, 1, 1000, 4096, 65_536, (4 << 20) - 1] {
        let mut inf = Inflater::new(15, false);
        let mut out = Vec::new();
        assert_eq!(
            inf.inflate(&bomb, &mut out, max),
            Err(Error::MessageTooLarge),
            "max {max}"
        );
        assert!(
            out.capacity() <= max.max(1) && out.len() <= max,
            "max {max}"
        );
        if max <= 65_536 {
            let mut buf = vec![0u8; max];
            assert_eq!(
                inf.inflate_into(&bomb, &mut buf),
                Err(Error::MessageTooLarge)
            );
        }
    }
    // Exactly at the limit is fine, in both forms.
    let mut inf = Inflater::new(15, false);
    let mut out = Vec::new();
    assert_eq!(inf.inflate(&bomb, &mut out, 4 << 20), Ok(4 << 20));
    let mut inf = Inflater::new(15, false);
    let mut buf = vec![1u8; 4 << 20];
    assert_eq!(inf.inflate_into(&bomb, &mut buf), Ok(4 << 20));
    assert!(buf.iter().all(|&b| b == 0));
}

#[test]
fn invalid_data_and_text() {
    let mut inf = Inflater::new(15, false);
    // BTYPE 11 is reserved.
    assert_eq!(
        inflate_all(&mut inf, &[0xff, 0xff, 0xff]),
        Err(Error::InvalidCompressedData)
    );
    // A stored block whose LEN and NLEN disagree.
    assert_eq!(
        inflate_all(&mut inf, &[0x00, 0x05, 0x00, 0x00, 0x00]),
        Err(Error::InvalidCompressedData)
    );
    assert_eq!(Error::InvalidCompressedData.close_code().0, 1002);
    assert_eq!(Error::MessageTooLarge.close_code().0, 1009);
    // After an error the stream was reset: it works again.
    let hello = [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
    assert_eq!(inflate_all(&mut inf, &hello).unwrap(), b"Hello");
    // Text is checked after inflating.
    let mut def = Deflater::new(15, false, 6, 0);
    let mut c = Vec::new();
    def.compress(b"ok \xce\xbb then \xff", &mut c).unwrap();
    let mut inf = Inflater::new(15, false);
    let mut out = Vec::new();
    assert_eq!(inf.inflate_text(&c, &mut out, 100), Err(Error::InvalidUtf8));
    assert_eq!(Error::InvalidUtf8.close_code().0, 1007);
    assert_eq!(check_utf8("λ".as_bytes()), Ok("λ"));
    // Truncated input: no error, no more output than there is.
    let mut c = Vec::new();
    def.compress(&json(1).repeat(10), &mut c).unwrap();
    let mut inf = Inflater::new(15, true);
    let r = inflate_all(&mut inf, &c[..c.len() / 2]);
    assert!(
        matches!(r, Ok(_) | Err(Error::InvalidCompressedData)),
        "{r:?}"
    );
}

/// Fixed masking keys for a client writer.
#[derive(Debug)]
struct Keys(u32);

impl MaskSource for Keys {
    fn next_key(&mut self) -> [u8; 4] {
        self.0 = self.0.wrapping_mul(0x9E37_79B9).wrapping_add(1);
        self.0.to_le_bytes()
    }
}

fn config(rsv: u8) -> Config {
    Config {
        allowed_rsv: rsv,
        ..Config::default()
    }
}

/// Writer → reader → inflater, both roles, fragmented or not, with plain
/// messages and control frames between: every message comes back, the
/// compressed ones through `compressed()`, the plain ones on the fast path.
#[test]
fn compressed_messages_through_reader_and_writer() {
    let n = Negotiated::new(10, 9, false, true);
    for sender in [Role::Client, Role::Server] {
        let receiver = match sender {
            Role::Client => Role::Server,
            Role::Server => Role::Client,
        };
        for fragment in [0, 7, 100] {
            let cfg = DeflateConfig {
                threshold: 40,
                ..DeflateConfig::default()
            };
            let mut def = Deflater::for_role(&n, sender, &cfg);
            let mut inf = Inflater::for_role(&n, receiver);
            assert_eq!(def.window_bits(), inf.window_bits());
            let (wire, sent) = match sender {
                Role::Client => write_script(
                    FrameWriter::client(Keys(3)).with_fragment_size(fragment),
                    &mut def,
                ),
                Role::Server => {
                    write_script(FrameWriter::server().with_fragment_size(fragment), &mut def)
                }
            };
            let mut r = FrameReader::with_config(receiver, vec![0u8; 8192], config(RSV1));
            assert_eq!(r.feed(&wire), wire.len());
            for (i, (text, m)) in sent.iter().enumerate() {
                assert_eq!(r.advance(), Ok(true));
                let got = r.message().unwrap();
                let back = match r.compressed() {
                    Some(c) => {
                        assert_eq!((c.text, c.rsv), (*text, RSV1), "msg {i}");
                        assert_eq!(got, Message::Binary(c.payload));
                        let mut out = Vec::new();
                        if c.text {
                            inf.inflate_text(c.payload, &mut out, 1 << 16).unwrap();
                        } else {
                            inf.inflate(c.payload, &mut out, 1 << 16).unwrap();
                        }
                        out
                    }
                    None => {
                        assert_eq!(r.last_rsv(), 0);
                        match got {
                            Message::Text(t) => {
                                assert!(*text);
                                t.as_bytes().to_vec()
                            }
                            Message::Binary(b) => {
                                assert!(!*text);
                                b.to_vec()
                            }
                            other => panic!("{other:?}"),
                        }
                    }
                };
                assert_eq!(back, *m, "{sender:?} fragment {fragment} msg {i}");
                assert_eq!(r.next(), Ok(Some(Message::Ping(b"p"))));
            }
            assert_eq!(r.next(), Ok(None));
        }
    }
}

/// Twelve messages (plain and compressed, text and binary, a ping after each) as `w`
/// writes them: the wire bytes and what was sent.
#[allow(clippy::type_complexity)]
fn write_script<M: crate::ws::Masking>(
    mut w: FrameWriter<M>,
    def: &mut Deflater,
) -> (Vec<u8>, Vec<(bool, Vec<u8>)>) {
    let mut wire = Vec::new();
    let mut sent: Vec<(bool, Vec<u8>)> = Vec::new();
    for i in 0..12 {
        let text = i % 3 != 0;
        let m = if i % 4 == 1 {
            b"short".to_vec()
        } else {
            json(i)
        };
        let mut out = vec![0u8; 4096];
        let len = if def.should_compress(m.len()) {
            let mut c = Vec::new();
            def.compress(&m, &mut c).unwrap();
            w.encode_compressed(text, &c, &mut out).unwrap()
        } else if text {
            w.encode_text(core::str::from_utf8(&m).unwrap(), &mut out)
                .unwrap()
        } else {
            w.encode_binary(&m, &mut out).unwrap()
        };
        wire.extend_from_slice(&out[..len]);
        let len = w.encode_ping(b"p", &mut out).unwrap();
        wire.extend_from_slice(&out[..len]);
        sent.push((text, m));
    }
    (wire, sent)
}

/// RSV1 where RFC 7692 §6 forbids it, or when it was not negotiated, is a
/// protocol error (close 1002); raw compressed text is not UTF-8 checked.
#[test]
fn rsv1_rules_in_the_reader() {
    type Case = (&'static [u8], u8, Result<Option<Message<'static>>, Error>);
    let cases: &[Case] = &[
        // Not negotiated.
        (&[0xC1, 0x01, 0x00], 0, Err(Error::ReservedBits)),
        // On a continuation frame.
        (
            &[0x41, 0x01, 0x00, 0xC0, 0x01, 0x00],
            RSV1,
            Err(Error::ReservedBits),
        ),
        (
            &[0x01, 0x01, 0x00, 0xC0, 0x01, 0x00],
            RSV1,
            Err(Error::ReservedBits),
        ),
        // On control frames.
        (&[0xC9, 0x00], RSV1, Err(Error::ReservedBits)),
        (&[0xCA, 0x00], RSV1, Err(Error::ReservedBits)),
        (&[0xC8, 0x00], RSV1, Err(Error::ReservedBits)),
        // RSV2 when only RSV1 is allowed.
        (&[0xA1, 0x00], RSV1, Err(Error::ReservedBits)),
        // Compressed "text" that is not UTF-8 as it stands: fine here.
        (
            &[0xC1, 0x02, 0xff, 0xfe],
            RSV1,
            Ok(Some(Message::Binary(&[0xff, 0xfe]))),
        ),
    ];
    for (i, (wire, rsv, want)) in cases.iter().enumerate() {
        let mut r = FrameReader::with_config(Role::Client, vec![0u8; 1024], config(*rsv));
        r.feed(wire);
        let mut got = r.next();
        if matches!(got, Ok(Some(_))) && wire.len() > 4 {
            got = r.next();
        }
        assert_eq!(got, *want, "case {i}");
    }
    // The close code of those errors.
    assert_eq!(Error::ReservedBits.close_code().0, 1002);
}

/// Both handshakes with permessage-deflate: the client's offer, the
/// server's choice and answer, the client's check; and the refusals.
#[test]
fn handshakes_negotiate() {
    use crate::ws::handshake::{
        ClientHandshake, HandshakeError, accept_key, parse_request, write_accept_deflate,
    };
    let client_cfg = DeflateConfig {
        client_max_window_bits: 12,
        client_no_context_takeover: true,
        ..DeflateConfig::default()
    };
    let server_cfg = DeflateConfig {
        client_max_window_bits: 10,
        server_max_window_bits: 11,
        ..DeflateConfig::default()
    };
    let hs = ClientHandshake::new("h", "/", [7; 16]).deflate(client_cfg);
    let mut req = [0u8; 512];
    let n = hs.encode(&mut req).unwrap();
    let text = core::str::from_utf8(&req[..n]).unwrap();
    assert!(
        text.contains(
            "\r\nSec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; \
             client_max_window_bits=12\r\n"
        ),
        "{text}"
    );
    let req_bytes = req[..n].to_vec();
    let parsed = parse_request(&req_bytes).unwrap().unwrap();
    let chosen = parsed.deflate(&server_cfg).unwrap();
    assert_eq!(chosen, Negotiated::new(10, 11, true, false));
    let mut resp = [0u8; 512];
    let m = write_accept_deflate(&parsed, None, Some(&chosen), &[], &mut resp).unwrap();
    let text = core::str::from_utf8(&resp[..m]).unwrap();
    assert!(
        text.contains(
            "\r\nSec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; \
             client_max_window_bits=10; server_max_window_bits=11\r\n"
        ),
        "{text}"
    );
    let got = hs.check_response(&resp[..m]).unwrap().unwrap().deflate();
    assert_eq!(got, Some(chosen));
    // Declined: no header, no compression.
    let m = write_accept_deflate(&parsed, None, None, &[], &mut resp).unwrap();
    assert_eq!(
        hs.check_response(&resp[..m]).unwrap().unwrap().deflate(),
        None
    );
    // The server may not be told twice, nor the client.
    assert_eq!(
        write_accept_deflate(
            &parsed,
            None,
            Some(&chosen),
            &[("Sec-WebSocket-Extensions", "x")],
            &mut resp
        ),
        Err(HandshakeError::InvalidHeader)
    );
    let twice = [("sec-websocket-extensions", "x")];
    assert_eq!(
        hs.headers(&twice).encode(&mut req),
        Err(HandshakeError::InvalidHeader)
    );
    // Answers the client did not offer, or invalid ones, fail the handshake.
    let accept = accept_key(hs.key());
    let accept = core::str::from_utf8(&accept).unwrap();
    for bad in [
        "permessage-deflate; client_max_window_bits=13",
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; bogus",
        "permessage-deflate, permessage-deflate",
        "x-webkit-deflate-frame",
    ] {
        let r = std::format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Extensions: {bad}\r\n\r\n"
        );
        assert_eq!(
            hs.check_response(r.as_bytes()),
            Err(HandshakeError::ExtensionMismatch),
            "{bad}"
        );
    }
    // A client that did not offer it still refuses an answer with it.
    let plain = ClientHandshake::new("h", "/", [7; 16]);
    let accept = accept_key(plain.key());
    let r = std::format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
        core::str::from_utf8(&accept).unwrap()
    );
    assert_eq!(
        plain.check_response(r.as_bytes()),
        Err(HandshakeError::ExtensionMismatch)
    );
    // A server without a config, or a request without an offer: nothing chosen.
    let plain_req = {
        let n = plain.encode(&mut req).unwrap();
        req[..n].to_vec()
    };
    let p = parse_request(&plain_req).unwrap().unwrap();
    assert_eq!(p.deflate(&server_cfg), None);
}
