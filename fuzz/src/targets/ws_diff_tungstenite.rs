//! Differential: the same wire bytes through tickwire's FrameReader and tungstenite's
//! (`WebSocket::from_raw_socket` over an in-memory stream), same role and same effective
//! limits. Messages up to and including the first close must be identical, and where one
//! side accepts what the other rejects the difference must be one of these deliberate ones:
//!
//! - **Early failure.** tungstenite decodes a frame only once its whole payload is
//!   buffered; tickwire checks the header as soon as it is complete and validates UTF-8 as
//!   payload bytes arrive (Autobahn 6.4.x "fail fast"). When input ends inside a bad frame
//!   tickwire has failed while tungstenite still waits for bytes. Allowed: tickwire fails,
//!   tungstenite needs more, same messages before.
//! - **Non-minimal lengths.** RFC 6455 §5.2 says the minimal number of bytes MUST be used
//!   for the payload length; tickwire rejects a longer form (`NonMinimalLength`),
//!   tungstenite accepts it. A control frame whose length uses the 16- or 64-bit form is
//!   refused by tickwire from its 7-bit length field (126/127 > 125,
//!   `ControlFrameTooLarge`); tungstenite looks at the decoded length only.
//! - **Invalid close codes.** tungstenite turns a close with a code that may not be on the
//!   wire into `Close(1002, "Protocol violation")`; tickwire fails with
//!   `InvalidCloseCode` (close code 1002 either way).
//! - **Close code 1014.** 1014 (Bad Gateway) is in IANA's WebSocket close code registry
//!   and Autobahn 0.8.2's list of valid codes; tickwire accepts it, tungstenite 0.30 treats
//!   it as invalid and reports `Close(1002, "Protocol violation")`. Allowed at that one
//!   place in the message sequence.
//! - **Limits on control frames.** tickwire's frame and message limits apply to data
//!   frames (control payloads are bounded by 125 bytes and the reader keeps room for
//!   them); tungstenite's frame limit applies to every frame. Limits here are therefore
//!   at least 125 bytes.
//! - RSV bits are never allowed here (tungstenite has no extensions), and nothing after
//!   the first close is compared (tickwire fails with `FrameAfterClose`, tungstenite
//!   stops reading).
use std::io::{self, Read, Write};

use crate::{Chunks, End, Setup, run_reader};
use tickwire_codec::ws::reader::READER_OVERHEAD;
use tickwire_codec::ws::{CloseCode, Error, OwnedMessage, Role};
use tungstenite::protocol::{Message, Role as TRole, WebSocket, WebSocketConfig};

/// The input as a socket: reads hand out the bytes, then `WouldBlock`; writes vanish.
struct Wire<'a> {
    data: &'a [u8],
}

impl Read for Wire<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.data.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

impl Write for Wire<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How tungstenite's run ended.
#[derive(Debug, PartialEq, Eq)]
enum TEnd {
    NeedMore,
    Closed,
    Failed(String),
}

fn tungstenite_run(setup: &Setup, data: &[u8]) -> (Vec<OwnedMessage>, TEnd) {
    let role = match setup.role {
        Role::Client => TRole::Client,
        Role::Server => TRole::Server,
    };
    let max_message = setup.reader(0).max_message_size();
    let config = WebSocketConfig::default()
        .max_frame_size(Some(setup.effective_max_frame()))
        .max_message_size(Some(max_message));
    let mut ws = WebSocket::from_raw_socket(Wire { data }, role, Some(config));
    let mut out = Vec::new();
    loop {
        match ws.read() {
            Ok(m) => {
                let close = matches!(m, Message::Close(_));
                out.push(match m {
                    Message::Text(t) => OwnedMessage::Text(t.as_str().to_owned()),
                    Message::Binary(b) => OwnedMessage::Binary(b.to_vec()),
                    Message::Ping(p) => OwnedMessage::Ping(p.to_vec()),
                    Message::Pong(p) => OwnedMessage::Pong(p.to_vec()),
                    Message::Close(c) => OwnedMessage::Close(
                        c.map(|c| (CloseCode(u16::from(c.code)), c.reason.as_str().to_owned())),
                    ),
                    Message::Frame(_) => unreachable!("tungstenite never reads raw frames"),
                });
                if close {
                    return (out, TEnd::Closed);
                }
            }
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                return (out, TEnd::NeedMore);
            }
            Err(e) => return (out, TEnd::Failed(e.to_string())),
        }
    }
}

/// One input of the fuzz target `ws_diff_tungstenite` (see the module docs).
pub fn run(input: &[u8]) {
    let Some((mut setup, data)) = Setup::decode(input) else {
        return;
    };
    setup.config.allowed_rsv = 0;
    setup.config.max_frame_size = setup.config.max_frame_size.max(125);
    setup.config.max_message_size = setup.config.max_message_size.max(125);
    setup.capacity = setup.capacity.max(READER_OVERHEAD + 125);
    let ours = run_reader(&setup, data, Chunks::Whole, 0);
    let (theirs, tend) = tungstenite_run(&setup, data);

    let n = ours.messages.len().min(theirs.len());
    for (a, b) in ours.messages[..n].iter().zip(&theirs[..n]) {
        let bad_gateway = matches!(a, OwnedMessage::Close(Some((CloseCode(1014), _))))
            && *b
                == OwnedMessage::Close(Some((
                    CloseCode::PROTOCOL_ERROR,
                    "Protocol violation".into(),
                )));
        assert!(a == b || bad_gateway, "messages differ: {a:?} vs {b:?}");
    }
    let we_closed = matches!(ours.messages.last(), Some(OwnedMessage::Close(_)));
    if ours.messages.len() == theirs.len() {
        match (&ours.end, &tend) {
            // Both closed: nothing after the close is compared.
            _ if we_closed => assert_eq!(tend, TEnd::Closed),
            (End::Failed(_), TEnd::Failed(_)) | (End::NeedMore { .. }, TEnd::NeedMore) => {}
            // Early failure (header checks, fail-fast UTF-8), or a non-minimal length in a
            // frame tungstenite has not finished reading.
            (End::Failed(_), TEnd::NeedMore) => {}
            (ours_end, theirs_end) => {
                panic!("tickwire {ours_end:?}, tungstenite {theirs_end:?}")
            }
        }
    } else if ours.messages.len() < theirs.len() {
        // tungstenite delivered more: only a documented rejection of ours explains it.
        let next = &theirs[n];
        match ours.end {
            End::Failed(Error::NonMinimalLength) => {}
            End::Failed(Error::ControlFrameTooLarge) => assert!(
                matches!(
                    next,
                    OwnedMessage::Ping(_) | OwnedMessage::Pong(_) | OwnedMessage::Close(_)
                ),
                "tungstenite delivered {next:?}"
            ),
            End::Failed(Error::InvalidCloseCode(_)) => assert_eq!(
                *next,
                OwnedMessage::Close(Some((
                    CloseCode::PROTOCOL_ERROR,
                    "Protocol violation".into()
                )))
            ),
            ref e => panic!("tickwire {e:?}, tungstenite delivered {next:?}"),
        }
    } else {
        panic!(
            "tickwire delivered {:?}, tungstenite {tend:?}",
            ours.messages[n]
        );
    }
}
