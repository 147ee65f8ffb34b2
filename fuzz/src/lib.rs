//! Shared harness for the fuzz targets: how an input is turned into a reader setup, how a
//! reader is driven over chunks, and the invariants every returned message must satisfy.
//!
//! Frame-level inputs start with a [`SETUP_LEN`]-byte setup block (role, limits, buffer
//! size, chunking, re-encode settings) followed by wire bytes, so seeds are a setup block
//! plus real frames (see `examples/gen_seeds.rs`).

pub mod deflate;
pub mod http;
pub mod targets;
pub mod writer;

#[cfg(test)]
mod replay;

use tickwire_codec::rand::MaskSource;
use tickwire_codec::ws::reader::READER_OVERHEAD;
use tickwire_codec::ws::{Config, Error, FrameReader, Message, OwnedMessage, Role, frame::OpCode};
use writer::PeerWriter;

/// Bytes of setup at the start of a frame-level input.
pub const SETUP_LEN: usize = 9;

/// How a reader is set up and fed, decoded from the first [`SETUP_LEN`] input bytes.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Role of the reader (the receiving end).
    pub role: Role,
    pub config: Config,
    /// Reader storage size in bytes (at least [`READER_OVERHEAD`]).
    pub capacity: usize,
    /// Seed of the chunk sizes used to feed the reader.
    pub chunk_seed: u8,
    /// Fragment size and mask seed for re-encoding.
    pub reencode: u8,
}

impl Setup {
    /// Decode a setup block; `None` if the input is shorter than [`SETUP_LEN`].
    ///
    /// byte 0: bit 0 role (0 client, 1 server), bits 1..=3 allowed RSV;
    /// bytes 1-2 / 3-4: max frame / max message (u16 LE, 0xFFFF = unlimited);
    /// bytes 5-6: extra storage beyond the overhead (u16 LE, at most 64 KiB);
    /// byte 7: chunk seed; byte 8: re-encode fragment size and key seed.
    pub fn decode(input: &[u8]) -> Option<(Setup, &[u8])> {
        let (head, rest) = input.split_at_checked(SETUP_LEN)?;
        let limit = |lo: u8, hi: u8| match u16::from_le_bytes([lo, hi]) {
            0xFFFF => usize::MAX,
            n => usize::from(n),
        };
        let setup = Setup {
            role: if head[0] & 1 == 0 {
                Role::Client
            } else {
                Role::Server
            },
            config: Config {
                max_frame_size: limit(head[1], head[2]),
                max_message_size: limit(head[3], head[4]),
                allowed_rsv: (head[0] >> 1) & 7,
            },
            capacity: READER_OVERHEAD + usize::from(u16::from_le_bytes([head[5], head[6]])),
            chunk_seed: head[7],
            reencode: head[8],
        };
        Some((setup, rest))
    }

    /// The setup block for `role` with no limits beyond a 16 KiB buffer.
    pub fn encode_default(role: Role) -> [u8; SETUP_LEN] {
        let r = u8::from(role == Role::Server);
        [r, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x40, 7, 3]
    }

    /// A fresh reader for this setup, its storage filled with `fill`.
    pub fn reader(&self, fill: u8) -> FrameReader<Vec<u8>> {
        FrameReader::with_config(self.role, vec![fill; self.capacity], self.config)
    }

    /// The frame size limit the reader actually enforces.
    pub fn effective_max_frame(&self) -> usize {
        self.config
            .max_frame_size
            .min(self.reader(0).max_message_size())
    }
}

/// Chunk sizes for feeding a reader.
#[derive(Debug, Clone, Copy)]
pub enum Chunks {
    /// As much as fits at once.
    Whole,
    /// One byte per feed.
    Bytes,
    /// Pseudo-random sizes from 1 to 64 derived from a seed.
    Seeded(u8),
}

impl Chunks {
    fn sizes(self) -> impl FnMut() -> usize {
        let mut state = match self {
            Chunks::Seeded(s) => u32::from(s) | 0x100,
            _ => 0,
        };
        move || match self {
            Chunks::Whole => usize::MAX,
            Chunks::Bytes => 1,
            Chunks::Seeded(_) => {
                // xorshift32: deterministic, never zero.
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state % 64) as usize + 1
            }
        }
    }
}

/// How a run over the input ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// All input consumed without error: whether a frame or message is partly received,
    /// and how many bytes wait unprocessed.
    NeedMore { in_message: bool, buffered: usize },
    /// The reader failed with this error.
    Failed(Error),
}

/// What a reader produced for one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub messages: Vec<OwnedMessage>,
    pub end: End,
}

/// Drive a reader set up by `setup` (storage filled with `fill`) over `data`, fed in
/// `chunks`, draining every message after each feed. Checks the invariants of every
/// message ([`check_message`]) and that the reader never stalls: when it needs more bytes
/// it always has room for them.
pub fn run_reader(setup: &Setup, data: &[u8], chunks: Chunks, fill: u8) -> Run {
    let mut reader = setup.reader(fill);
    let max_message = reader.max_message_size();
    let mut next_size = chunks.sizes();
    let mut messages = Vec::new();
    let mut fed = 0usize;
    loop {
        loop {
            match reader.next() {
                Ok(Some(m)) => {
                    assert!(
                        !matches!(messages.last(), Some(OwnedMessage::Close(_))),
                        "a message after a close"
                    );
                    check_message(&m, max_message);
                    messages.push(m.to_owned());
                    assert!(
                        reader.last_rsv() & !setup.config.allowed_rsv == 0,
                        "RSV bits that were not allowed"
                    );
                }
                Ok(None) => break,
                Err(e) => {
                    check_error(e, &messages);
                    return Run {
                        messages,
                        end: End::Failed(e),
                    };
                }
            }
        }
        assert!(
            reader.buffered() <= fed,
            "reader holds more bytes than it was given"
        );
        if fed == data.len() {
            return Run {
                messages,
                end: End::NeedMore {
                    in_message: reader.in_message(),
                    buffered: reader.buffered(),
                },
            };
        }
        let want = next_size().min(data.len() - fed);
        assert!(
            !reader.spare_mut().is_empty(),
            "reader needs more bytes but has no room for them (stall)"
        );
        let n = reader.feed(&data[fed..fed + want]);
        assert!(n > 0 && n <= want, "feed took {n} of {want} bytes");
        fed += n;
    }
}

/// Invariants of every message a reader returns.
pub fn check_message(m: &Message<'_>, max_message: usize) {
    match *m {
        Message::Text(s) => {
            assert!(s.len() <= max_message, "text message over the limit");
            // The reader builds the &str unchecked: re-check it independently.
            assert!(core::str::from_utf8(s.as_bytes()).is_ok(), "invalid text");
        }
        Message::Binary(b) => assert!(b.len() <= max_message, "binary message over the limit"),
        Message::Ping(p) | Message::Pong(p) => assert!(p.len() <= 125, "control payload > 125"),
        Message::Close(None) => {}
        Message::Close(Some(c)) => {
            assert!(c.code.is_valid_on_wire(), "close code {} passed", c.code.0);
            assert!(c.reason.len() <= 123, "close reason > 123 bytes");
            assert!(core::str::from_utf8(c.reason.as_bytes()).is_ok());
        }
    }
}

/// Errors must be consistent with what was delivered: after a close, only a header error
/// or `FrameAfterClose` can follow (no message state is kept past a close).
fn check_error(e: Error, messages: &[OwnedMessage]) {
    let closed = matches!(messages.last(), Some(OwnedMessage::Close(_)));
    if closed {
        // After a close only a valid header can be reported, as FrameAfterClose (header
        // checks come first: a bad header after a close is still a header error).
        assert!(
            !matches!(
                e,
                Error::InvalidUtf8
                    | Error::FrameTooLarge
                    | Error::MessageTooLarge
                    | Error::UnexpectedContinuation
                    | Error::ExpectedContinuation
            ),
            "{e:?} after a close"
        );
    }
}

/// A mask source that hands out keys derived from a seed (any key, including zero).
#[derive(Debug, Clone, Copy)]
pub struct SeededKeys(pub u32);

impl MaskSource for SeededKeys {
    fn next_key(&mut self) -> [u8; 4] {
        self.0 = self.0.wrapping_mul(0x9E37_79B9).wrapping_add(0x7F4A_7C15);
        self.0.to_le_bytes()
    }
}

/// Encode `messages` as the peer of a `reader_role` reader would send them (a server
/// reader gets masked client frames), splitting data messages into fragments of at most
/// `fragment` bytes (0: whole) while keeping every frame within `max_frame`.
pub fn encode_messages(
    messages: &[OwnedMessage],
    reader_role: Role,
    fragment: usize,
    max_frame: usize,
    key_seed: u32,
) -> Vec<u8> {
    let sender = match reader_role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    };
    let mut out = Vec::new();
    for m in messages {
        let m = m.as_message();
        let len = m.payload().len();
        let f = if (fragment == 0 || max_frame == 0) && len <= max_frame {
            0
        } else {
            fragment.clamp(1, max_frame.max(1))
        };
        let mut writer = PeerWriter::new(sender, SeededKeys(key_seed), f);
        let mut buf = vec![0u8; writer.message_len(len) + 14];
        let n = match m {
            Message::Text(t) => writer.encode_text(t, &mut buf),
            Message::Binary(b) => writer.encode_binary(b, &mut buf),
            Message::Ping(p) => writer.encode_frame(OpCode::Ping, true, p, &mut buf),
            Message::Pong(p) => writer.encode_frame(OpCode::Pong, true, p, &mut buf),
            Message::Close(c) => {
                writer.encode_close(c.map(|c| c.code), c.map_or("", |c| c.reason), &mut buf)
            }
        }
        .unwrap_or_else(|e| panic!("re-encoding {m:?} failed: {e}"));
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// The full set of checks for one frame-level input (the frame reader target): chunked, byte-at-a-time and whole-input runs agree, two
/// runs over differently pre-filled storage agree (nothing uncommitted is ever read), and
/// re-encoding what was parsed parses back to the same messages.
pub fn check_reader(setup: &Setup, data: &[u8]) -> Run {
    let whole = run_reader(setup, data, Chunks::Whole, 0x00);
    let chunked = run_reader(setup, data, Chunks::Seeded(setup.chunk_seed), 0xA5);
    assert_eq!(whole, chunked, "whole vs chunked feeding differ");
    if data.len() <= 4096 {
        let bytes = run_reader(setup, data, Chunks::Bytes, 0xFF);
        assert_eq!(whole, bytes, "whole vs byte-at-a-time feeding differ");
    }

    let max_frame = setup.effective_max_frame();
    let wire = encode_messages(
        &whole.messages,
        setup.role,
        usize::from(setup.reencode),
        max_frame,
        u32::from(setup.reencode),
    );
    let again = run_reader(setup, &wire, Chunks::Seeded(setup.reencode), 0x5A);
    assert_eq!(again.messages, whole.messages, "re-encoded messages differ");
    let closed = matches!(whole.messages.last(), Some(OwnedMessage::Close(_)));
    assert_eq!(
        again.end,
        End::NeedMore {
            in_message: false,
            buffered: 0
        },
        "re-encoded stream did not end cleanly (closed: {closed})"
    );
    whole
}
