//! permessage-deflate scenarios (codec feature `deflate`): what compression
//! costs beside the uncompressed parse and encode rows of the same JSON-like
//! texts (128 B and 2 KiB).
//!
//! - inflate: B compressed text frames (RSV1, client role, context takeover)
//!   back to back: feed them into the reader, parse, inflate each into one
//!   reused `Vec` and UTF-8 check it. A batch replays the same frames, so its
//!   untimed prep starts a fresh inflate stream (the frames were compressed
//!   by one stream from its start).
//! - deflate: compress each of B texts with one stream (context takeover)
//!   into a reused `Vec`, then frame it (server role) into a caller slice.
//!
//! No peer of the codec rows speaks permessage-deflate (tungstenite 0.30 and
//! fastwebsockets 0.10 have none), so these rows stand alone; compare them
//! with "ws parse text" and "ws encode text" of the same size.

use std::hint::black_box;

use tickwire_codec::ws::deflate::{DeflateConfig, Deflater, Inflater, RSV1};
use tickwire_codec::ws::{Config, FrameReader, FrameWriter, Message, Role};

use super::{Case, Inputs};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::{touch, unexpected};

const NOTE_INFLATE: &str = "feed B RSV1 text frames into the reader, parse, Inflater::inflate_text each into a reused Vec \
                            (window 15, context takeover; default level 1 on the sender); a fresh stream per batch (untimed)";
const NOTE_DEFLATE: &str = "Deflater::compress each text into a reused Vec (default level 1, window 15, context takeover), then \
                            FrameWriter::encode_compressed (server) into a caller slice";

/// Scenario names.
fn inflate_name(n: usize) -> String {
    format!("ws inflate text {n}B (permessage-deflate, client role)")
}

fn deflate_name(n: usize) -> String {
    format!("ws deflate text {n}B (permessage-deflate, server role)")
}

/// Compression level of both rows: the codec's default.
fn level() -> u8 {
    DeflateConfig::default().level
}

pub(super) fn cases<'a>(inputs: &'a Inputs, v: &mut Vec<Case<'a>>) {
    let n = inputs.payload;
    v.push(Case::new(
        inflate_name(n),
        "tickwire",
        true,
        NOTE_INFLATE,
        move |cfg| inflate(cfg, inputs),
    ));
    v.push(Case::new(
        deflate_name(n),
        "tickwire",
        true,
        NOTE_DEFLATE,
        move |cfg| deflate(cfg, inputs),
    ));
}

/// The texts compressed by one stream and framed as a server sends them.
fn compressed_frames(inputs: &Inputs) -> Vec<u8> {
    let mut def = Deflater::new(15, false, level(), 0);
    let mut w = FrameWriter::server();
    let mut wire = Vec::new();
    let mut c = Vec::new();
    let mut out = vec![0u8; inputs.payload * 2 + 64];
    for t in &inputs.texts {
        c.clear();
        def.compress(t.as_bytes(), &mut c).expect("compress");
        let len = w.encode_compressed(true, &c, &mut out).expect("frame");
        wire.extend_from_slice(&out[..len]);
    }
    wire
}

struct InflateState {
    reader: FrameReader<Vec<u8>>,
    inflater: Inflater,
    out: Vec<u8>,
}

fn inflate(cfg: &RunConfig, inputs: &Inputs) -> Measurement {
    let cfg = &RunConfig {
        batch: inputs.texts.len(),
        ..*cfg
    };
    let wire = compressed_frames(inputs);
    let config = Config {
        allowed_rsv: RSV1,
        ..Config::default()
    };
    let cap = (1 << 20).max(2 * wire.len() + 4096);
    let mut st = InflateState {
        reader: FrameReader::with_config(Role::Client, vec![0u8; cap], config),
        inflater: Inflater::new(15, false),
        out: Vec::with_capacity(inputs.payload * 2),
    };
    // Verify once.
    assert_eq!(st.reader.feed(&wire), wire.len());
    for want in &inputs.texts {
        assert!(matches!(st.reader.advance(), Ok(true)));
        let c = st.reader.compressed().expect("a compressed message");
        st.out.clear();
        st.inflater
            .inflate_text(c.payload, &mut st.out, 1 << 20)
            .expect("inflate");
        assert_eq!(st.out, want.as_bytes());
    }
    assert!(matches!(st.reader.next(), Ok(None)) && st.reader.buffered() == 0);
    bench_batch(
        cfg,
        &mut st,
        |st| st.inflater = Inflater::new(15, false),
        |st, n| {
            st.reader.feed(&wire[..black_box(wire.len())]);
            let mut acc = 0u64;
            for _ in 0..n {
                match st.reader.advance() {
                    Ok(true) => {}
                    other => unexpected(&other),
                }
                let Some(c) = st.reader.compressed() else {
                    unexpected(&st.reader.message());
                };
                st.out.clear();
                if let Err(e) = st.inflater.inflate_text(c.payload, &mut st.out, 1 << 20) {
                    unexpected(&e);
                }
                acc = acc.wrapping_add(touch(&st.out));
            }
            black_box(acc);
        },
    )
}

struct DeflateState {
    deflater: Deflater,
    writer: FrameWriter,
    scratch: Vec<u8>,
    out: Vec<u8>,
}

fn deflate(cfg: &RunConfig, inputs: &Inputs) -> Measurement {
    let cfg = &RunConfig {
        batch: inputs.texts.len(),
        ..*cfg
    };
    let mut st = DeflateState {
        deflater: Deflater::new(15, false, level(), 0),
        writer: FrameWriter::server(),
        scratch: Vec::with_capacity(inputs.payload * 2 + 64),
        out: vec![0u8; inputs.batch * (inputs.payload * 2 + 64)],
    };
    // Verify once: what is written inflates back to the texts.
    let mut check = Inflater::new(15, false);
    let mut reader = FrameReader::with_config(
        Role::Client,
        vec![0u8; 1 << 20],
        Config {
            allowed_rsv: RSV1,
            ..Config::default()
        },
    );
    for t in &inputs.texts {
        st.scratch.clear();
        st.deflater
            .compress(t.as_bytes(), &mut st.scratch)
            .expect("compress");
        let len = st
            .writer
            .encode_compressed(true, &st.scratch, &mut st.out)
            .expect("frame");
        reader.feed(&st.out[..len]);
        match reader.next() {
            Ok(Some(Message::Binary(_))) => {}
            other => unexpected(&other),
        }
        let c = reader.compressed().expect("a compressed message");
        let mut back = Vec::new();
        check
            .inflate_text(c.payload, &mut back, 1 << 20)
            .expect("inflate");
        assert_eq!(back, t.as_bytes());
    }
    let texts = &inputs.texts;
    bench_batch(
        cfg,
        &mut st,
        |_| {},
        |st, n| {
            let mut at = 0;
            for t in &texts[..n] {
                st.scratch.clear();
                if let Err(e) = st.deflater.compress(t.as_bytes(), &mut st.scratch) {
                    unexpected(&e);
                }
                match st
                    .writer
                    .encode_compressed(true, &st.scratch, &mut st.out[at..])
                {
                    Ok(len) => at += len,
                    Err(e) => unexpected(&e),
                }
            }
            black_box(at);
        },
    )
}
