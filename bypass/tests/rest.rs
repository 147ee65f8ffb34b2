//! The REST script over the smoltcp loop, on a second connection beside the
//! WebSocket one: RequestWriter -> smoltcp -> RequestReader -> handler ->
//! ResponseWriter -> smoltcp -> ResponseReader.

use smoltcp::iface::SocketStorage;
use smoltcp::time::{Duration, Instant};
use tickwire_bypass::demo::{self, SYMBOL};
use tickwire_bypass::link::TcpBuffers;
use tickwire_bypass::rest::{RestClient, RestServer};
use tickwire_bypass::{RingDevice, Session, Sizes};
use tickwire_codec::http::RequestWriter;
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::Config;
use tickwire_codec::ws::handshake::ClientHandshake;

// The counting allocator shared with the codec's no-allocation tests.
#[path = "../../codec/tests/common/mod.rs"]
mod common;
use common::allocs;

const SIZES: Sizes = Sizes {
    tcp: 4 * 1024,
    ws: 4 * 1024,
};

#[test]
fn rest_exchange_beside_the_websocket_in_one_loop() {
    let (mut session, pair) = rest_pair();

    let mut writer = RequestWriter::new([0u8; 1024], "127.0.0.1:8080").expect("writer");
    writer
        .default_header("Accept", "application/json")
        .expect("default header");
    let mut client = RestClient::new(writer, [0u8; 2048]);
    let mut server = RestServer::new([0u8; 2048], [0u8; 2048]);

    let mut now = Instant::ZERO;
    let mut clock = || {
        now += Duration::from_millis(1);
        now
    };
    // The WebSocket script first, then REST over the same loop: the REST
    // connection was opened by the same polls. Neither allocates.
    let before = allocs();
    let ws = demo::run(&mut session, &mut clock).expect("websocket script");
    let r = demo::run_rest(&mut session, pair, &mut client, &mut server, &mut clock)
        .expect("rest script");
    assert_eq!(allocs() - before, 0, "heap allocations in the loop");
    assert_eq!(ws.echoes, 3);
    assert_eq!(r.quote, 200, "quote for {SYMBOL}");
    assert_eq!(r.order, 201);
    assert_eq!(r.missing, 404);
    assert_eq!(r.served, 3);
    assert_eq!(session.link.device.dropped(), 0);
}

/// The session of a test, and its REST pair (client and server sockets).
type RestPair = (
    Session<'static, RingDevice<Vec<u8>, 8>, MaskRng>,
    tickwire_bypass::link::Pair,
);

/// A session with the REST pair beside the WebSocket connection; its buffers live as
/// long as the test process.
fn rest_pair() -> RestPair {
    let arena: &'static mut [u8] = vec![0u8; SIZES.arena_len()].leak();
    let rest_tcp: &'static mut [u8] = vec![0u8; 4 * 4096].leak();
    let slots: &'static mut [SocketStorage<'static>] =
        Box::leak(Box::new([SocketStorage::EMPTY; 4]));
    let device = RingDevice::<_, 8>::new(vec![0u8; 8 * 1500]);
    let hs = ClientHandshake::new("127.0.0.1:9001", "/", [4; 16]);
    let mut session = Session::new(
        device,
        arena,
        SIZES,
        slots,
        hs,
        MaskRng::from_seed([8; 32]),
        Config::default(),
        5,
        Instant::ZERO,
    )
    .expect("session");
    let (c, s) = rest_tcp.split_at_mut(2 * 4096);
    let (crx, ctx) = c.split_at_mut(4096);
    let (srx, stx) = s.split_at_mut(4096);
    let pair = session
        .link
        .add_pair(
            TcpBuffers { rx: crx, tx: ctx },
            TcpBuffers { rx: srx, tx: stx },
            8080,
            49153,
        )
        .expect("second connection");
    (session, pair)
}

#[test]
fn keep_alive_rules_and_timeouts_hold_over_smoltcp() {
    use smoltcp::socket::tcp;
    use tickwire_bypass::rest::RestError;
    use tickwire_bypass::ws::codec_instant;
    use tickwire_codec::http::ClientError;

    let (session, pair) = rest_pair();
    let writer = RequestWriter::new([0u8; 1024], "127.0.0.1:8080").expect("writer");
    let mut client = RestClient::new(writer, [0u8; 2048]);
    let mut server = RestServer::new([0u8; 2048], [0u8; 2048]);
    let mut now = Instant::ZERO;
    let turn = |session: &mut Session<'_, _, _>, now: &mut Instant| {
        *now += Duration::from_millis(1);
        session.poll(*now).expect("poll");
    };
    // Poll until the client socket can send (the connection is up).
    let up = |session: &mut RestPair, now: &mut Instant| {
        for _ in 0..100 {
            turn(&mut session.0, now);
            if session
                .0
                .link
                .sockets
                .get::<tcp::Socket>(session.1.client)
                .may_send()
            {
                break;
            }
        }
    };
    let (mut session, pair) = {
        let mut p = (session, pair);
        up(&mut p, &mut now);
        p
    };
    // Request 1: answered with `Connection: close`: the client closes the socket and
    // will not send on it again.
    let sock = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
    client.send(sock, |w| w.get("/a").finish()).expect("send");
    let mut status = None;
    for _ in 0..100 {
        turn(&mut session, &mut now);
        let s = session.link.sockets.get_mut::<tcp::Socket>(pair.server);
        while let Some((_req, mut resp)) = server.recv(s).expect("server recv") {
            resp.respond(200, "OK", &[("Connection", "close")], b"a")
                .expect("respond");
        }
        server.flush(s).expect("flush");
        let c = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
        if let Some(r) = client.recv(c).expect("recv") {
            status = Some((r.status(), r.keep_alive()));
            break;
        }
    }
    assert_eq!(status, Some((200, false)));
    let c = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
    assert!(!c.may_send(), "the client closed its half");
    assert!(matches!(
        client.send(c, |w| w.get("/b").finish()),
        Err(RestError::NotConnected)
    ));
    assert_eq!(client.stats().connects, 1);

    // A request nobody answers: the read timeout, on the loop's instants.
    let (session, pair) = rest_pair();
    let writer = RequestWriter::new([0u8; 1024], "127.0.0.1:8080").expect("writer");
    let mut client = RestClient::new(writer, [0u8; 2048]);
    let mut now = Instant::ZERO;
    let (mut session, pair) = {
        let mut p = (session, pair);
        up(&mut p, &mut now);
        p
    };
    client.handle_timeout(codec_instant(now));
    let c = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
    client.send(c, |w| w.get("/slow").finish()).expect("send");
    turn(&mut session, &mut now);
    client.handle_timeout(codec_instant(now));
    let c = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
    assert!(client.recv(c).expect("recv").is_none());
    let wake = client.poll_timeout().expect("a read timer");
    client.handle_timeout(wake);
    let c = session.link.sockets.get_mut::<tcp::Socket>(pair.client);
    assert!(matches!(
        client.recv(c),
        Err(RestError::Client(ClientError::ReadTimeout))
    ));
    assert!(!c.may_send(), "closed after the timeout");
}
