//! Suite "bypass": one 128 B binary message at a time from a tickwire client
//! to a tickwire server in one thread, through a TCP stack: smoltcp in user
//! space (the kernel-bypass path of `bypass`) beside the kernel's
//! loopback TCP on 127.0.0.1. Same codec calls on both rows; only the stack
//! that carries the bytes differs.
//!
//! An operation is one message crossing alone: the client encodes it (masked,
//! fresh key), the stack carries it, the server decodes it (unmasks) and the
//! payload is touched. Nothing is batched across messages.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use tickwire_bypass::smoltcp::iface::SocketStorage;
use tickwire_bypass::smoltcp::time::{Duration, Instant};
use tickwire_bypass::{RingDevice, Session, Sizes};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::ClientHandshake;
use tickwire_codec::ws::{Config, FrameReader, FrameWriter, Message, Role};

use super::{Case, Setup, touch, unexpected};
use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::inputs::{SplitMix64, header_len};

/// Payload size.
pub const SIZE: usize = 128;

/// Distinct payloads cycled through.
const DISTINCT: usize = 16;

/// Bytes of one message on the wire (client role: masked): 2 header bytes,
/// a 16-bit length (126..=65535 bytes), the 4-byte key, the payload.
const WIRE: usize = 2 + 2 + 4 + SIZE;

const NOTE_SMOL: &str = "Tx::send_binary (FrameWriter, masked) -> Session::poll (send buffer into the smoltcp \
                         socket, Interface::poll through a no-alloc loopback ring device until idle: data \
                         segment + ACK) -> Endpoint::recv (socket buffer into FrameReader, unmask); clock: a \
                         counter, +1 us a message; no system call";
const NOTE_KERNEL: &str = "FrameWriter::encode_binary (masked) -> write(2) on a 127.0.0.1 TCP socket \
                           (TCP_NODELAY) -> read(2) on its peer into FrameReader::spare_mut -> \
                           FrameReader::next (unmask); both sockets in the measuring thread";

/// Scenario name.
pub fn name() -> String {
    format!("ws {SIZE}B message via codec + TCP stack, one thread (encode, carry, decode)")
}

/// Register the suite's rows.
pub fn register(_setup: &Setup, v: &mut Vec<Case<'static>>) {
    let s = name();
    v.push(Case::new(
        s.clone(),
        "tickwire + smoltcp",
        true,
        NOTE_SMOL,
        smoltcp,
    ));
    let mut k = Case::new(s, "tickwire + kernel TCP", false, NOTE_KERNEL, kernel);
    // Its cost is mostly in the kernel, which callgrind does not see.
    k.counts = false;
    v.push(k);
}

fn payloads() -> Vec<Vec<u8>> {
    let mut rng = SplitMix64::new(0x6279_7061_7373);
    (0..DISTINCT)
        .map(|_| (0..SIZE).map(|_| rng.next_u64() as u8).collect())
        .collect()
}

struct Smol<'s> {
    session: Session<'s, RingDevice<Vec<u8>, 16>, MaskRng>,
    now: Instant,
    ps: Vec<Vec<u8>>,
    i: usize,
}

impl Smol<'_> {
    /// One message across; returns the touched payload byte.
    #[inline]
    fn one(&mut self) -> u64 {
        let p = &self.ps[self.i % DISTINCT];
        self.i += 1;
        if let Err(e) = self.session.client.tx().send_binary(p) {
            unexpected(&e);
        }
        self.now += Duration::from_micros(1);
        if let Err(e) = self.session.poll(self.now) {
            unexpected(&e);
        }
        match self.session.server_recv() {
            Ok(Some((Message::Binary(b), _))) if b.len() == SIZE => touch(b),
            other => unexpected(&other.map(|o| o.map(|(m, _)| m))),
        }
    }
}

fn smoltcp(cfg: &RunConfig) -> Measurement {
    let sizes = Sizes {
        tcp: 64 * 1024,
        ws: 64 * 1024,
    };
    let mut arena = vec![0u8; sizes.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let device = RingDevice::<_, 16>::new(vec![0u8; 16 * 65535]);
    let mut rng = MaskRng::from_seed([0x42; 32]);
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let hs = ClientHandshake::new("127.0.0.1:9001", "/", nonce);
    let now = Instant::ZERO;
    let session = Session::new(
        device,
        &mut arena,
        sizes,
        &mut slots,
        hs,
        rng,
        Config::default(),
        7,
        now,
    )
    .expect("smoltcp session");
    let mut st = Smol {
        session,
        now,
        ps: payloads(),
        i: 0,
    };
    for _ in 0..100 {
        if st.session.client.is_open() && st.session.server.is_open() {
            break;
        }
        st.now += Duration::from_millis(1);
        st.session.poll(st.now).expect("poll");
        assert!(st.session.server_recv().expect("handshake").is_none());
        assert!(st.session.client_recv().expect("handshake").is_none());
    }
    assert!(st.session.client.is_open() && st.session.server.is_open());
    // Verify: every payload arrives intact.
    for k in 0..2 * DISTINCT {
        let want = st.ps[k % DISTINCT].clone();
        st.session.client.tx().send_binary(&want).expect("send");
        st.now += Duration::from_micros(1);
        st.session.poll(st.now).expect("poll");
        match st.session.server_recv() {
            Ok(Some((Message::Binary(b), _))) => assert_eq!(b, &want[..], "message {k}"),
            other => unexpected(&other.map(|o| o.map(|(m, _)| m))),
        }
    }
    let m = bench_batch(
        cfg,
        &mut st,
        |_| {},
        |st, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                acc = acc.wrapping_add(st.one());
            }
            std::hint::black_box(acc);
        },
    );
    assert_eq!(st.session.link.device.dropped(), 0);
    m
}

struct Kernel {
    client: TcpStream,
    server: TcpStream,
    writer: FrameWriter<MaskRng>,
    out: [u8; WIRE],
    reader: FrameReader<Vec<u8>>,
    ps: Vec<Vec<u8>>,
    i: usize,
}

impl Kernel {
    /// One message across; returns the touched payload byte.
    #[inline]
    fn one(&mut self) -> u64 {
        let p = &self.ps[self.i % DISTINCT];
        self.i += 1;
        let n = match self.writer.encode_binary(p, &mut self.out) {
            Ok(n) => n,
            Err(e) => unexpected(&e),
        };
        if let Err(e) = self.client.write_all(&self.out[..n]) {
            unexpected(&e);
        }
        while self.reader.buffered() < WIRE {
            match self.server.read(self.reader.spare_mut()) {
                Ok(k) if k > 0 => self.reader.commit(k),
                other => unexpected(&other),
            }
        }
        match self.reader.next() {
            Ok(Some(Message::Binary(b))) if b.len() == SIZE => touch(b),
            other => unexpected(&other),
        }
    }
}

fn kernel(cfg: &RunConfig) -> Measurement {
    assert_eq!(WIRE, header_len(SIZE, true) + SIZE);
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let client = TcpStream::connect(l.local_addr().expect("local addr")).expect("connect");
    let (server, _) = l.accept().expect("accept");
    client.set_nodelay(true).expect("nodelay");
    server.set_nodelay(true).expect("nodelay");
    let mut st = Kernel {
        client,
        server,
        writer: FrameWriter::client(MaskRng::from_seed([0x42; 32])),
        out: [0; WIRE],
        reader: FrameReader::new(Role::Server, vec![0u8; 64 * 1024]),
        ps: payloads(),
        i: 0,
    };
    // Verify: every payload arrives intact.
    for k in 0..2 * DISTINCT {
        let want = st.ps[k % DISTINCT].clone();
        let n = st.writer.encode_binary(&want, &mut st.out).expect("encode");
        st.client.write_all(&st.out[..n]).expect("write");
        while st.reader.buffered() < n {
            let got = st.server.read(st.reader.spare_mut()).expect("read");
            assert!(got > 0, "peer closed");
            st.reader.commit(got);
        }
        match st.reader.next() {
            Ok(Some(Message::Binary(b))) => assert_eq!(b, &want[..], "message {k}"),
            other => unexpected(&other),
        }
        st.i += 1;
    }
    bench_batch(
        cfg,
        &mut st,
        |_| {},
        |st, n| {
            let mut acc = 0u64;
            for _ in 0..n {
                acc = acc.wrapping_add(st.one());
            }
            std::hint::black_box(acc);
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both rows verify their messages and measure briefly.
    #[test]
    fn both_rows_verify_and_measure() {
        let mut v = Vec::new();
        register(
            &Setup {
                batch: 8,
                core: 0,
                peer_core: None,
            },
            &mut v,
        );
        assert_eq!(v.len(), 2);
        let cfg = RunConfig {
            batch: 8,
            warmup: std::time::Duration::ZERO,
            measure: std::time::Duration::from_millis(5),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
