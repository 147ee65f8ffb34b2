//! Encode a 128-byte text message, B per batch, into one output buffer that
//! is reset (untimed) between batches.
//!
//! tickwire encodes into a caller slice: the buffer a socket write is made
//! from. The closest peer APIs are tungstenite's `Frame::format` into a
//! `Vec` and, as users call it, `WebSocket::send` to an in-memory stream
//! (which adds its out-buffer copy); fastwebsockets' `write_frame` writes to
//! the stream too. Client rows mask with a fresh key per frame: tickwire from
//! its `MaskRng` (ChaCha12), tungstenite and fastwebsockets from `rand`'s
//! thread RNG inside their write paths.
//!
//! Every row passes the batch's texts through `black_box` once per batch
//! (the slice), so no row can specialize on the inputs, and never a `&str`
//! per message: that puts the 16-byte fat pointer on the stack and reads it
//! back as two 8-byte loads, which do not forward from the store and cost
//! about 4-5 ticks per message on the AMD Zen 3 here (measured) - overhead
//! only some rows paid, depending on how the `black_box` type was inferred.

use std::hint::black_box;

use fastwebsockets::{Frame as FwsFrame, Payload, Role as FwsRole, WebSocket as FwsSocket};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::{FrameReader, FrameWriter, Masking, Message, Role};
use tungstenite::Bytes;
use tungstenite::protocol::frame::Frame as TFrame;
use tungstenite::protocol::frame::Utf8Bytes;
use tungstenite::protocol::frame::coding::{Data, OpCode as TOpCode};
use tungstenite::protocol::{
    Message as TMessage, Role as TRole, WebSocket as TSocket, WebSocketConfig,
};

use super::names::{ENCODE_CLIENT, ENCODE_SERVER};
use super::{Case, Inputs, nexus};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::peers::{MemStream, poll_ready};

const NOTE_TW_S: &str = "FrameWriter::encode_text into a caller slice: header + payload copy";
const NOTE_TW_C: &str = "FrameWriter::encode_text into a caller slice: key from MaskRng::from_entropy (ChaCha12, 16 keys per block), header, masked copy";
const NOTE_T_FMT_S: &str =
    "Frame::message(Bytes::from_static) + Frame::format into a Vec: header + payload copy";
const NOTE_T_FMT_C: &str = "Frame::message(Bytes::from_static), key set from pre-generated keys (tungstenite's own \
                            generator is private), Frame::format into a Vec: masks a fresh Vec copy, then copies it out";
const NOTE_T_SEND: &str = "WebSocket::send(Message::Text(Utf8Bytes::from_static)) to an in-memory stream: format into \
                           its out buffer, copy to the stream, drain; client: rand key per frame inside";
const NOTE_FWS: &str = "WebSocket::write_frame(Frame::text(Payload::Borrowed)) polled once over an in-memory stream: \
                        header + payload into its write buffer, write_all; client: payload copied to a Vec, rand key, masked";

pub(super) fn cases<'a>(inputs: &'a Inputs, v: &mut Vec<Case<'a>>) {
    for (name, role) in [(ENCODE_SERVER, Role::Server), (ENCODE_CLIENT, Role::Client)] {
        let client = role == Role::Client;
        if client {
            v.push(Case::new(name, "tickwire", true, NOTE_TW_C, move |cfg| {
                let rng = MaskRng::from_entropy().expect("OS entropy for the masking key seed");
                tickwire(cfg, inputs, FrameWriter::client(rng))
            }));
        } else {
            v.push(Case::new(name, "tickwire", true, NOTE_TW_S, move |cfg| {
                tickwire(cfg, inputs, FrameWriter::server())
            }));
        }
        let fmt_note = if client { NOTE_T_FMT_C } else { NOTE_T_FMT_S };
        v.push(Case::new(
            name,
            "tungstenite 0.30 Frame::format",
            false,
            fmt_note,
            move |cfg| tungstenite_format(cfg, inputs, client),
        ));
        v.push(Case::new(
            name,
            "tungstenite 0.30 WebSocket::send",
            false,
            NOTE_T_SEND,
            move |cfg| tungstenite_send(cfg, inputs, client),
        ));
        v.push(Case::new(
            name,
            "fastwebsockets 0.10",
            false,
            NOTE_FWS,
            move |cfg| fastwebsockets(cfg, inputs, client),
        ));
        let nx_note = if client {
            nexus::NOTE_ENCODE_C
        } else {
            nexus::NOTE_ENCODE_S
        };
        v.push(Case::new(name, nexus::LIB, false, nx_note, move |cfg| {
            nexus::encode(cfg, inputs, client)
        }));
        let nx07_note = if client {
            nexus::NOTE_ENCODE_C_07
        } else {
            nexus::NOTE_ENCODE_S
        };
        v.push(Case::new(
            name,
            nexus::LIB_07,
            false,
            nx07_note,
            move |cfg| nexus::encode_07(cfg, inputs, client),
        ));
    }
}

/// Check that `wire` holds exactly `inputs.texts` as final text frames,
/// masked with distinct keys (client) or unmasked (server).
pub(super) fn verify(inputs: &Inputs, wire: &[u8], client: bool) {
    if !client {
        assert_eq!(wire, &inputs.text_unmasked[..], "server frames");
        return;
    }
    let mut keys = Vec::new();
    let mut at = 0;
    while at < wire.len() {
        assert_eq!(wire[at + 1] & 0x80, 0x80, "client frames are masked");
        let (len, k) = match wire[at + 1] & 0x7F {
            126 => (
                usize::from(u16::from_be_bytes([wire[at + 2], wire[at + 3]])),
                at + 4,
            ),
            127 => panic!("no 64-bit lengths in this suite"),
            n => (usize::from(n), at + 2),
        };
        keys.push([wire[k], wire[k + 1], wire[k + 2], wire[k + 3]]);
        at = k + 4 + len;
    }
    keys.sort_unstable();
    keys.dedup();
    assert!(
        keys.len() > inputs.batch / 2,
        "masking keys should vary frame to frame"
    );
    let mut r = FrameReader::new(Role::Server, vec![0u8; 2 * wire.len() + 4096]);
    assert_eq!(r.feed(wire), wire.len());
    for t in &inputs.texts {
        match r.next() {
            Ok(Some(Message::Text(s))) => assert_eq!(s, t),
            other => panic!("client frame decoded to {other:?}"),
        }
    }
    assert_eq!(r.buffered(), 0);
}

fn tickwire<M: Masking>(cfg: &RunConfig, inputs: &Inputs, mut w: FrameWriter<M>) -> Measurement {
    let client = w.role() == Role::Client;
    let mut out = vec![0u8; inputs.encode_capacity()];
    let mut at = 0;
    for t in &inputs.texts {
        at += w
            .encode_text(t, &mut out[at..])
            .expect("room for the batch");
    }
    verify(inputs, &out[..at], client);
    let texts = &inputs.texts[..];
    let mut st = (w, out);
    bench_batch(
        cfg,
        &mut st,
        |_| {},
        |(w, out), n| {
            let mut at = 0;
            for t in black_box(&texts[..n]) {
                match w.encode_text(t, &mut out[at..]) {
                    Ok(k) => at += k,
                    Err(e) => crate::suites::unexpected(&e),
                }
            }
            black_box(at);
            black_box(&*out);
        },
    )
}

#[inline(always)]
fn t_frame(text: &'static str, key: Option<[u8; 4]>) -> TFrame {
    let mut f = TFrame::message(
        Bytes::from_static(text.as_bytes()),
        TOpCode::Data(Data::Text),
        true,
    );
    f.header_mut().mask = key;
    f
}

fn tungstenite_format(cfg: &RunConfig, inputs: &Inputs, client: bool) -> Measurement {
    let keys = &inputs.keys[..];
    let key = |i: usize| if client { Some(keys[i]) } else { None };
    let mut out: Vec<u8> = Vec::with_capacity(inputs.encode_capacity());
    for (i, t) in inputs.static_texts.iter().enumerate() {
        t_frame(t, key(i))
            .format(&mut out)
            .expect("format into a Vec");
    }
    verify(inputs, &out, client);
    let texts = &inputs.static_texts[..];
    bench_batch(
        cfg,
        &mut out,
        |out| out.clear(),
        |out, n| {
            for (i, t) in black_box(&texts[..n]).iter().enumerate() {
                if let Err(e) = t_frame(t, key(i)).format(out) {
                    crate::suites::unexpected(&e);
                }
            }
            black_box(&*out);
        },
    )
}

fn tungstenite_send(cfg: &RunConfig, inputs: &Inputs, client: bool) -> Measurement {
    let role = if client { TRole::Client } else { TRole::Server };
    let new_ws = || {
        let stream = MemStream::new(Vec::new(), inputs.encode_capacity());
        TSocket::from_raw_socket(stream, role, Some(WebSocketConfig::default()))
    };
    let mut ws = new_ws();
    for t in &inputs.static_texts {
        ws.send(TMessage::Text(Utf8Bytes::from_static(t)))
            .expect("send to memory");
    }
    verify(inputs, ws.get_ref().written(), client);
    let texts = &inputs.static_texts[..];
    bench_batch(
        cfg,
        &mut ws,
        |ws| ws.get_mut().rewind(),
        |ws, n| {
            for t in black_box(&texts[..n]) {
                if let Err(e) = ws.send(TMessage::Text(Utf8Bytes::from_static(t))) {
                    crate::suites::unexpected(&e);
                }
            }
            black_box(ws.get_ref());
        },
    )
}

fn fastwebsockets(cfg: &RunConfig, inputs: &Inputs, client: bool) -> Measurement {
    let role = if client {
        FwsRole::Client
    } else {
        FwsRole::Server
    };
    let stream = MemStream::new(Vec::new(), inputs.encode_capacity());
    let rewind = stream.rewinder();
    let mut ws = FwsSocket::after_handshake(stream, role);
    // Verify on a separate socket: this one does not hand its stream back.
    let mut check =
        FwsSocket::after_handshake(MemStream::new(Vec::new(), inputs.encode_capacity()), role);
    for t in &inputs.texts {
        poll_ready(check.write_frame(FwsFrame::text(Payload::Borrowed(t.as_bytes()))))
            .expect("write to memory");
    }
    verify(inputs, check.into_inner().written(), client);
    let texts = &inputs.texts[..];
    bench_batch(
        cfg,
        &mut ws,
        |_| rewind.rewind(),
        |ws, n| {
            for t in black_box(&texts[..n]) {
                let frame = FwsFrame::text(Payload::Borrowed(t.as_bytes()));
                if let Err(e) = poll_ready(ws.write_frame(frame)) {
                    crate::suites::unexpected(&e);
                }
            }
            black_box(&*ws);
        },
    )
}
