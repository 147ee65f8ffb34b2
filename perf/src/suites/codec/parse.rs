//! Parse scenarios: B frames back to back, read one message at a time.
//!
//! Fairness: the peers can only be handed bytes through a stream, and their
//! first `read` of a batch copies the whole batch from the stream into their
//! own buffer, inside the timed region. tickwire's baseline row therefore
//! also copies the batch into its reader (`FrameReader::feed`, the copy a
//! `recv` into `spare_mut` makes) inside the timed region. A second tickwire
//! row ("parse only") feeds outside the timed region, to show the parser
//! alone. Stream setup and rewinding are never timed.

use std::hint::black_box;

use fastwebsockets::{OpCode as FwsOpCode, Role as FwsRole, WebSocket as FwsSocket};
use tickwire_codec::ws::{FrameReader, Message, Role};
use tungstenite::protocol::{
    Message as TMessage, Role as TRole, WebSocket as TSocket, WebSocketConfig,
};

use super::names::{parse_binary, parse_masked, parse_masked_utf8, parse_text, parse_text_utf8};
use super::nexus;
use super::{Case, Inputs, PAYLOAD};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::peers::{MemStream, poll_ready};
use crate::suites::{touch, unexpected};

pub(super) const NOTE_TW: &str = "copies the batch's wire bytes into the reader (FrameReader::feed, like a recv) and parses B messages";
const NOTE_TW_ONLY: &str = "feed outside the timed region; times parsing B messages only";
pub(super) const NOTE_TUNG: &str = "WebSocket::read over an in-memory stream: its read_in copy of the batch (after zero-filling \
                         its 128 KiB default read buffer, as it does on every read), Bytes split per frame, \
                         UTF-8 check for text; default WebSocketConfig";
pub(super) const NOTE_FWS: &str = "WebSocket::read_frame polled once (no runtime) over an in-memory tokio stream: read_buf \
                        copies into its 8 KiB BytesMut, split per frame, unmask (server), simdutf8 check for text";

/// One parse scenario's inputs.
#[derive(Clone, Copy)]
pub(super) struct Spec<'a> {
    /// Role of the reading endpoint.
    pub role: Role,
    /// Wire bytes of one batch.
    pub wire: &'a [u8],
    /// Expected payload of each message; a batch parses exactly these.
    pub expect: &'a [&'a [u8]],
    /// Text (else binary).
    pub text: bool,
}

pub(super) fn cases<'a>(inputs: &'a Inputs, v: &mut Vec<Case<'a>>) {
    let texts: &'a [&'a [u8]] = Box::leak(inputs.texts.iter().map(|t| t.as_bytes()).collect());
    let bins: &'a [&'a [u8]] = Box::leak(inputs.binaries.iter().map(|b| b.as_slice()).collect());
    let n = inputs.payload;
    let (text_name, masked_name) = if inputs.non_ascii {
        (parse_text_utf8(n), parse_masked_utf8(n))
    } else {
        (parse_text(n), parse_masked(n))
    };
    let mut specs = vec![
        (
            text_name,
            Spec {
                role: Role::Client,
                wire: &inputs.text_unmasked,
                expect: texts,
                text: true,
            },
        ),
        (
            masked_name,
            Spec {
                role: Role::Server,
                wire: &inputs.text_masked,
                expect: texts,
                text: true,
            },
        ),
    ];
    // Binary payloads are the same bytes whatever the texts are: once per size.
    if !inputs.non_ascii {
        specs.push((
            parse_binary(n),
            Spec {
                role: Role::Client,
                wire: &inputs.binary_unmasked,
                expect: bins,
                text: false,
            },
        ));
    }
    for (name, spec) in specs {
        v.push(Case::new(
            name.clone(),
            "tickwire",
            true,
            NOTE_TW,
            move |cfg| tickwire(cfg, spec, true),
        ));
        if n == PAYLOAD && !inputs.non_ascii {
            v.push(Case::new(
                name.clone(),
                "tickwire (parse only)",
                false,
                NOTE_TW_ONLY,
                move |cfg| tickwire(cfg, spec, false),
            ));
        }
        v.push(Case::new(
            name.clone(),
            "tungstenite 0.30",
            false,
            NOTE_TUNG,
            move |cfg| tungstenite(cfg, spec),
        ));
        v.push(Case::new(
            name.clone(),
            "fastwebsockets 0.10",
            false,
            NOTE_FWS,
            move |cfg| fastwebsockets(cfg, spec),
        ));
        v.push(Case::new(
            name,
            nexus::LIB,
            false,
            nexus::NOTE_PARSE,
            move |cfg| nexus::parse(cfg, spec),
        ));
    }
}

/// Parse `n` messages; every one must be data of the expected kind.
#[inline(always)]
fn parse_n<B: AsRef<[u8]> + AsMut<[u8]>>(r: &mut FrameReader<B>, n: usize) {
    let mut acc = 0u64;
    for _ in 0..n {
        match r.next() {
            Ok(Some(Message::Text(s))) => acc = acc.wrapping_add(touch(s.as_bytes())),
            Ok(Some(Message::Binary(b))) => acc = acc.wrapping_add(touch(b)),
            other => unexpected(&other),
        }
    }
    black_box(acc);
}

pub(super) fn tickwire(cfg: &RunConfig, spec: Spec<'_>, include_feed: bool) -> Measurement {
    // A batch is the frames of `spec.wire`, whatever `--batch` says.
    let cfg = &RunConfig {
        batch: spec.expect.len(),
        ..*cfg
    };
    let cap = (1 << 20).max(2 * spec.wire.len() + 4096);
    let mut r = FrameReader::new(spec.role, vec![0u8; cap]);
    // Verify once.
    assert_eq!(r.feed(spec.wire), spec.wire.len());
    for want in spec.expect {
        match r.next() {
            Ok(Some(Message::Text(s))) if spec.text => assert_eq!(s.as_bytes(), *want),
            Ok(Some(Message::Binary(b))) if !spec.text => assert_eq!(b, *want),
            other => unexpected(&other),
        }
    }
    assert!(matches!(r.next(), Ok(None)) && r.buffered() == 0);
    let wire = spec.wire;
    if include_feed {
        bench_batch(
            cfg,
            &mut r,
            |_| {},
            |r, n| {
                r.feed(&wire[..black_box(wire.len())]);
                parse_n(r, n);
            },
        )
    } else {
        bench_batch(
            cfg,
            &mut r,
            |r| {
                r.feed(&wire[..black_box(wire.len())]);
            },
            parse_n,
        )
    }
}

pub(super) fn tungstenite(cfg: &RunConfig, spec: Spec<'_>) -> Measurement {
    // A batch is the frames of `spec.wire`, whatever `--batch` says.
    let cfg = &RunConfig {
        batch: spec.expect.len(),
        ..*cfg
    };
    let role = match spec.role {
        Role::Client => TRole::Client,
        Role::Server => TRole::Server,
    };
    let stream = MemStream::new(spec.wire.to_vec(), 0);
    let mut ws = TSocket::from_raw_socket(stream, role, Some(WebSocketConfig::default()));
    for want in spec.expect {
        match ws.read() {
            Ok(TMessage::Text(s)) if spec.text => assert_eq!(s.as_bytes(), *want),
            Ok(TMessage::Binary(b)) if !spec.text => assert_eq!(&b[..], *want),
            other => unexpected(&other),
        }
    }
    assert_eq!(ws.get_ref().remaining(), 0);
    bench_batch(
        cfg,
        &mut ws,
        |ws| ws.get_mut().rewind(),
        |ws, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                match ws.read() {
                    Ok(TMessage::Text(s)) => acc = acc.wrapping_add(touch(s.as_bytes())),
                    Ok(TMessage::Binary(b)) => acc = acc.wrapping_add(touch(&b)),
                    other => unexpected(&other),
                }
            }
            black_box(acc);
        },
    )
}

pub(super) fn fastwebsockets(cfg: &RunConfig, spec: Spec<'_>) -> Measurement {
    // A batch is the frames of `spec.wire`, whatever `--batch` says.
    let cfg = &RunConfig {
        batch: spec.expect.len(),
        ..*cfg
    };
    let role = match spec.role {
        Role::Client => FwsRole::Client,
        Role::Server => FwsRole::Server,
    };
    let want_op = if spec.text {
        FwsOpCode::Text
    } else {
        FwsOpCode::Binary
    };
    let stream = MemStream::new(spec.wire.to_vec(), 0);
    let rewind = stream.rewinder();
    let mut ws = FwsSocket::after_handshake(stream, role);
    for want in spec.expect {
        match poll_ready(ws.read_frame()) {
            Ok(f) if f.opcode == want_op && f.fin => assert_eq!(&f.payload[..], *want),
            Ok(f) => unexpected(&(f.opcode, f.fin)),
            Err(e) => unexpected(&e),
        }
    }
    bench_batch(
        cfg,
        &mut ws,
        |_| rewind.rewind(),
        |ws, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                match poll_ready(ws.read_frame()) {
                    Ok(f) if f.opcode == want_op => acc = acc.wrapping_add(touch(&f.payload)),
                    Ok(f) => unexpected(&f.opcode),
                    Err(e) => unexpected(&e),
                }
            }
            black_box(acc);
        },
    )
}
