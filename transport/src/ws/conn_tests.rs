//! Unit tests of the connection core over a scripted in-memory stream: partial writes,
//! backpressure, auto-pong while the socket is full, the close echo and protocol errors.

use std::io::{self, Read, Write};

use mio::{Interest, Registry, Token};
use tickwire_codec::rand::{MaskRng, NoMask};
use tickwire_codec::ws::{
    CloseCode, CloseFrame, Connection, FrameReader, FrameWriter, Message, Role,
};

use super::Conn;
use crate::ws::Error;
use crate::ws::error::Peer;
use crate::ws::options::Options;
use crate::ws::stream::Stream;

/// A socket double: reads from `input` (then WouldBlock or EOF), accepts at most
/// `budget` written bytes before WouldBlock.
#[derive(Debug, Default)]
struct Mock {
    input: Vec<u8>,
    pos: usize,
    eof: bool,
    output: Vec<u8>,
    budget: usize,
    /// Read calls made.
    reads: usize,
    /// Whether `Stream::read_drained` trusts a short read.
    drains: bool,
}

impl Read for Mock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        let left = &self.input[self.pos..];
        if left.is_empty() {
            return if self.eof {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let n = left.len().min(buf.len());
        buf[..n].copy_from_slice(&left[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for Mock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = self.budget.min(buf.len());
        self.output.extend_from_slice(&buf[..n]);
        self.budget -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl mio::event::Source for Mock {
    fn register(&mut self, _: &Registry, _: Token, _: Interest) -> io::Result<()> {
        Ok(())
    }
    fn reregister(&mut self, _: &Registry, _: Token, _: Interest) -> io::Result<()> {
        Ok(())
    }
    fn deregister(&mut self, _: &Registry) -> io::Result<()> {
        Ok(())
    }
}

impl Stream for Mock {
    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn read_drained(&self, asked: usize, got: usize) -> bool {
        self.drains && got < asked
    }
}

fn server(input: Vec<u8>, budget: usize, wbuf: usize) -> Conn<Mock, NoMask> {
    let opts = Options {
        write_buffer_size: wbuf,
        read_buffer_size: 64 * 1024,
        ..Options::default()
    };
    let mock = Mock {
        input,
        budget,
        ..Mock::default()
    };
    let mut ws = Connection::server(
        opts.read_buffer(),
        opts.write_buffer(),
        &opts.settings(),
        crate::clock::now(),
    );
    ws.skip_handshake();
    match Conn::new(mock, ws, &opts, false, Peer::Url("ws://mock/".into())) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

/// Frames a client would send (masked).
fn client_frames(f: impl FnOnce(&mut FrameWriter<MaskRng>, &mut Vec<u8>)) -> Vec<u8> {
    let mut w = FrameWriter::client(MaskRng::from_seed([9; 32]));
    let mut out = Vec::new();
    f(&mut w, &mut out);
    out
}

fn encode_ping(w: &mut FrameWriter<MaskRng>, out: &mut Vec<u8>, p: &[u8]) {
    let mut buf = [0u8; 200];
    let n = w.encode_ping(p, &mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
}

/// Decode what the server wrote, as a client would.
fn decode(bytes: &[u8]) -> Vec<String> {
    let mut r = FrameReader::new(Role::Client, vec![0u8; 1 << 20]);
    assert_eq!(r.feed(bytes), bytes.len());
    let mut out = Vec::new();
    while let Some(m) = r.next().unwrap() {
        out.push(match m {
            Message::Binary(b) => format!("bin {} {}", b.len(), b.first().copied().unwrap_or(0)),
            other => format!("{other:?}"),
        });
    }
    assert_eq!(r.buffered(), 0, "trailing partial frame");
    out
}

#[test]
fn partial_writes_keep_every_byte_in_order_and_backpressure_is_typed() {
    let mut c = server(Vec::new(), 10, 256);
    let mut sent = 0u8;
    loop {
        match c.send_binary(&[sent; 100]) {
            Ok(()) => sent += 1,
            Err(Error::Backpressure) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(sent >= 2, "the buffer holds more than one message");
    assert!(c.wants_write());
    assert_eq!(c.io.stream.output.len(), 10, "only what the socket took");
    // The socket drains a little at a time.
    while c.wants_write() {
        c.io.stream.budget = 7;
        c.flush().unwrap();
    }
    let got = decode(&c.io.stream.output);
    let want: Vec<String> = (0..sent).map(|i| format!("bin 100 {i}")).collect();
    assert_eq!(got, want);
}

#[test]
fn too_large_for_the_write_buffer() {
    let mut c = server(Vec::new(), usize::MAX, 256);
    assert!(matches!(
        c.send_binary(&[0; 300]),
        Err(Error::MessageTooLarge { capacity: 256, .. })
    ));
}

#[test]
fn ping_is_answered_even_when_the_socket_is_full() {
    let input = client_frames(|w, out| encode_ping(w, out, b"are you there"));
    let mut c = server(input, 0, 256);
    assert_eq!(
        c.recv(false).unwrap(),
        Some(Message::Ping(b"are you there"))
    );
    assert!(c.wants_write(), "pong waits for the socket");
    assert_eq!(c.recv(false).unwrap(), None);
    c.io.stream.budget = usize::MAX;
    assert!(c.flush().unwrap());
    assert_eq!(
        decode(&c.io.stream.output),
        [r#"Pong([97, 114, 101, 32, 121, 111, 117, 32, 116, 104, 101, 114, 101])"#]
    );
}

#[test]
fn pong_waits_behind_a_full_buffer_and_goes_out_first() {
    let input = client_frames(|w, out| encode_ping(w, out, b"p"));
    let mut c = server(input, 0, 256);
    c.send_binary(&[1; 250]).unwrap(); // 254 of 256 bytes
    // No room for the pong: it waits aside, and new data waits behind it.
    assert_eq!(c.recv(false).unwrap(), Some(Message::Ping(b"p")));
    assert!(matches!(c.send_binary(&[2; 1]), Err(Error::Backpressure)));
    c.io.stream.budget = usize::MAX;
    c.flush().unwrap();
    c.send_binary(&[3; 10]).unwrap();
    assert_eq!(
        decode(&c.io.stream.output),
        ["bin 250 1", "Pong([112])", "bin 10 3"]
    );
}

#[test]
fn peer_close_is_echoed_then_delivered_then_none() {
    let input = client_frames(|w, out| {
        let mut buf = [0u8; 64];
        let n = w
            .encode_close(Some(CloseCode(3001)), "done", &mut buf)
            .unwrap();
        out.extend_from_slice(&buf[..n]);
    });
    let mut c = server(input, usize::MAX, 256);
    let frame = CloseFrame {
        code: CloseCode(3001),
        reason: "done",
    };
    assert_eq!(c.recv(false).unwrap(), Some(Message::Close(Some(frame))));
    assert!(c.is_closed());
    assert_eq!(
        decode(&c.io.stream.output),
        ["Close(Some(CloseFrame { code: CloseCode(3001), reason: \"\" }))"]
    );
    assert!(c.io.shut, "write half shut after the echo");
    assert_eq!(c.recv(false).unwrap(), None);
    assert!(matches!(c.send_text("x"), Err(Error::AlreadyClosed)));
}

#[test]
fn after_our_close_data_is_discarded_until_the_peer_closes() {
    let input = client_frames(|w, out| {
        let mut buf = [0u8; 64];
        let n = w.encode_text("late", &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
        encode_ping(w, out, b"late ping");
        let n = w.encode_close(None, "", &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    });
    let mut c = server(input, usize::MAX, 256);
    c.close(Some(CloseCode::NORMAL), "bye").unwrap();
    assert_eq!(c.recv(false).unwrap(), Some(Message::Close(None)));
    assert_eq!(c.recv(false).unwrap(), None);
    // Only our close went out: no pong after it.
    assert_eq!(decode(&c.io.stream.output).len(), 1);
}

#[test]
fn protocol_error_sends_the_codec_close_code() {
    let mut c = server(vec![0x81, 0x81, 0, 0, 0, 0, 0xC0], usize::MAX, 256);
    assert!(matches!(c.recv(false), Err(Error::Protocol(_))));
    assert_eq!(
        decode(&c.io.stream.output),
        ["Close(Some(CloseFrame { code: CloseCode(1007), reason: \"\" }))"]
    );
    assert!(c.io.shut, "the write half is shut after the close frame");
    // The close goes on in later calls: input is discarded unparsed (the peer's close
    // included) until the end of its stream, which ends the connection.
    assert!(matches!(c.recv(false), Ok(None)));
    c.io.stream.input.extend(binary_frame(b"late"));
    c.io.stream.input.extend(client_frames(|w, out| {
        let mut buf = [0u8; 64];
        let n = w
            .encode_close(Some(CloseCode::PROTOCOL_ERROR), "", &mut buf)
            .unwrap();
        out.extend_from_slice(&buf[..n]);
    }));
    assert!(matches!(c.recv(false), Ok(None)));
    assert!(!c.is_closed());
    c.io.stream.eof = true;
    // Every later call reports what failed the connection.
    assert!(matches!(c.recv(false), Err(Error::Protocol(_))));
    assert!(matches!(c.recv(false), Err(Error::Protocol(_))));
    assert!(matches!(c.send_text("x"), Err(Error::Protocol(_))));
    assert!(c.is_closed());
}

#[test]
fn eof_without_close_is_connection_lost() {
    let mut c = server(Vec::new(), usize::MAX, 256);
    c.io.stream.eof = true;
    assert!(matches!(c.recv(false), Err(Error::ConnectionLost)));
    assert!(c.is_closed());
}

#[test]
fn close_timeout_is_enforced_by_handle_timeout() {
    let mut c = server(Vec::new(), usize::MAX, 256);
    c.close(None, "").unwrap();
    let at = c.timeout_at().unwrap();
    assert!(
        c.handle_timeout(at - std::time::Duration::from_millis(1))
            .is_ok()
    );
    assert!(matches!(c.handle_timeout(at), Err(Error::CloseTimeout)));
    assert!(c.is_closed());
}

fn binary_frame(data: &[u8]) -> Vec<u8> {
    client_frames(|w, out| {
        let mut buf = [0u8; 200];
        let n = w.encode_binary(data, &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    })
}

/// After a short read on a stream where that means "empty", the next `recv(false)`
/// skips the read that would only say `WouldBlock`, but only when the caller's
/// readiness is sticky (tokio): a plain evented caller always reads; and a read is
/// never skipped twice in a row.
#[test]
fn short_read_skips_the_would_block_read_only_with_sticky_readiness() {
    for (drains, sticky, reads_after_none) in [
        (true, true, 1),
        (true, false, 2),
        (false, true, 2),
        (false, false, 2),
    ] {
        let mut c = server(binary_frame(b"one"), 1 << 16, 4096);
        c.io.stream.drains = drains;
        c.io.sticky_readiness = sticky;
        let got = c.recv(false).unwrap().map(|m| format!("{m:?}"));
        assert_eq!(got.as_deref(), Some("Binary([111, 110, 101])"));
        assert_eq!(c.io.stream.reads, 1);
        assert!(c.recv(false).unwrap().is_none());
        assert_eq!(c.io.stream.reads, reads_after_none, "{drains} {sticky}");
        // New bytes: the next call reads them whatever happened before.
        c.io.stream.input.extend(binary_frame(b"two"));
        let got = c.recv(false).unwrap().map(|m| format!("{m:?}"));
        assert_eq!(got.as_deref(), Some("Binary([116, 119, 111])"));
    }
}

/// A server connection whose reads are trusted to drain (sticky readiness, as under
/// tokio), reading `input` and writing at most `budget` bytes.
fn sticky_server(input: Vec<u8>, budget: usize) -> Conn<Mock, NoMask> {
    let mut c = server(input, budget, 4096);
    c.io.stream.drains = true;
    c.io.sticky_readiness = true;
    c
}

/// The "nothing now" answer after a draining read (no read, no reader step) is given
/// only when nothing is left to do: buffered frames are still delivered, a partial
/// frame still waits for its bytes, pending output is still written, and a failed
/// connection still says so.
#[test]
fn after_a_draining_read_nothing_left_is_lost() {
    // Two whole frames and the first 3 bytes of a third, in one read.
    let mut input = binary_frame(b"one");
    input.extend(binary_frame(b"two"));
    let third = binary_frame(b"three");
    input.extend_from_slice(&third[..3]);
    let mut c = sticky_server(input, usize::MAX);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"one")));
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"two")));
    assert_eq!(c.io.stream.reads, 1);
    // The partial frame: no read (the socket is drained), nothing delivered.
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(c.io.stream.reads, 1);
    c.io.stream.input.extend_from_slice(&third[3..]);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"three")));
    assert_eq!(c.io.stream.reads, 2);
    // Drained and empty: "nothing now" without a read, then the next call reads.
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(c.io.stream.reads, 2);
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(c.io.stream.reads, 3);

    // A pong the socket could not take is written by the next call, though it reads
    // nothing.
    let input = client_frames(|w, out| encode_ping(w, out, b"p"));
    let mut c = sticky_server(input, 0);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Ping(b"p")));
    assert!(c.wants_write());
    c.io.stream.budget = usize::MAX;
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(c.io.stream.reads, 1);
    assert!(!c.wants_write());
    assert_eq!(decode(&c.io.stream.output), ["Pong([112])"]);

    // A protocol error in a draining read: reported once; the peer's end of the
    // stream then ends the close, and every later call reports the failure.
    let mut c = sticky_server(vec![0x81, 0x81, 0, 0, 0, 0, 0xC0], usize::MAX);
    assert!(matches!(c.recv(false), Err(Error::Protocol(_))));
    c.io.stream.eof = true;
    // (The draining read's "nothing now" is given once, without a read.)
    assert!(matches!(c.recv(false), Ok(None)));
    assert!(matches!(c.recv(false), Err(Error::Protocol(_))));
    assert!(matches!(c.recv(false), Err(Error::Protocol(_))));
    assert!(matches!(c.send_text("x"), Err(Error::Protocol(_))));

    // The peer's close: answered, delivered, then `None` for good.
    let input = client_frames(|w, out| {
        let mut buf = [0u8; 64];
        let n = w.encode_close(None, "", &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    });
    let mut c = sticky_server(input, usize::MAX);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Close(None)));
    assert!(c.is_closed());
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(decode(&c.io.stream.output), ["Close(None)"]);
}

/// `idle_drained` (tokio's shortcut past the `recv(false)` that would only say "nothing
/// now") is taken only where that call would have had nothing to do: never with a whole
/// or partial frame buffered, output pending, a closed connection or a socket not
/// drained; and taking it consumes the drained mark, so the next call reads.
#[cfg(feature = "tokio")]
#[test]
fn idle_drained_only_where_recv_has_nothing_to_do() {
    // Two frames and part of a third in one draining read.
    let mut input = binary_frame(b"one");
    input.extend(binary_frame(b"two"));
    let third = binary_frame(b"three");
    input.extend_from_slice(&third[..3]);
    let mut c = sticky_server(input, usize::MAX);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"one")));
    assert!(!c.idle_drained(), "a whole frame is buffered");
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"two")));
    assert!(!c.idle_drained(), "a partial frame is buffered");
    c.io.stream.input.extend_from_slice(&third[3..]);
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"three")));
    let reads = c.io.stream.reads;
    // Drained, nothing buffered: the shortcut, once; the next call reads.
    assert!(c.idle_drained());
    assert!(!c.idle_drained());
    assert_eq!(c.recv(false).unwrap(), None);
    assert_eq!(c.io.stream.reads, reads + 1);

    // Not sticky (a plain evented caller): never.
    let mut c = server(binary_frame(b"one"), 1 << 16, 4096);
    c.io.stream.drains = true;
    assert_eq!(c.recv(false).unwrap(), Some(Message::Binary(b"one")));
    assert!(!c.idle_drained());

    // A pong the socket could not take: the next recv must write it.
    let input = client_frames(|w, out| encode_ping(w, out, b"p"));
    let mut c = sticky_server(input, 0);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Ping(b"p")));
    assert!(c.wants_write());
    assert!(!c.idle_drained());

    // The peer's close: the connection is not open any more.
    let input = client_frames(|w, out| {
        let mut buf = [0u8; 64];
        let n = w.encode_close(None, "", &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    });
    let mut c = sticky_server(input, usize::MAX);
    assert_eq!(c.recv(false).unwrap(), Some(Message::Close(None)));
    assert!(!c.idle_drained());
}

/// A client's frames of every kind, masked: a binary message, a text message in
/// fragments (an empty one, a ping between them), a 16-bit length, empty messages
/// (one fragmented), non-ASCII text, and the close (1000). Received, they are the
/// messages `messages_survive_every_split_of_the_input` expects.
fn every_kind_of_frame() -> Vec<u8> {
    use tickwire_codec::ws::OpCode;
    client_frames(|w, out| {
        let mut buf = vec![0u8; 1024];
        let mut frame = |w: &mut FrameWriter<MaskRng>, op, fin, p: &[u8]| {
            let n = w.encode_frame(op, fin, p, &mut buf).unwrap();
            out.extend_from_slice(&buf[..n]);
        };
        frame(w, OpCode::Binary, true, b"one");
        frame(w, OpCode::Text, false, b"fra");
        frame(w, OpCode::Continuation, false, b"");
        frame(w, OpCode::Ping, true, b"pp");
        frame(w, OpCode::Continuation, true, b"gment");
        frame(w, OpCode::Binary, true, &[7u8; 300]);
        frame(w, OpCode::Binary, true, b"");
        frame(w, OpCode::Binary, false, b"");
        frame(w, OpCode::Continuation, true, b"");
        frame(w, OpCode::Text, true, "héllo".as_bytes());
        frame(w, OpCode::Close, true, &[0x03, 0xe8]);
    })
}

/// Frames arriving in pieces of every size, each piece read by its own `recv(false)`
/// calls (drained or not, sticky or not): every message comes out whole and in order
/// (fragmented ones with empty fragments and a ping between fragments, a 16-bit
/// length, an empty message), and the pong is sent. Reads that end inside a frame,
/// on a frame boundary or on a message boundary all look the same to the caller.
#[test]
fn messages_survive_every_split_of_the_input() {
    let input = every_kind_of_frame();
    // A control frame is delivered as it arrives, inside the fragmented text.
    let want = [
        "Binary([111, 110, 101])".to_string(),
        "Ping([112, 112])".to_string(),
        "Text(\"fragment\")".to_string(),
        format!("Binary({:?})", [7u8; 300]),
        "Binary([])".to_string(),
        "Binary([])".to_string(),
        "Text(\"héllo\")".to_string(),
        "Close(Some(CloseFrame { code: CloseCode(1000), reason: \"\" }))".to_string(),
    ];
    for piece in 1..=input.len() {
        for (drains, sticky) in [(true, true), (true, false), (false, false)] {
            let mut c = server(Vec::new(), usize::MAX, 4096);
            c.io.stream.drains = drains;
            c.io.sticky_readiness = sticky;
            let mut got = Vec::new();
            for chunk in input.chunks(piece) {
                c.io.stream.input.extend_from_slice(chunk);
                // A caller with sticky readiness comes back after a `None` only
                // when new bytes arrived; poll until two `None`s in a row.
                let mut nones = 0;
                while nones < 2 {
                    match c.recv(false).unwrap() {
                        Some(m) => {
                            got.push(format!("{m:?}"));
                            nones = 0;
                        }
                        None => nones += 1,
                    }
                }
            }
            assert_eq!(got, want, "piece {piece}, drains {drains}, sticky {sticky}");
            assert!(c.is_closed());
            let out = decode(&c.io.stream.output);
            assert_eq!(out.first().map(String::as_str), Some("Pong([112, 112])"));
        }
    }
}

/// The payload `recv_with` hands its closure is the read buffer itself (no copy), and
/// the closure's replies go out in order: 1,000 client messages of many sizes, text and
/// binary, a third of them fragmented, each echoed from inside the closure.
#[test]
fn recv_with_replies_from_the_read_buffer() {
    let mut whole = FrameWriter::client(MaskRng::from_seed([3; 32]));
    let mut split = FrameWriter::client(MaskRng::from_seed([4; 32])).with_fragment_size(97);
    let mut input = Vec::new();
    let mut want: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    for i in 0..1000usize {
        let len = match i % 10 {
            0 => 0,
            1 => 125,
            2 => 126,
            3 => 65_535 % 20_000,
            4 => 20_000,
            _ => (i * 7919) % 3000,
        };
        let text = i % 3 == 0;
        let payload: Vec<u8> = (0..len).map(|k| b'a' + ((i + k) % 26) as u8).collect();
        let w = if i % 3 == 1 { &mut split } else { &mut whole };
        let n = if text {
            w.encode_text(std::str::from_utf8(&payload).unwrap(), &mut buf)
        } else {
            w.encode_binary(&payload, &mut buf)
        }
        .unwrap();
        input.extend_from_slice(&buf[..n]);
        want.push((text, payload));
    }
    let mut c = server(input, usize::MAX, 64 * 1024);
    let start = c.ws.reader_mut().spare_mut().as_ptr() as usize;
    let end = start + c.ws.reader_mut().spare_mut().len();
    let mut inside = 0;
    let mut got = 0;
    while let Some(()) = c
        .recv_with(false, |msg, mut tx| {
            let payload = match msg {
                Message::Text(t) => t.as_bytes(),
                Message::Binary(b) => b,
                other => panic!("unexpected {other:?}"),
            };
            let at = payload.as_ptr() as usize;
            if payload.is_empty() || (at >= start && at + payload.len() <= end) {
                inside += 1;
            }
            got += 1;
            match msg {
                Message::Text(t) => tx.send_text(t),
                _ => tx.send_binary(payload),
            }
        })
        .unwrap()
    {}
    assert_eq!(got, 1000, "every message delivered");
    assert_eq!(inside, 1000, "every payload borrowed from the read buffer");
    // Decode the echoes as the client would.
    let mut r = FrameReader::new(Role::Client, vec![0u8; 1 << 20]);
    let out = std::mem::take(&mut c.io.stream.output);
    let mut fed = 0;
    let mut echoes = Vec::new();
    while echoes.len() < want.len() {
        fed += r.feed(&out[fed..]);
        while let Some(m) = r.next().unwrap() {
            echoes.push(match m {
                Message::Text(t) => (true, t.as_bytes().to_vec()),
                Message::Binary(b) => (false, b.to_vec()),
                other => panic!("unexpected {other:?}"),
            });
        }
    }
    assert_eq!(fed, out.len());
    assert!(echoes == want, "the echoes differ from what was sent");
}

/// `recv_polled` (futures-io's receive: the idle read alone, without the codec pass
/// that would find nothing) answers exactly as `recv_ready(false)` in every state:
/// input arriving in pieces of every size ([`every_kind_of_frame`]), then the end of
/// the stream; a protocol error;
/// and it reads once per call when idle (the read whose `Pending` arms the wake-up).
#[cfg(feature = "futures-io")]
#[test]
fn recv_polled_answers_as_recv_ready() {
    let input = every_kind_of_frame();
    /// One call: the message it made ready, `None` for "nothing now", or the error.
    fn step(c: &mut Conn<Mock, NoMask>, polled: bool) -> Result<Option<String>, String> {
        let got = if polled {
            c.recv_polled()
        } else {
            c.recv_ready(false)
        };
        match got {
            Ok(true) => Ok(c.ws.message().map(|m| format!("{m:?}"))),
            Ok(false) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
    for piece in 1..=input.len() {
        let mut trace = [Vec::new(), Vec::new()];
        let mut reads = [0, 0];
        for (i, polled) in [false, true].into_iter().enumerate() {
            let mut c = server(Vec::new(), usize::MAX, 4096);
            for chunk in input.chunks(piece) {
                c.io.stream.input.extend_from_slice(chunk);
                loop {
                    let s = step(&mut c, polled);
                    let none = matches!(s, Ok(None));
                    trace[i].push(s);
                    if none {
                        break;
                    }
                }
            }
            c.io.stream.eof = true;
            for _ in 0..2 {
                trace[i].push(step(&mut c, polled));
            }
            assert!(c.is_closed(), "piece {piece}, polled {polled}");
            reads[i] = c.io.stream.reads;
            let out = decode(&c.io.stream.output);
            assert_eq!(out.first().map(String::as_str), Some("Pong([112, 112])"));
        }
        assert_eq!(trace[0], trace[1], "piece {piece}");
        assert_eq!(reads[0], reads[1], "piece {piece}");
        assert!(
            trace[1]
                .iter()
                .any(|s| matches!(s, Ok(Some(m)) if m == "Text(\"fragment\")"))
        );
    }

    // Idle: one read per call, each saying "nothing now"; then the data it reads.
    let mut c = server(binary_frame(b"one"), 1 << 16, 4096);
    assert_eq!(
        step(&mut c, true),
        Ok(Some("Binary([111, 110, 101])".into()))
    );
    let reads = c.io.stream.reads;
    assert_eq!(step(&mut c, true), Ok(None));
    assert_eq!(step(&mut c, true), Ok(None));
    assert_eq!(c.io.stream.reads, reads + 2);
    c.io.stream.input.extend(binary_frame(b"two"));
    assert_eq!(
        step(&mut c, true),
        Ok(Some("Binary([116, 119, 111])".into()))
    );

    // A protocol error read by the idle read: the same error, close code and answers
    // after it (the stream's end included) as `recv_ready`.
    let mut trace = [Vec::new(), Vec::new()];
    for (i, polled) in [false, true].into_iter().enumerate() {
        let mut c = server(Vec::new(), usize::MAX, 4096);
        assert_eq!(step(&mut c, polled), Ok(None));
        c.io.stream.input.extend([0x81, 0x81, 0, 0, 0, 0, 0xC0]);
        assert!(step(&mut c, polled).is_err(), "polled {polled}");
        let out = decode(&c.io.stream.output);
        assert_eq!(out.len(), 1);
        assert!(out[0].contains("1007"), "{out:?}");
        trace[i].push(step(&mut c, polled));
        c.io.stream.eof = true;
        trace[i].push(step(&mut c, polled));
        trace[i].push(step(&mut c, polled));
        assert!(c.is_closed());
    }
    assert_eq!(trace[0], trace[1]);
}
