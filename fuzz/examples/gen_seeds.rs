//! Writes the committed seed corpora in `fuzz/seeds/<target>/`: the RFC 6455 §5.7 examples
//! and §1.3 handshake, the golden vectors of `codec/src/ws/tests.rs`, and representative
//! traffic produced with FrameWriter (mixed scripts in both roles, fragments splitting
//! multi-byte characters, control frames between fragments, limits at and over the edge).
//!
//! Run from `fuzz/`: `cargo run --example gen_seeds` (it replaces the seed directories; run
//! `tools/autobahn_seeds.py` afterwards to add the captured Autobahn traffic again).

use std::fs;
use std::path::Path;

use tickwire_codec::ws::frame::OpCode;
use tickwire_codec::ws::{CloseCode, Role};
use tickwire_fuzz::writer::PeerWriter;
use tickwire_fuzz::{SETUP_LEN, SeededKeys, Setup};

/// A frame-level seed: a setup block for `role` plus wire bytes.
fn frames(role: Role, wire: &[u8]) -> Vec<u8> {
    let mut v = Setup::encode_default(role).to_vec();
    v.extend_from_slice(wire);
    v
}

/// The same with small limits: max frame 100, max message 150, a 1 KiB buffer.
fn frames_limited(role: Role, wire: &[u8]) -> Vec<u8> {
    let mut setup = Setup::encode_default(role);
    setup[1..5].copy_from_slice(&[100, 0, 150, 0]);
    setup[5..7].copy_from_slice(&1024u16.to_le_bytes());
    assert_eq!(setup.len(), SETUP_LEN);
    let mut v = setup.to_vec();
    v.extend_from_slice(wire);
    v
}

/// Frames as the peer of a `reader` would send them.
fn script(reader: Role, fragment: usize, f: impl FnOnce(&mut Enc)) -> Vec<u8> {
    let sender = if reader == Role::Server {
        Role::Client
    } else {
        Role::Server
    };
    let mut enc = Enc {
        w: PeerWriter::new(sender, SeededKeys(0x1234_5678), fragment),
        out: Vec::new(),
    };
    f(&mut enc);
    enc.out
}

struct Enc {
    w: PeerWriter<SeededKeys>,
    out: Vec<u8>,
}

impl Enc {
    fn put(&mut self, f: impl FnOnce(&mut PeerWriter<SeededKeys>, &mut [u8]) -> usize) {
        let mut buf = vec![0u8; 1 << 16];
        let n = f(&mut self.w, &mut buf);
        self.out.extend_from_slice(&buf[..n]);
    }
    fn text(&mut self, t: &str) -> &mut Self {
        self.put(|w, b| w.encode_text(t, b).unwrap());
        self
    }
    fn binary(&mut self, d: &[u8]) -> &mut Self {
        self.put(|w, b| w.encode_binary(d, b).unwrap());
        self
    }
    fn frame(&mut self, op: OpCode, fin: bool, p: &[u8]) -> &mut Self {
        self.put(|w, b| w.encode_frame(op, fin, p, b).unwrap());
        self
    }
    fn close(&mut self, code: Option<CloseCode>, reason: &str) -> &mut Self {
        self.put(|w, b| w.encode_close(code, reason, b).unwrap());
        self
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::write(dir.join(name), bytes).unwrap();
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let frame_seeds = frame_seeds();
    for target in ["ws_frame_reader", "ws_diff_tungstenite"] {
        let dir = root.join(target);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &frame_seeds {
            write(&dir, name, bytes);
        }
    }
    for (target, seeds) in [
        ("ws_handshake_client", handshake_client_seeds()),
        ("ws_handshake_server", handshake_server_seeds()),
        ("simd_mask_utf8", simd_seeds()),
        ("ws_deflate", deflate_seeds()),
    ] {
        let dir = root.join(target);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &seeds {
            write(&dir, name, bytes);
        }
    }
}

fn frame_seeds() -> Vec<(String, Vec<u8>)> {
    use Role::{Client, Server};
    let mut s: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| s.push((name.to_owned(), bytes));

    // RFC 6455 §5.7.
    add(
        "rfc5_7_unmasked_text",
        frames(Client, &[0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]),
    );
    add(
        "rfc5_7_masked_text",
        frames(
            Server,
            &[
                0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
            ],
        ),
    );
    add(
        "rfc5_7_fragmented_text",
        frames(
            Client,
            &[0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f],
        ),
    );
    add(
        "rfc5_7_ping",
        frames(Client, &[0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]),
    );
    add(
        "rfc5_7_masked_pong",
        frames(
            Server,
            &[
                0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
            ],
        ),
    );
    let mut bin256 = vec![0x82, 0x7E, 0x01, 0x00];
    bin256.extend((0..256).map(|i| i as u8));
    add("rfc5_7_binary_256", frames(Client, &bin256));
    add(
        "rfc5_7_binary_64bit_header",
        frames(
            Client,
            &[0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00, 1, 2, 3],
        ),
    );

    // Golden vectors of codec/src/ws/tests.rs (accepted and refused).
    for (name, wire) in [
        ("golden_close_empty", &b"\x88\x00"[..]),
        ("golden_close_bye", b"\x88\x05\x03\xe8bye"),
        ("golden_close_one_byte", b"\x88\x01\x03"),
        ("golden_close_1005", b"\x88\x02\x03\xed"),
        ("golden_close_bad_utf8", b"\x88\x03\x03\xe8\xff"),
        ("golden_frame_after_close", b"\x88\x00\x81\x00"),
        ("golden_unexpected_continuation", b"\x80\x00"),
        ("golden_expected_continuation", b"\x01\x00\x02\x00"),
        ("golden_fragmented_ping", b"\x09\x00"),
        ("golden_rsv", b"\xa1\x00"),
        ("golden_reserved_opcode", b"\x85\x00"),
        ("golden_masked_from_server", b"\x81\x80\x00\x00\x00\x00"),
        ("golden_non_minimal_16", b"\x82\x7e\x00\x7d"),
        (
            "golden_non_minimal_64",
            b"\x82\x7f\x00\x00\x00\x00\x00\x00\xff\xff",
        ),
        (
            "golden_length_overflow",
            b"\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00",
        ),
        ("golden_control_too_large", b"\x89\x7e\x00\x7e"),
    ] {
        add(name, frames(Client, wire));
    }
    add("golden_unmasked_to_server", frames(Server, b"\x81\x00"));

    // Representative traffic from FrameWriter, both roles.
    for (role, tag) in [(Client, "client"), (Server, "server")] {
        add(
            &format!("script_mixed_{tag}"),
            frames(
                role,
                &script(role, 0, |e| {
                    e.text("{\"op\":\"subscribe\",\"channel\":\"trades\"}")
                        .binary(&[0, 1, 2, 3, 255])
                        .frame(OpCode::Ping, true, b"hb")
                        .frame(OpCode::Pong, true, b"")
                        .text("κόσμε €𝄞")
                        .close(Some(CloseCode::NORMAL), "bye");
                }),
            ),
        );
        add(
            &format!("script_fragmented_{tag}"),
            frames(
                role,
                &script(role, 3, |e| {
                    // 3-byte fragments split the multi-byte characters.
                    e.text("a€𝄞b κόσμε").binary(&[9; 20]).text("");
                }),
            ),
        );
        add(
            &format!("script_control_between_fragments_{tag}"),
            frames(
                role,
                &script(role, 0, |e| {
                    e.frame(OpCode::Text, false, b"Hel")
                        .frame(OpCode::Ping, true, b"p")
                        .frame(OpCode::Continuation, false, b"lo ")
                        .frame(OpCode::Pong, true, b"q")
                        .frame(OpCode::Continuation, true, b"world");
                }),
            ),
        );
        add(
            &format!("script_utf8_fail_fast_{tag}"),
            frames(
                role,
                &script(role, 0, |e| {
                    e.frame(
                        OpCode::Text,
                        true,
                        b"\xce\xba\xe1\xbd\xb9\xf4\x90\x80\x80edited",
                    );
                }),
            ),
        );
        add(
            &format!("script_close_max_reason_{tag}"),
            frames(
                role,
                &script(role, 0, |e| {
                    e.frame(OpCode::Ping, true, &[0x55; 125])
                        .close(Some(CloseCode(4999)), &"r".repeat(123));
                }),
            ),
        );
        // Limits: 100-byte frames, 150-byte messages.
        add(
            &format!("limits_at_edge_{tag}"),
            frames_limited(
                role,
                &script(role, 100, |e| {
                    e.binary(&[7; 100]).binary(&[1; 150]);
                }),
            ),
        );
        add(
            &format!("limits_over_{tag}"),
            frames_limited(
                role,
                &script(role, 100, |e| {
                    e.binary(&[1; 151]);
                }),
            ),
        );
    }
    s
}

const RFC_RESPONSE: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\n\
Upgrade: websocket\r\n\
Connection: Upgrade\r\n\
Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\
Sec-WebSocket-Protocol: chat\r\n\r\n";

const RFC_REQUEST: &[u8] = b"GET /chat HTTP/1.1\r\n\
Host: server.example.com\r\n\
Upgrade: websocket\r\n\
Connection: Upgrade\r\n\
Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
Origin: http://example.com\r\n\
Sec-WebSocket-Protocol: chat, superchat\r\n\
Sec-WebSocket-Version: 13\r\n\r\n";

fn handshake_client_seeds() -> Vec<(String, Vec<u8>)> {
    // flags (offer protocols), the RFC 6455 §1.3 key "the sample nonce", limit 8192.
    let head = |flags: u8| {
        let mut v = vec![flags];
        v.extend_from_slice(b"the sample nonce");
        v.extend_from_slice(&8192u16.to_le_bytes());
        v
    };
    let with = |flags: u8, body: &[u8]| {
        let mut v = head(flags);
        v.extend_from_slice(body);
        v
    };
    let no_proto = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\x81\x02hi";
    vec![
        ("rfc1_3_response".into(), with(1, RFC_RESPONSE)),
        ("rfc1_3_response_not_offered".into(), with(0, RFC_RESPONSE)),
        ("response_with_frames".into(), with(0, no_proto)),
        (
            "response_extension".into(),
            with(3, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"),
        ),
        (
            "response_404".into(),
            with(0, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
        ),
        (
            "response_bad_accept".into(),
            with(0, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n"),
        ),
    ]
}

fn handshake_server_seeds() -> Vec<(String, Vec<u8>)> {
    let raw = |body: &[u8]| {
        let mut v = vec![0u8];
        v.extend_from_slice(&8192u16.to_le_bytes());
        v.extend_from_slice(body);
        v
    };
    let mut structured = vec![1u8];
    structured.extend_from_slice(b"the sample nonce");
    structured.extend_from_slice(
        b"server.example.com\0/chat?x=1\0http://example.com\0chat,superchat\0X-Api-Key\0abc 123",
    );
    vec![
        ("rfc1_3_request".into(), raw(RFC_REQUEST)),
        (
            "request_version_8".into(),
            raw(b"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n"),
        ),
        (
            "request_post".into(),
            raw(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"),
        ),
        (
            "request_http10".into(),
            raw(b"GET / HTTP/1.0\r\nHost: h\r\n\r\n"),
        ),
        ("structured_client_request".into(), structured),
    ]
}

fn simd_seeds() -> Vec<(String, Vec<u8>)> {
    let mut mask = vec![0u8 << 1, 0x37, 0xfa, 0x21, 0x3d, 17, 40];
    mask.extend((0..100).map(|i| i as u8));
    let mut mask_phase = vec![3 << 1, 1, 2, 3, 4, 1, 33];
    mask_phase.extend((0..70).map(|i| (i * 7) as u8));
    let utf8 = |cuts: [u8; 2], text: &[u8]| {
        let mut v = vec![1, 0, 0, 0, 0, cuts[0], cuts[1]];
        v.extend_from_slice(text);
        v
    };
    vec![
        ("mask_100".into(), mask),
        ("mask_phase3".into(), mask_phase),
        (
            "utf8_valid".into(),
            utf8([2, 5], "a€𝄞b κόσμε 0123456789abcdef".as_bytes()),
        ),
        (
            "utf8_fail_fast".into(),
            utf8([4, 3], b"\xce\xba\xe1\xbd\xb9\xf4\x90\x80\x80edited"),
        ),
        ("utf8_surrogate".into(), utf8([1, 1], b"ab\xed\xa0\x80cd")),
        ("utf8_truncated".into(), utf8([3, 3], b"abc\xe2\x82")),
    ]
}

/// `ws_deflate`: the RFC 7692 §7.2.3 examples as frames (mode 0), messages to compress and
/// read back (mode 1), and extension headers (mode 2). See `tickwire_fuzz::deflate`.
fn deflate_seeds() -> Vec<(String, Vec<u8>)> {
    // Client role, windows 15/15, context takeover, limit 65535, chunk seed 7.
    let setup = |b0: u8, b1: u8| vec![b0, b1, 0xff, 0xff, 7, 0];
    let mut rfc = setup(0x38, 0x07);
    rfc.extend_from_slice(&[0xc1, 0x07, 0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]);
    rfc.extend_from_slice(&[0xc1, 0x05, 0xf2, 0x00, 0x11, 0x00, 0x00]);
    rfc.extend_from_slice(&[
        0xc1, 0x0b, 0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
    ]);
    rfc.extend_from_slice(&[
        0x41, 0x03, 0xf2, 0x48, 0xcd, 0x80, 0x04, 0xc9, 0xc9, 0x07, 0x00,
    ]);
    rfc.extend_from_slice(&[0xc1, 0x08, 0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00]);
    let mut bad = setup(0x3e, 0x07);
    bad.extend_from_slice(&[0xc2, 0x03, 0xff, 0xff, 0xff, 0xc9, 0x00, 0x40, 0x00]);
    // Mode 1, server role reading, windows 9/8, both without takeover, fragments of 5.
    let mut round = setup(0x40 | 0x08 | 0x07, 0x28);
    for m in [
        &b"{\"p\":\"60000.01\",\"q\":\"0.5\"}"[..],
        b"\xff\xfe binary",
        b"{\"p\":\"60000.01\",\"q\":\"0.6\"}",
    ] {
        round.push((m.len() as u8) << 1 | 1);
        round.extend_from_slice(m);
    }
    // Mode 2: configs, then a header with several offers.
    let mut hdr = setup(0x80, 0x00);
    hdr.extend_from_slice(&[0x9c, 0xab, 0x01, 0x02]);
    hdr.extend_from_slice(
        b"foo; x=\"a,b\", permessage-deflate; client_max_window_bits; server_max_window_bits=\"10\", \
          permessage-deflate; server_no_context_takeover",
    );
    vec![
        ("rfc7692_examples".into(), rfc),
        ("invalid_and_misplaced_rsv1".into(), bad),
        ("round_trip_small_windows".into(), round),
        ("offers".into(), hdr),
    ]
}
