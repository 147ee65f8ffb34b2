//! In memory: 77 B JSON quote ticks, one unmasked WebSocket text frame per TLS
//! 1.3 record, as an exchange's server sends them. A sample is B ticks:
//! decrypt + WebSocket parse + serde_json deserialize into [`Tick`], reported
//! per tick. Before each batch (untimed) a rustls server connection encrypts
//! the next B records into an in-memory pipe; the client side is tickwire's
//! TlsStream (the codec's TlsCodec, decrypting straight into the FrameReader's
//! buffer) or tungstenite over rustls's StreamOwned.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::hint::black_box;
use std::io::{self, Read, Write};
use std::rc::Rc;

use serde::Deserialize;
use tickwire::codec::ws::{FrameReader, Message, Role};
use tickwire::tls::TlsStream;
use tickwire::tls::rustls::pki_types::ServerName;
use tickwire::tls::rustls::{ClientConnection, ConnectionCommon, ServerConnection, StreamOwned};
use tungstenite::protocol::{Message as TMessage, Role as TRole, WebSocket as TSocket};

use crate::harness::{Measurement, RunConfig, bench_batch};
use crate::suites::{Case, unexpected};

/// The tick: 77 bytes of JSON.
pub const TICK: &str =
    r#"{"u":4009002,"s":"BTCUSDT","b":"64250.10","B":"1.25","a":"64250.2","A":"0.7"}"#;

/// Scenario name.
pub const SCENARIO: &str = "TLS 1.3 77B JSON quote tick: decrypt + parse + serde_json deserialize";

const NOTE_TW: &str = "TlsStream::read into FrameReader::spare_mut (one TLS record per tick; TLS 1.3 records \
                       mode: each record opened in place with the provider's AEAD, plaintext copied once \
                       into the reader), next() per message, serde_json::from_str::<Tick> (borrowed &str fields)";
const NOTE_TUNG: &str = "WebSocket<StreamOwned<ClientConnection, _>>::read() per message (rustls decrypts \
                         into its buffer, tungstenite copies into its own), serde_json::from_str::<Tick>";

/// The deserialized tick (the same struct for every library).
#[derive(Debug, Deserialize, PartialEq)]
pub struct Tick<'a> {
    /// Update id.
    pub u: u64,
    /// Symbol.
    pub s: &'a str,
    /// Best bid.
    pub b: &'a str,
    /// Bid quantity.
    #[serde(rename = "B")]
    pub bid_qty: &'a str,
    /// Best ask.
    pub a: &'a str,
    /// Ask quantity.
    #[serde(rename = "A")]
    pub ask_qty: &'a str,
}

pub(super) fn cases(v: &mut Vec<Case<'static>>) {
    assert_eq!(TICK.len(), 77);
    v.push(Case::new(SCENARIO, "tickwire", true, NOTE_TW, tickwire));
    v.push(Case::new(
        SCENARIO,
        "tungstenite 0.30 + rustls 0.23",
        false,
        NOTE_TUNG,
        tungstenite,
    ));
    v.push(Case::new(
        SCENARIO,
        super::nexus::LIB,
        false,
        super::nexus::NOTE_TICK,
        super::nexus::tick,
    ));
}

/// One end of an in-memory duplex pipe; reads `WouldBlock` when empty.
pub(super) struct End {
    rx: Rc<RefCell<VecDeque<u8>>>,
    tx: Rc<RefCell<VecDeque<u8>>>,
}

pub(super) fn pipe() -> (End, End) {
    let a = Rc::new(RefCell::new(VecDeque::with_capacity(1 << 16)));
    let b = Rc::new(RefCell::new(VecDeque::with_capacity(1 << 16)));
    (
        End {
            rx: a.clone(),
            tx: b.clone(),
        },
        End { rx: b, tx: a },
    )
}

impl Read for End {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rx = self.rx.borrow_mut();
        if rx.is_empty() && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        rx.read(buf)
    }
}

impl Write for End {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tx.borrow_mut().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Move a rustls connection's records both ways until nothing moves.
pub(super) fn pump<D>(c: &mut ConnectionCommon<D>, io: &mut End) {
    loop {
        let mut moved = false;
        match c.read_tls(io) {
            Ok(n) if n > 0 => {
                c.process_new_packets().expect("TLS records");
                moved = true;
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("pipe: {e}"),
        }
        while c.wants_write() {
            c.write_tls(io).expect("pipe write");
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

/// The exchange side: a handshaken rustls server that writes B ticks.
pub(super) struct Exchange {
    pub(super) conn: ServerConnection,
    pub(super) io: End,
    frame: Vec<u8>,
}

impl Exchange {
    pub(super) fn new(server: &tickwire::tls::TlsServerConfig, io: End) -> Self {
        let mut frame = vec![0x81, TICK.len() as u8];
        frame.extend_from_slice(TICK.as_bytes());
        Exchange {
            conn: ServerConnection::new(server.server_config().clone()).expect("server"),
            io,
            frame,
        }
    }

    /// B ticks, each its own record, into the pipe.
    pub(super) fn send(&mut self, b: usize) {
        for _ in 0..b {
            self.conn
                .writer()
                .write_all(&self.frame)
                .expect("plaintext");
        }
        pump(&mut self.conn, &mut self.io);
    }
}

pub(super) fn check(t: &Tick<'_>) {
    let want = Tick {
        u: 4009002,
        s: "BTCUSDT",
        b: "64250.10",
        bid_qty: "1.25",
        a: "64250.2",
        ask_qty: "0.7",
    };
    if *t != want {
        unexpected(t);
    }
}

/// Deserialize one tick's text (checked against the input when `verify`).
#[inline(always)]
pub(super) fn consume(t: &str, verify: bool) {
    match serde_json::from_str::<Tick<'_>>(t) {
        Ok(tick) => {
            if verify {
                check(&tick);
            }
            black_box(tick.u);
        }
        Err(e) => unexpected(&e),
    }
}

struct Tw {
    tls: TlsStream<End>,
    reader: FrameReader<Vec<u8>>,
    ex: Exchange,
    b: usize,
}

#[inline(always)]
fn tw_batch(s: &mut Tw, b: usize, verify: bool) {
    let mut got = 0;
    while got < b {
        let spare = s.reader.spare_mut();
        match s.tls.read(spare) {
            Ok(n) if n > 0 => s.reader.commit(n),
            other => unexpected(&other),
        }
        loop {
            match s.reader.next() {
                Ok(Some(Message::Text(t))) => {
                    consume(t, verify);
                    got += 1;
                }
                Ok(None) => break,
                other => unexpected(&other),
            }
        }
    }
}

fn tickwire(cfg: &RunConfig) -> Measurement {
    let (client, server) = super::configs();
    let (c_end, s_end) = pipe();
    let mut tls = TlsStream::client(c_end, &client, "localhost").expect("client");
    let mut ex = Exchange::new(&server, s_end);
    for _ in 0..20 {
        let done = match tls.handshake() {
            Ok(done) => done,
            Err(e) => panic!("handshake: {e}"),
        };
        pump(&mut ex.conn, &mut ex.io);
        if done && !ex.conn.is_handshaking() {
            break;
        }
    }
    assert!(!tls.codec().is_handshaking() && !ex.conn.is_handshaking());
    let b = cfg.batch.max(1);
    let mut s = Tw {
        tls,
        reader: FrameReader::new(Role::Client, vec![0u8; 64 << 10]),
        ex,
        b,
    };
    s.ex.send(b);
    tw_batch(&mut s, b, true);
    assert!(s.tls.codec().is_records_mode(), "TLS 1.3 records mode");
    bench_batch(
        cfg,
        &mut s,
        |s| {
            let b = s.b;
            s.ex.send(b)
        },
        |s, b| tw_batch(s, b, false),
    )
}

struct Tung {
    ws: TSocket<StreamOwned<ClientConnection, End>>,
    ex: Exchange,
    b: usize,
}

#[inline(always)]
fn tung_batch(s: &mut Tung, b: usize, verify: bool) {
    for _ in 0..b {
        match s.ws.read() {
            Ok(TMessage::Text(t)) => consume(t.as_str(), verify),
            other => unexpected(&other),
        }
    }
}

/// A rustls client with `client`'s settings and an [`Exchange`], handshaken
/// over a pipe: the client, its end of the pipe, the exchange.
pub(super) fn rustls_client(
    client: &tickwire::tls::TlsConfig,
    server: &tickwire::tls::TlsServerConfig,
) -> (ClientConnection, End, Exchange) {
    let (mut c_end, s_end) = pipe();
    let name = ServerName::try_from("localhost").expect("name");
    let mut conn = ClientConnection::new(client.client_config().clone(), name).expect("client");
    let mut ex = Exchange::new(server, s_end);
    for _ in 0..20 {
        pump(&mut conn, &mut c_end);
        pump(&mut ex.conn, &mut ex.io);
        if !conn.is_handshaking() && !ex.conn.is_handshaking() {
            break;
        }
    }
    assert!(!conn.is_handshaking() && !ex.conn.is_handshaking());
    (conn, c_end, ex)
}

fn tungstenite(cfg: &RunConfig) -> Measurement {
    let (client, server) = super::configs();
    let (conn, c_end, ex) = rustls_client(&client, &server);
    let b = cfg.batch.max(1);
    let mut s = Tung {
        ws: TSocket::from_raw_socket(StreamOwned::new(conn, c_end), TRole::Client, None),
        ex,
        b,
    };
    s.ex.send(b);
    tung_batch(&mut s, b, true);
    bench_batch(
        cfg,
        &mut s,
        |s| {
            let b = s.b;
            s.ex.send(b)
        },
        |s, b| tung_batch(s, b, false),
    )
}
