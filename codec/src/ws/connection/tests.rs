//! The connection state machine driven with instants and in-memory byte moves: no
//! sockets, no sleeps, deterministic (and run under Miri).

use core::time::Duration;
use std::vec;
use std::vec::Vec;

use super::doc_pump as pump;
use super::*;
use crate::rand::MaskRng;
use crate::ws::handshake::ClientHandshake;

type Client = Connection<Vec<u8>, Vec<u8>, MaskRng>;
type Server = Connection<Vec<u8>, Vec<u8>, NoMask>;

const T0: Instant = Instant::from_nanos(1_000_000_000);

fn at(secs: u64) -> Instant {
    T0 + Duration::from_secs(secs)
}

fn client_with(settings: &Settings, protocols: &[&str]) -> Client {
    let hs = ClientHandshake::new("example.com", "/feed", [7; 16]).protocols(protocols);
    Connection::client(
        &hs,
        vec![0; 4096],
        vec![0; 2048],
        MaskRng::from_seed([1; 32]),
        settings,
        T0,
    )
    .unwrap()
}

fn server_with(settings: &Settings) -> Server {
    Connection::server(vec![0; 4096], vec![0; 2048], settings, T0)
}

fn open_pair(client: Settings, server: Settings) -> (Client, Server) {
    let mut c = client_with(&client, &[]);
    let mut s = server_with(&server);
    pump(&mut c, &mut s);
    assert!(s.handle_upgrade(|_| Answer::default()).unwrap());
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(None));
    assert_eq!((c.state(), s.state()), (State::Open, State::Open));
    (c, s)
}

fn open() -> (Client, Server) {
    open_pair(Settings::default(), Settings::default())
}

#[test]
fn messages_flow_both_ways_after_the_handshake() {
    let (mut c, mut s) = open();
    c.send_text("hello").unwrap();
    c.send_binary(&[1, 2, 3]).unwrap();
    pump(&mut c, &mut s);
    assert_eq!(s.poll_message(), Ok(Some(Message::Text("hello"))));
    assert_eq!(s.poll_message(), Ok(Some(Message::Binary(&[1, 2, 3]))));
    assert_eq!(s.poll_message(), Ok(None));
    // A handler answers while the message is still borrowed.
    c.send_text("echo me").unwrap();
    pump(&mut c, &mut s);
    let (msg, tx) = s.poll_message_with_sender().unwrap().unwrap();
    let Message::Text(t) = msg else { panic!() };
    tx.send_text(t).unwrap();
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(Some(Message::Text("echo me"))));
}

#[test]
fn frames_behind_the_101_are_the_first_messages() {
    let mut c = client_with(&Settings::default(), &[]);
    let mut s = server_with(&Settings::default());
    pump(&mut c, &mut s);
    assert!(s.handle_upgrade(|_| Answer::default()).unwrap());
    s.send_text("first").unwrap();
    // The 101 and the frame arrive in one read.
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(Some(Message::Text("first"))));
}

#[test]
fn a_handshake_split_into_single_bytes_completes() {
    let mut c = client_with(&Settings::default(), &["chat"]);
    let mut s = server_with(&Settings::default());
    let req: Vec<u8> = c.transmit().to_vec();
    c.handle_written(req.len());
    for (i, b) in req.iter().enumerate() {
        assert_eq!(s.feed(&[*b]), 1);
        let done = s
            .handle_upgrade(|r| {
                assert_eq!(r.path, "/feed");
                Answer::Accept {
                    protocol: Some("chat"),
                    headers: &[("X-Venue", "test")],
                }
            })
            .unwrap();
        assert_eq!(done, i + 1 == req.len());
    }
    let resp: Vec<u8> = s.transmit().to_vec();
    s.handle_written(resp.len());
    for b in &resp {
        assert_eq!(c.poll_message(), Ok(None));
        c.feed(&[*b]);
    }
    assert_eq!(c.poll_message(), Ok(None));
    assert_eq!(c.state(), State::Open);
    assert_eq!(c.protocol(), Some("chat"));
    assert_eq!(s.protocol(), Some("chat"));
}

#[test]
fn a_bad_request_is_refused_with_its_status() {
    let mut s = server_with(&Settings::default());
    s.feed(b"POST / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(
        s.poll_message(),
        Err(ConnectionError::Handshake(HandshakeError::BadMethod))
    );
    assert!(s.transmit().starts_with(b"HTTP/1.1 405"));
    assert_eq!(s.state(), State::Closed);
    assert!(!s.wants_shutdown());
    let n = s.transmit().len();
    s.handle_written(n);
    assert!(s.wants_shutdown());
    assert_eq!(s.poll_message(), Err(ConnectionError::AlreadyClosed));
}

#[test]
fn a_refusal_from_the_decision_is_sent() {
    let mut c = client_with(&Settings::default(), &[]);
    let mut s = server_with(&Settings::default());
    pump(&mut c, &mut s);
    let e = s.handle_upgrade(|_| Answer::Reject(HandshakeError::InvalidPath));
    assert_eq!(
        e,
        Err(ConnectionError::Handshake(HandshakeError::InvalidPath))
    );
    pump(&mut s, &mut c);
    assert_eq!(
        c.poll_message(),
        Err(ConnectionError::Handshake(HandshakeError::BadStatus(400)))
    );
}

#[test]
fn an_application_refusal_carries_its_status_headers_and_body() {
    let mut c = client_with(&Settings::default(), &[]);
    let mut s = server_with(&Settings::default());
    pump(&mut c, &mut s);
    let e = s.handle_upgrade(|req| {
        assert_eq!(req.path, "/feed");
        Answer::Refuse {
            status: 403,
            headers: &[("X-Why", "origin")],
            body: b"not from here",
        }
    });
    assert_eq!(
        e,
        Err(ConnectionError::Handshake(HandshakeError::Refused(403)))
    );
    assert_eq!(
        s.transmit(),
        b"HTTP/1.1 403 Forbidden\r\nX-Why: origin\r\nConnection: close\r\n\
          Content-Length: 13\r\n\r\nnot from here"
    );
    pump(&mut s, &mut c);
    assert!(s.wants_shutdown());
    assert_eq!(
        c.poll_message(),
        Err(ConnectionError::Handshake(HandshakeError::BadStatus(403)))
    );
}

#[test]
fn a_refusal_that_cannot_be_written_is_a_400() {
    for (status, headers, body) in [
        (200, &[][..], &b""[..]),
        (401, &[("Content-Length", "1")][..], &b""[..]),
        (401, &[][..], &[0u8; 4096][..]),
    ] {
        let mut c = client_with(&Settings::default(), &[]);
        let mut s = server_with(&Settings::default());
        pump(&mut c, &mut s);
        let e = s.handle_upgrade(|_| Answer::Refuse {
            status,
            headers,
            body,
        });
        assert!(
            matches!(
                e,
                Err(ConnectionError::Handshake(
                    HandshakeError::InvalidHeader | HandshakeError::BufferTooSmall
                ))
            ),
            "{e:?}"
        );
        assert!(s.transmit().starts_with(b"HTTP/1.1 400 "), "{status}");
    }
}

#[test]
fn a_wrong_accept_fails_the_client() {
    let mut c = client_with(&Settings::default(), &[]);
    c.feed(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
    );
    assert_eq!(
        c.poll_message(),
        Err(ConnectionError::Handshake(HandshakeError::BadAccept))
    );
    assert!(c.is_failed());
}

#[test]
fn handshake_timeout_is_enforced_with_instants() {
    let mut s = server_with(&Settings::default());
    s.feed(b"GET / HTTP/1.1\r\n");
    assert_eq!(s.poll_timeout(), Some(at(10)));
    assert_eq!(s.handle_timeout(at(9)), Ok(()));
    assert_eq!(
        s.handle_timeout(at(10)),
        Err(ConnectionError::HandshakeTimeout)
    );
    assert_eq!(s.state(), State::Closed);
    assert!(s.wants_shutdown());
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn pings_are_answered_before_they_are_returned() {
    let (mut c, mut s) = open();
    c.send_ping(b"p1").unwrap();
    pump(&mut c, &mut s);
    assert_eq!(s.poll_message(), Ok(Some(Message::Ping(b"p1"))));
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(Some(Message::Pong(b"p1"))));
}

#[test]
fn pongs_are_never_blocked_by_a_full_buffer() {
    let (mut c, mut s) = open();
    // The server's application fills its output until it is refused.
    let chunk = [b'x'; 100];
    while s.send_binary(&chunk).is_ok() {}
    assert_eq!(s.send_binary(&chunk), Err(ConnectionError::Backpressure));
    // Pings keep coming; every one is answered, none waits for the application.
    // 125-byte payloads: two pongs fill the reserved room, the rest are held.
    for i in 0..5u8 {
        c.send_ping(&[i; 125]).unwrap();
        pump(&mut c, &mut s);
        assert_eq!(s.poll_message(), Ok(Some(Message::Ping(&[i; 125]))));
    }
    // The latest pong waits in the held slot, ahead of any message the application
    // queues after it: even the smallest is refused until the pong is out.
    assert_eq!(s.sender().room(), 0);
    assert_eq!(s.send_binary(b""), Err(ConnectionError::Backpressure));
    let mut pongs = Vec::new();
    for _ in 0..100 {
        pump(&mut s, &mut c);
        while let Some(m) = c.poll_message().unwrap() {
            if let Message::Pong(p) = m {
                pongs.push(p[0]);
            }
        }
    }
    assert!(!pongs.is_empty());
    assert_eq!(pongs.last(), Some(&4), "the latest ping is answered");
    assert!(pongs.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn keepalive_pings_after_the_idle_interval() {
    let settings = Settings {
        keepalive: Some(Duration::from_secs(10)),
        ..Settings::default()
    };
    let (mut c, mut s) = open_pair(Settings::default(), settings);
    // Bytes arrived (the handshake): the timer arms at the next handle_timeout.
    assert!(s.poll_timeout().is_some_and(|t| t <= T0));
    s.handle_timeout(at(1)).unwrap();
    assert_eq!(s.poll_timeout(), Some(at(11)));
    s.handle_timeout(at(10)).unwrap();
    assert!(s.transmit().is_empty());
    s.handle_timeout(at(11)).unwrap();
    assert!(!s.transmit().is_empty(), "a keepalive ping is queued");
    assert_eq!(s.poll_timeout(), Some(at(21)));
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(Some(Message::Ping(b""))));
    pump(&mut c, &mut s);
    assert_eq!(s.poll_message(), Ok(Some(Message::Pong(b""))));
    // The pong was a sign of life: the idle interval starts again from it.
    s.handle_timeout(at(12)).unwrap();
    assert_eq!(s.poll_timeout(), Some(at(22)));
}

#[test]
fn a_silent_peer_is_declared_dead() {
    let settings = Settings {
        keepalive: Some(Duration::from_secs(5)),
        dead_peer_timeout: Some(Duration::from_secs(15)),
        ..Settings::default()
    };
    let (_c, mut s) = open_pair(Settings::default(), settings);
    s.handle_timeout(at(0)).unwrap();
    s.handle_timeout(at(5)).unwrap();
    s.handle_timeout(at(10)).unwrap();
    assert_eq!(s.poll_timeout(), Some(at(15)));
    assert_eq!(s.handle_timeout(at(15)), Err(ConnectionError::DeadPeer));
    assert_eq!(s.state(), State::Closed);
    assert!(s.is_failed());
    assert!(s.transmit().is_empty(), "no close frame to a dead peer");
    assert!(s.wants_shutdown());
    assert_eq!(s.poll_message(), Err(ConnectionError::AlreadyClosed));
}

#[test]
fn a_send_stuck_behind_a_peer_that_stopped_reading_ends_as_dead_peer() {
    // The sending half alone (what a transport holds while a message borrows the
    // reader) keeps the dead-peer clock: its output full, nothing received.
    let settings = Settings {
        keepalive: Some(Duration::from_secs(5)),
        dead_peer_timeout: Some(Duration::from_secs(15)),
        ..Settings::default()
    };
    let (_c, mut s) = open_pair(Settings::default(), settings);
    s.handle_timeout(at(0)).unwrap();
    while s.send_binary(&[0x55; 500]).is_ok() {}
    assert_eq!(
        s.send_binary(&[0x55; 500]),
        Err(ConnectionError::Backpressure)
    );
    let tx = s.sender();
    assert_eq!(tx.poll_timeout(), Some(at(5)));
    tx.handle_timeout(at(5)).unwrap(); // a keepalive ping finds no room: nothing queued
    assert_eq!(tx.poll_timeout(), Some(at(10)));
    tx.handle_timeout(at(10)).unwrap();
    assert_eq!(tx.poll_timeout(), Some(at(15)));
    assert_eq!(tx.handle_timeout(at(15)), Err(ConnectionError::DeadPeer));
    assert!(
        tx.transmit().is_empty(),
        "what was queued for a dead peer is dropped"
    );
    assert_eq!(s.state(), State::Closed);
    assert!(s.is_failed());
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn the_sender_and_the_connection_share_one_clock() {
    let settings = Settings {
        dead_peer_timeout: Some(Duration::from_secs(15)),
        ..Settings::default()
    };
    let (mut c, mut s) = open_pair(Settings::default(), settings);
    s.handle_timeout(at(0)).unwrap();
    c.send_text("alive").unwrap();
    pump(&mut c, &mut s);
    // Bytes read count at the next handle_timeout, whichever half runs it.
    assert_eq!(s.sender().poll_timeout(), Some(at(0)));
    s.sender().handle_timeout(at(10)).unwrap();
    assert_eq!(s.poll_timeout(), Some(at(25)));
    assert_eq!(s.handle_timeout(at(24)), Ok(()));
    assert_eq!(s.handle_timeout(at(25)), Err(ConnectionError::DeadPeer));
}

#[test]
fn a_live_peer_is_not_declared_dead() {
    let settings = Settings {
        dead_peer_timeout: Some(Duration::from_secs(15)),
        ..Settings::default()
    };
    let (mut c, mut s) = open_pair(Settings::default(), settings);
    for secs in (0..60).step_by(10) {
        c.send_text("tick").unwrap();
        pump(&mut c, &mut s);
        assert_eq!(s.poll_message(), Ok(Some(Message::Text("tick"))));
        assert_eq!(s.handle_timeout(at(secs)), Ok(()));
    }
}

#[test]
fn close_timeout_runs_from_the_next_handle_timeout() {
    let (mut c, _s) = open();
    c.handle_timeout(at(100)).unwrap();
    c.close(Some(CloseCode::NORMAL), "bye").unwrap();
    assert_eq!(c.state(), State::Closing);
    assert_eq!(c.send_text("x"), Err(ConnectionError::AlreadyClosed));
    // Due now: the caller passes the current time.
    assert_eq!(c.poll_timeout(), Some(at(100)));
    c.handle_timeout(at(200)).unwrap();
    assert_eq!(c.poll_timeout(), Some(at(205)));
    assert_eq!(c.handle_timeout(at(204)), Ok(()));
    assert_eq!(
        c.handle_timeout(at(205)),
        Err(ConnectionError::CloseTimeout)
    );
    assert_eq!(c.state(), State::Closed);
    assert!(c.wants_shutdown() || !c.transmit().is_empty());
}

#[test]
fn close_initiated_by_us_completes_with_the_peers_close() {
    let (mut c, mut s) = open();
    c.close(Some(CloseCode::NORMAL), "done").unwrap();
    s.send_text("in flight").unwrap();
    pump(&mut c, &mut s);
    match s.poll_message() {
        Ok(Some(Message::Close(Some(f)))) => assert_eq!(f.code, CloseCode::NORMAL),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.state(), State::Closed);
    pump(&mut s, &mut c);
    // Data after our close is discarded; the echo completes the handshake.
    assert!(matches!(c.poll_message(), Ok(Some(Message::Close(_)))));
    assert_eq!(c.state(), State::Closed);
    assert!(!c.is_failed() && !s.is_failed());
    assert_eq!(c.poll_message(), Ok(None));
    assert!(c.wants_shutdown() && s.wants_shutdown());
    assert_eq!(c.handle_eof(), Ok(()));
}

#[test]
fn closes_crossing_each_other_both_complete() {
    let (mut c, mut s) = open();
    c.close(Some(CloseCode::NORMAL), "").unwrap();
    s.close(Some(CloseCode::GOING_AWAY), "").unwrap();
    pump(&mut c, &mut s);
    pump(&mut s, &mut c);
    assert!(matches!(s.poll_message(), Ok(Some(Message::Close(_)))));
    assert!(matches!(c.poll_message(), Ok(Some(Message::Close(_)))));
    assert_eq!((c.state(), s.state()), (State::Closed, State::Closed));
    // Nothing more was queued: no second close frame.
    assert!(c.transmit().is_empty() && s.transmit().is_empty());
}

#[test]
fn a_protocol_error_is_returned_at_once_with_its_close_queued() {
    let (mut c, mut s) = open();
    // An unmasked text frame with invalid UTF-8, from "the server" to the client.
    c.feed(&[0x81, 0x02, 0xC3, 0x28]);
    assert_eq!(
        c.poll_message(),
        Err(ConnectionError::Protocol(crate::ws::Error::InvalidUtf8))
    );
    assert_eq!(c.state(), State::Closing);
    pump(&mut c, &mut s);
    match s.poll_message() {
        Ok(Some(Message::Close(Some(f)))) => assert_eq!(f.code, CloseCode::INVALID_PAYLOAD),
        other => panic!("{other:?}"),
    }
    // The close frame goes out, then the write half is shut.
    assert!(c.wants_shutdown());
    c.handle_shutdown();
    // Whatever else arrives is dropped unparsed, the echo included...
    pump(&mut s, &mut c);
    assert_eq!(c.poll_message(), Ok(None));
    assert_eq!(c.state(), State::Closing);
    // ...until the peer's stream ends: an expected end, not a new error.
    assert_eq!(c.handle_eof(), Ok(()));
    assert_eq!(c.state(), State::Closed);
    assert_eq!(c.poll_message(), Err(ConnectionError::AlreadyClosed));
}

#[test]
fn after_a_failure_the_close_timeout_still_ends_the_connection() {
    let (mut c, _s) = open();
    c.feed(&[0x81, 0x02, 0xC3, 0x28]);
    assert!(matches!(
        c.poll_message(),
        Err(ConnectionError::Protocol(_))
    ));
    assert!(c.poll_timeout().is_some_and(|t| t <= T0));
    c.handle_timeout(at(1)).unwrap();
    assert_eq!(c.poll_timeout(), Some(at(6)));
    assert_eq!(c.handle_timeout(at(6)), Err(ConnectionError::CloseTimeout));
    assert_eq!(c.state(), State::Closed);
}

#[test]
fn the_end_of_the_stream_without_a_close_is_lost() {
    let (mut c, _s) = open();
    assert_eq!(c.handle_eof(), Err(ConnectionError::ConnectionLost));
    assert_eq!(c.state(), State::Closed);
    assert_eq!(c.poll_message(), Err(ConnectionError::AlreadyClosed));
}

#[test]
fn sends_are_refused_outside_the_open_state() {
    let mut s = server_with(&Settings::default());
    assert_eq!(
        s.send_text("early"),
        Err(ConnectionError::HandshakeInProgress)
    );
    let (mut c, _s) = open();
    let big = vec![0u8; 4096];
    assert!(matches!(
        c.send_binary(&big),
        Err(ConnectionError::MessageTooLarge { .. })
    ));
    assert_eq!(
        c.send_ping(&[0; 126]),
        Err(ConnectionError::Encode(EncodeError::ControlPayloadTooLarge))
    );
    assert_eq!(
        c.close(None, "reason without code"),
        Err(ConnectionError::Encode(EncodeError::ReasonWithoutCode))
    );
    assert_eq!(c.state(), State::Open);
}

/// `advance_data`, the drivers' fast half of `advance`, takes whole data frames on an
/// open connection only, and leaves everything else untouched for `advance`.
#[test]
fn advance_data_takes_only_whole_data_messages_of_an_open_connection() {
    let (mut c, mut s) = open();
    // Nothing buffered, then a ping: not for the fast half; `advance` answers the ping.
    assert_eq!(s.advance_data(), Ok(false));
    c.send_ping(b"p").unwrap();
    c.send_binary(&[9; 200]).unwrap();
    pump(&mut c, &mut s);
    assert_eq!(s.advance_data(), Ok(false));
    assert!(!s.wants_write());
    assert_eq!(s.advance(), Ok(true));
    assert_eq!(s.message(), Some(Message::Ping(b"p")));
    assert!(s.wants_write(), "the pong is queued by advance");
    // The binary message behind it (16-bit length) is the fast half's.
    assert_eq!(s.advance_data(), Ok(true));
    assert_eq!(s.message(), Some(Message::Binary(&[9; 200])));
    // Half a frame: not yet.
    c.send_text("split").unwrap();
    let wire = c.transmit().to_vec();
    c.handle_written(wire.len());
    s.feed(&wire[..4]);
    assert_eq!(s.advance_data(), Ok(false));
    s.feed(&wire[4..]);
    assert_eq!(s.advance_data(), Ok(true));
    assert_eq!(s.message(), Some(Message::Text("split")));
    // Invalid UTF-8: the protocol error, with its close frame (1007) queued.
    let mut bad = vec![0x81, 0x80 | 2, 1, 2, 3, 4];
    bad.extend([0xC3 ^ 1, 0x28 ^ 2]);
    s.feed(&bad);
    let e = s.advance_data().unwrap_err();
    assert!(matches!(
        e,
        ConnectionError::Protocol(crate::ws::Error::InvalidUtf8)
    ));
    assert_eq!(s.state(), State::Closing);
    assert!(s.wants_write());
    // Closing: data is `advance`'s to discard, never the fast half's.
    let (mut c, mut s) = open();
    s.close(CloseCode::NORMAL, "").unwrap();
    c.send_text("late").unwrap();
    pump(&mut c, &mut s);
    assert_eq!(s.advance_data(), Ok(false));
    assert_eq!(s.advance(), Ok(false));
}
