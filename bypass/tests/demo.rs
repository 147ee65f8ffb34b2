//! The scripted exchange of the example, on a simulated clock, plus a refused
//! handshake: both run through smoltcp with no kernel socket.

use smoltcp::iface::SocketStorage;
use smoltcp::time::{Duration, Instant};
use tickwire_bypass::demo;
use tickwire_bypass::ws::Error;
use tickwire_bypass::{RingDevice, Session, Sizes, State};
use tickwire_codec::rand::MaskRng;
use tickwire_codec::ws::handshake::{ClientHandshake, HandshakeError};
use tickwire_codec::ws::{Config, ConnectionError};

const SIZES: Sizes = Sizes {
    tcp: 8 * 1024,
    ws: 8 * 1024,
};

/// A session over a 4-slot ring of 1500-byte frames, with its own handshake key and
/// seeds.
fn small_session<'s>(
    arena: &'s mut [u8],
    slots: &'s mut [SocketStorage<'s>],
    key: [u8; 16],
    mask_seed: [u8; 32],
    seed: u64,
) -> Session<'s, RingDevice<Vec<u8>, 4>, MaskRng> {
    let device = RingDevice::<_, 4>::new(vec![0u8; 4 * 1500]);
    let hs = ClientHandshake::new("127.0.0.1:9001", "/", key);
    Session::new(
        device,
        arena,
        SIZES,
        slots,
        hs,
        MaskRng::from_seed(mask_seed),
        Config::default(),
        seed,
        Instant::ZERO,
    )
    .expect("session")
}

/// Poll until both ends are open, nothing but the handshake on the wire; returns the
/// turns (polls) it took.
fn open(session: &mut Session<'_, RingDevice<Vec<u8>, 4>, MaskRng>, now: &mut Instant) -> usize {
    let mut turns = 0;
    while !(session.client.is_open() && session.server.is_open()) {
        session.poll(*now).expect("poll");
        turns += 1;
        assert!(session.server_recv().expect("server").is_none());
        assert!(session.client_recv().expect("client").is_none());
        *now += Duration::from_millis(1);
        assert!(*now < Instant::from_secs(1), "handshake stalled");
    }
    turns
}

#[test]
fn scripted_exchange_completes_on_a_simulated_clock() {
    let mut arena = vec![0u8; SIZES.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    // A small MTU (1500, like Ethernet): messages span several segments.
    let device = RingDevice::<_, 8>::new(vec![0u8; 8 * 1500]);
    let hs = ClientHandshake::new("127.0.0.1:9001", "/demo", [3; 16]);
    let mut session = Session::new(
        device,
        &mut arena,
        SIZES,
        &mut slots,
        hs,
        MaskRng::from_seed([9; 32]),
        Config::default(),
        1,
        Instant::ZERO,
    )
    .expect("session");
    let mut now = Instant::ZERO;
    let report = demo::run(&mut session, || {
        now += Duration::from_millis(1);
        now
    })
    .expect("script");
    assert_eq!(report.echoes, 3);
    assert!(report.server_text);
    assert_eq!((report.client_pongs, report.server_pongs), (1, 1));
    assert_eq!(report.server_saw_close, Some(1000));
    assert_eq!(report.client_saw_close, Some(1000));
    assert_eq!(session.client.state(), State::Closed);
    assert_eq!(session.server.state(), State::Closed);
    assert_eq!(session.link.device.dropped(), 0);
}

#[test]
fn a_bad_upgrade_request_is_refused_over_the_loop() {
    let mut arena = vec![0u8; SIZES.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let mut session = small_session(&mut arena, &mut slots, [5; 16], [1; 32], 2);
    // The client endpoint stays idle (its request is never flushed); its socket
    // is driven by hand with a request that lacks Sec-WebSocket-Version.
    let bad = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let mut now = Instant::ZERO;
    let mut sent = false;
    let mut refused = None;
    let mut answer = Vec::new();
    for _ in 0..100 {
        session.link.poll(now);
        let sock = session.link.client_socket();
        if !sent && sock.may_send() {
            assert_eq!(sock.send_slice(bad), Ok(bad.len()));
            sent = true;
        }
        if sock.can_recv() {
            let mut buf = [0u8; 512];
            let n = sock.recv_slice(&mut buf).expect("recv");
            answer.extend_from_slice(&buf[..n]);
        }
        match session.server_recv() {
            Ok(None) => {}
            Ok(Some(_)) => panic!("no message can arrive"),
            // The error is reported once; later calls say the connection is closed.
            Err(e) => {
                refused.get_or_insert(e);
            }
        }
        let sock = session.link.sockets.get_mut(session.link.server);
        session.server.flush(sock).expect("flush");
        now += Duration::from_millis(1);
    }
    assert_eq!(
        refused,
        Some(Error::Ws(ConnectionError::Handshake(
            HandshakeError::BadVersion
        )))
    );
    assert_eq!(session.server.state(), State::Closed);
    assert!(
        answer.starts_with(b"HTTP/1.1 426 Upgrade Required\r\n"),
        "got {:?}",
        String::from_utf8_lossy(&answer)
    );
}

#[test]
fn a_protocol_error_fails_the_connection_with_its_close_code() {
    let mut arena = vec![0u8; SIZES.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let mut session = small_session(&mut arena, &mut slots, [6; 16], [2; 32], 3);
    let mut now = Instant::ZERO;
    open(&mut session, &mut now);
    // An unmasked frame from the client, written under the endpoint's feet.
    let unmasked = [0x81, 0x02, b'h', b'i'];
    assert_eq!(
        session.link.client_socket().send_slice(&unmasked),
        Ok(unmasked.len())
    );
    let mut server_err = None;
    let mut client_close = None;
    for _ in 0..50 {
        session.poll(now).expect("poll");
        if let Err(e) = session.server_recv() {
            server_err.get_or_insert(e);
        }
        if let Ok(Some((tickwire_codec::ws::Message::Close(c), _))) = session.client_recv() {
            client_close = c.map(|c| c.code.0);
        }
        now += Duration::from_millis(1);
    }
    assert_eq!(
        server_err,
        Some(Error::Ws(ConnectionError::Protocol(
            tickwire_codec::ws::Error::UnmaskedFrame
        )))
    );
    assert_eq!(client_close, Some(1002));
    assert_eq!(session.server.state(), State::Closed);
    assert_eq!(session.client.state(), State::Closed);
}

#[test]
fn a_full_send_buffer_still_leaves_room_to_answer_pings() {
    let mut arena = vec![0u8; SIZES.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let mut session = small_session(&mut arena, &mut slots, [7; 16], [3; 32], 4);
    let mut now = Instant::ZERO;
    open(&mut session, &mut now);
    // Every turn both sides queue data until their send buffers refuse more:
    // large messages first, then small ones to fill the last gap.
    let (big, small) = ([0x5A; 700], [0xA5; 10]);
    let mut pongs = 0;
    let mut refused = 0;
    for turn in 0..200 {
        if turn % 10 == 0 {
            // Queued first: data sends then fill the rest.
            match session.server.tx().send_ping(b"still there?") {
                Ok(()) | Err(ConnectionError::Backpressure) => {}
                Err(e) => panic!("ping: {e}"),
            }
        }
        for server in [false, true] {
            for chunk in [&big[..], &small[..]] {
                loop {
                    let r = if server {
                        session.server.tx().send_binary(chunk)
                    } else {
                        session.client.tx().send_binary(chunk)
                    };
                    match r {
                        Ok(()) => {}
                        Err(ConnectionError::Backpressure) => {
                            refused += 1;
                            break;
                        }
                        Err(e) => panic!("send: {e}"),
                    }
                }
            }
        }
        // Full for the application, while the codec keeps its control room.
        assert!(session.client.tx().room() < small.len() + 6);
        assert!(session.server.tx().room() < small.len() + 2);
        session.poll(now).expect("poll");
        while let Some((msg, _)) = session.server_recv().expect("server recv") {
            if let tickwire_codec::ws::Message::Pong(p) = msg {
                assert_eq!(p, b"still there?");
                pongs += 1;
            }
        }
        while session.client_recv().expect("client recv").is_some() {}
        now += Duration::from_millis(1);
    }
    assert_eq!(refused, 800, "both send buffers were full every turn");
    assert!(pongs >= 10, "pongs answered under back-pressure: {pongs}");
}

#[test]
fn one_poll_settles_the_link_data_and_its_ack() {
    let mut arena = vec![0u8; SIZES.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let mut session = small_session(&mut arena, &mut slots, [5; 16], [6; 32], 7);
    let mut now = Instant::ZERO;
    open(&mut session, &mut now);
    for k in 0..50u8 {
        session.client.tx().send_binary(&[k; 128]).expect("send");
        session.poll(now).expect("poll");
        // Nothing left anywhere: the segment arrived, its ACK came back, and a
        // further turn of smoltcp has nothing to move.
        assert_eq!(session.link.device.queued(), 0, "message {k}");
        assert_eq!(session.link.client_socket().send_queue(), 0, "message {k}");
        assert!(
            !session.link.poll(now),
            "message {k}: the link was not idle"
        );
        match session.server_recv().expect("recv") {
            Some((tickwire_codec::ws::Message::Binary(b), _)) => assert_eq!(b, &[k; 128]),
            other => panic!("message {k}: {:?}", other.map(|(m, _)| m)),
        }
        now += Duration::from_micros(1);
    }
}

#[test]
fn a_poll_sends_what_waited_for_the_connection_in_the_same_turn() {
    // The upgrade request is queued before TCP connects: the first turn's flush finds
    // the socket still connecting, smoltcp completes the three-way handshake, and the
    // same turn hands the request over (a flush after the link moved).
    let mut arena = vec![0u8; SIZES.arena_len()];
    let mut slots = [SocketStorage::EMPTY; 2];
    let mut session = small_session(&mut arena, &mut slots, [8; 16], [2; 32], 3);
    let mut now = Instant::ZERO;
    let turns = open(&mut session, &mut now);
    // Turn 1: connect, request, the server answers; turn 2: the answer arrives.
    assert_eq!(turns, 2, "turns to open both ends");
    assert!(!session.client.wants_write() && !session.server.wants_write());
}
