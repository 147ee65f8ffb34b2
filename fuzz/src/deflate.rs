//! The compressed read path (permessage-deflate): a FrameReader that allows RSV1 and an
//! Inflater with random negotiated parameters, over random frames and random DEFLATE data;
//! plus the negotiation parsers over random header values.
//!
//! Input: [`DEFLATE_SETUP_LEN`] setup bytes, then either wire bytes (mode 0: random RSV1
//! frames and random deflate streams) or messages to send (mode 1: compressed by a Deflater
//! with the same parameters, framed with RSV1, and read back), or header values (mode 2).

use tickwire_codec::ws::deflate::{DeflateConfig, Deflater, Inflater, Negotiated, RSV1};
use tickwire_codec::ws::{Config, Error, FrameReader, Message, Role};

use crate::writer::PeerWriter;
use crate::{Chunks, SeededKeys};

/// Bytes of setup at the start of an input.
pub const DEFLATE_SETUP_LEN: usize = 6;

/// Parameters decoded from the setup block.
#[derive(Debug, Clone, Copy)]
pub struct DeflateSetup {
    /// Role of the reading endpoint.
    pub role: Role,
    /// What was negotiated.
    pub negotiated: Negotiated,
    /// Largest inflated message.
    pub max_inflated: usize,
    /// Chunk seed for feeding.
    pub chunk_seed: u8,
    /// 0: wire bytes; 1: messages to send; 2: header values.
    pub mode: u8,
    /// Fragment size for mode 1 (0: whole).
    pub fragment: usize,
}

impl DeflateSetup {
    /// byte 0: bit 0 role, bit 1 client_no_context_takeover, bit 2 server_no_context_takeover,
    /// bits 3..=5 client window minus 8, bits 6..=7 mode (3 is 0); byte 1: bits 0..=2 server
    /// window minus 8, bits 3..=7 fragment size; bytes 2-3: inflated limit (u16 LE); byte 4:
    /// chunk seed; byte 5: reserved (key seed).
    pub fn decode(input: &[u8]) -> Option<(DeflateSetup, &[u8])> {
        let (h, rest) = input.split_at_checked(DEFLATE_SETUP_LEN)?;
        let negotiated = Negotiated::new(
            8 + ((h[0] >> 3) & 7),
            8 + (h[1] & 7),
            h[0] & 2 != 0,
            h[0] & 4 != 0,
        );
        let setup = DeflateSetup {
            role: if h[0] & 1 == 0 {
                Role::Client
            } else {
                Role::Server
            },
            negotiated,
            max_inflated: usize::from(u16::from_le_bytes([h[2], h[3]])),
            chunk_seed: h[4],
            mode: (h[0] >> 6) % 3,
            fragment: usize::from(h[1] >> 3),
        };
        Some((setup, rest))
    }
}

/// What one run produced: each message as (text, payload), or the error that ended it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeflateRun {
    /// Messages in order (inflated when they were compressed).
    pub messages: Vec<(bool, Vec<u8>)>,
    /// The error that ended the run, if any.
    pub error: Option<Error>,
}

/// Read `wire` as the `setup.role` endpoint, inflating compressed messages; checks that
/// errors are the ones this path may give and that inflated messages respect the limit
/// and (text) are UTF-8.
pub fn run_compressed(setup: &DeflateSetup, wire: &[u8], chunks: Chunks) -> DeflateRun {
    let config = Config {
        allowed_rsv: RSV1,
        ..Config::default()
    };
    let mut reader = FrameReader::with_config(setup.role, vec![0u8; 1 << 16], config);
    let mut inflater = Inflater::for_role(&setup.negotiated, setup.role);
    let mut sizes = chunks.sizes();
    let mut messages = Vec::new();
    let mut fed = 0;
    loop {
        loop {
            match reader.advance() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    return DeflateRun {
                        messages,
                        error: Some(e),
                    };
                }
            }
            if let Some(c) = reader.compressed() {
                assert_eq!(c.rsv, RSV1, "RSV bits other than RSV1");
                let mut out = Vec::new();
                let r = if c.text {
                    inflater.inflate_text(c.payload, &mut out, setup.max_inflated)
                } else {
                    inflater.inflate(c.payload, &mut out, setup.max_inflated)
                };
                assert!(out.len() <= setup.max_inflated, "inflated past the limit");
                assert!(
                    out.capacity() <= setup.max_inflated.max(1),
                    "memory grew past the limit"
                );
                match r {
                    Ok(n) => assert_eq!(n, out.len()),
                    Err(e) => {
                        assert!(
                            matches!(
                                e,
                                Error::InvalidCompressedData
                                    | Error::MessageTooLarge
                                    | Error::InvalidUtf8
                            ),
                            "{e:?} from the inflater"
                        );
                        if e == Error::InvalidUtf8 {
                            assert!(c.text && core::str::from_utf8(&out).is_err());
                        }
                        return DeflateRun {
                            messages,
                            error: Some(e),
                        };
                    }
                }
                if c.text {
                    assert!(
                        core::str::from_utf8(&out).is_ok(),
                        "inflated text not UTF-8"
                    );
                }
                messages.push((c.text, out));
            } else {
                match reader.message() {
                    Some(Message::Text(t)) => messages.push((true, t.as_bytes().to_vec())),
                    Some(Message::Binary(b)) => messages.push((false, b.to_vec())),
                    Some(m) => messages.push((false, format!("{m:?}").into_bytes())),
                    None => panic!("advance gave a message that message() does not"),
                }
            }
        }
        if fed == wire.len() {
            return DeflateRun {
                messages,
                error: None,
            };
        }
        let want = sizes().min(wire.len() - fed);
        let n = reader.feed(&wire[fed..fed + want]);
        assert!(n > 0, "reader stalled");
        fed += n;
    }
}

/// The whole check for one input.
pub fn check_deflate(input: &[u8]) {
    let Some((setup, data)) = DeflateSetup::decode(input) else {
        return;
    };
    match setup.mode {
        0 => {
            let whole = run_compressed(&setup, data, Chunks::Whole);
            let chunked = run_compressed(&setup, data, Chunks::Seeded(setup.chunk_seed));
            assert_eq!(whole, chunked, "whole vs chunked feeding differ");
        }
        1 => round_trip(&setup, data),
        _ => headers(data),
    }
}

/// Messages cut from `data` (first byte of each: length, kind), compressed by the peer's
/// Deflater, framed, read back and inflated: the same messages come out.
fn round_trip(setup: &DeflateSetup, mut data: &[u8]) {
    let sender = match setup.role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    };
    let config = DeflateConfig {
        threshold: 4,
        level: setup.chunk_seed % 10,
        ..DeflateConfig::default()
    };
    let mut deflater = Deflater::for_role(&setup.negotiated, sender, &config);
    let mut writer = PeerWriter::new(
        sender,
        SeededKeys(u32::from(setup.chunk_seed)),
        setup.fragment,
    );
    let mut wire = Vec::new();
    let mut sent = Vec::new();
    while let Some((&b, rest)) = data.split_first() {
        let len = usize::from(b >> 1).min(rest.len());
        let (m, rest) = rest.split_at(len);
        data = rest;
        // Text only when it is UTF-8 (the writer's text API takes &str).
        let text = b & 1 == 1 && core::str::from_utf8(m).is_ok();
        let mut out = vec![0u8; writer.message_len(Deflater::max_compressed_len(m.len())) + 16];
        let n = if deflater.should_compress(m.len()) {
            let mut c = Vec::new();
            deflater.compress(m, &mut c).expect("compress");
            writer.encode_compressed(text, &c, &mut out)
        } else if text {
            writer.encode_text(core::str::from_utf8(m).unwrap_or(""), &mut out)
        } else {
            writer.encode_binary(m, &mut out)
        }
        .expect("encode");
        wire.extend_from_slice(&out[..n]);
        sent.push((text, m.to_vec()));
    }
    let setup = DeflateSetup {
        max_inflated: 1 << 16,
        ..*setup
    };
    let got = run_compressed(&setup, &wire, Chunks::Seeded(setup.chunk_seed));
    assert_eq!(got.error, None);
    assert_eq!(got.messages, sent, "round trip changed the messages");
}

/// Random header values: the server's choice and the client's check never panic; a
/// client offer the server accepts is answered with something that client accepts, with
/// the same parameters.
fn headers(data: &[u8]) {
    let (cfg_bytes, header) = data.split_at(data.len().min(4));
    let byte = |i: usize| cfg_bytes.get(i).copied().unwrap_or(0);
    let client = DeflateConfig {
        client_max_window_bits: byte(0) & 15,
        server_max_window_bits: byte(0) >> 4,
        client_no_context_takeover: byte(2) & 1 != 0,
        server_no_context_takeover: byte(2) & 2 != 0,
        ..DeflateConfig::default()
    };
    let server = DeflateConfig {
        client_max_window_bits: byte(1) & 15,
        server_max_window_bits: byte(1) >> 4,
        client_no_context_takeover: byte(3) & 1 != 0,
        server_no_context_takeover: byte(3) & 2 != 0,
        ..DeflateConfig::default()
    };
    // Arbitrary bytes as an offer and as an answer.
    if let Some(n) = server.accept([header]) {
        let answer = n.response();
        // Our own answer parses as a valid response for a client that offered anything.
        let lenient = DeflateConfig::default();
        let _ = lenient.check_response([answer.as_bytes()]);
    }
    let _ = client.check_response([header]);
    // A real offer, a real answer.
    let offer = client.offer();
    let chosen = server
        .accept([offer.as_bytes()])
        .expect("our own offer is acceptable");
    let answer = chosen.response();
    let agreed = client
        .check_response([answer.as_bytes()])
        .expect("our own answer is valid")
        .expect("an answer");
    assert!(agreed.client_max_window_bits <= chosen.client_max_window_bits);
    assert_eq!(agreed.server_max_window_bits, chosen.server_max_window_bits);
    assert_eq!(
        agreed.server_no_context_takeover,
        chosen.server_no_context_takeover
    );
    assert_eq!(
        agreed.client_no_context_takeover,
        chosen.client_no_context_takeover
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed seeds, and pseudo-random mutations of them, pass the checks (a smoke
    /// test of the harness on stable; the fuzzer proper runs under `cargo xtask fuzz`).
    #[test]
    fn seeds_and_mutations() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/ws_deflate");
        let seeds: Vec<Vec<u8>> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        assert!(seeds.len() >= 4);
        let mut x = 0x1234_5678u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for seed in &seeds {
            check_deflate(seed);
            for _ in 0..2000 {
                let mut m = seed.clone();
                for _ in 0..1 + next() % 4 {
                    let i = next() as usize % m.len();
                    m[i] = next() as u8;
                }
                check_deflate(&m);
            }
        }
    }
}
