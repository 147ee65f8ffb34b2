//! The client connection's rules, one test each, with instants only (no sockets, no
//! sleeps): reuse and framing (RFC 9112 §6, §9.3), pairing and the idle check (§6.3,
//! §9.3), retries (RFC 9110 §9.2.2), timeouts on the caller's `now`.

use core::time::Duration;

use super::*;
use crate::http::{RequestWriter, ResponseReader};

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

fn at(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

/// One client connection, its writer and reader, and the transport as the test plays it.
struct Rig {
    conn: ClientConnection,
    writer: RequestWriter<[u8; 1024]>,
    reader: ResponseReader<[u8; 2048]>,
    /// Every action the connection asked for, in order.
    log: heapless::Vec<Action, 64>,
}

impl Rig {
    fn new(settings: ClientSettings) -> Rig {
        Rig {
            conn: ClientConnection::new(settings),
            writer: RequestWriter::new([0; 1024], "example.com").unwrap(),
            reader: ResponseReader::new([0; 2048]),
            log: heapless::Vec::new(),
        }
    }

    fn default() -> Rig {
        Rig::new(ClientSettings::default())
    }

    /// Start `method /path` at `now` (timeout `timeout`) and drive it until it needs
    /// the server: connect and probe as `probe` says, write everything. Returns the
    /// first action that needs the server (Read), or the error.
    fn start(
        &mut self,
        method: Method,
        timeout: Option<Duration>,
        now: Instant,
        probe: bool,
    ) -> Result<Action, ClientError> {
        let req = self.writer.request(method, "/x").finish().unwrap();
        self.conn.start(&req, timeout, now);
        loop {
            let a = self.conn.poll(&mut self.reader)?;
            let _ = self.log.push(a);
            match a {
                Action::Connect => self.conn.handle_connected(now),
                Action::Probe => self.conn.handle_probe(probe),
                Action::Close => self.conn.handle_closed(),
                Action::Write => {
                    let n = self.conn.transmit(&req).len();
                    self.conn.handle_written(n);
                }
                Action::Read | Action::Done => return Ok(a),
            }
        }
    }

    /// Bytes arrive from the server.
    fn arrive(&mut self, bytes: &[u8]) {
        let spare = self.reader.spare_mut();
        spare[..bytes.len()].copy_from_slice(bytes);
        self.conn.handle_read(&mut self.reader, bytes.len());
    }

    /// Poll, closing when asked, until Done / Read / an error.
    fn settle(&mut self) -> Result<Action, ClientError> {
        loop {
            let a = self.conn.poll(&mut self.reader)?;
            let _ = self.log.push(a);
            match a {
                Action::Close => self.conn.handle_closed(),
                a => return Ok(a),
            }
        }
    }

    /// A whole GET answered with `response`; returns the status and whether the
    /// connection stayed open.
    fn exchange(&mut self, response: &[u8], now: Instant) -> (u16, bool) {
        assert_eq!(self.start(Method::Get, None, now, false), Ok(Action::Read));
        self.arrive(response);
        assert_eq!(self.settle(), Ok(Action::Done));
        (
            self.reader.response().unwrap().status(),
            self.conn.is_open(),
        )
    }

    fn connects(&self) -> u64 {
        self.conn.stats().connects
    }

    fn saw(&self, a: Action) -> usize {
        self.log.iter().filter(|&&x| x == a).count()
    }
}

// ---- reuse and framing: RFC 9112 §9.3, §6.1, §6.3 ----

#[test]
fn http11_without_close_is_reused() {
    let mut r = Rig::default();
    assert_eq!(r.exchange(OK, at(0)), (200, true));
    assert_eq!(r.exchange(OK, at(1)), (200, true));
    assert_eq!(r.connects(), 1);
    assert_eq!(r.conn.responses(), 2);
}

#[test]
fn connection_close_ends_the_connection_after_the_response() {
    let mut r = Rig::default();
    let resp = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na";
    assert_eq!(r.exchange(resp, at(0)), (200, false));
    assert_eq!(r.reader.response().unwrap().body(), b"a");
    assert_eq!(r.exchange(OK, at(1)), (200, true));
    assert_eq!(r.connects(), 2);
}

#[test]
fn http10_closes_unless_it_says_keep_alive() {
    let mut r = Rig::default();
    let plain = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(r.exchange(plain, at(0)), (200, false));
    let kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(r.exchange(kept, at(1)), (200, true));
    assert_eq!(r.exchange(OK, at(2)), (200, true));
    assert_eq!(r.connects(), 2);
}

#[test]
fn http10_with_transfer_encoding_closes_even_with_keep_alive() {
    let mut r = Rig::default();
    let resp = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n\
                 2\r\nok\r\n0\r\n\r\n";
    assert_eq!(r.exchange(resp, at(0)), (200, false));
    assert_eq!(r.reader.response().unwrap().body(), b"ok");
    assert!(!r.reader.response().unwrap().keep_alive());
    r.exchange(OK, at(1));
    assert_eq!(r.connects(), 2);
}

#[test]
fn close_delimited_body_ends_at_eof_and_the_connection_with_it() {
    let mut r = Rig::default();
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    r.arrive(b"HTTP/1.1 200 OK\r\n\r\nuntil the");
    assert_eq!(r.settle(), Ok(Action::Read));
    r.arrive(b" end");
    r.conn.handle_eof(&mut r.reader);
    assert_eq!(r.settle(), Ok(Action::Done));
    assert_eq!(r.reader.response().unwrap().body(), b"until the end");
    assert!(!r.conn.is_open());
}

#[test]
fn bodiless_responses_keep_the_connection() {
    let mut r = Rig::default();
    // HEAD: the Content-Length describes a body that is not sent (RFC 9112 §6.3 rule 1).
    assert_eq!(r.start(Method::Head, None, at(0), false), Ok(Action::Read));
    r.arrive(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n");
    assert_eq!(r.settle(), Ok(Action::Done));
    assert!(r.conn.is_open());
    for resp in [
        &b"HTTP/1.1 204 No Content\r\n\r\n"[..],
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ] {
        let (status, open) = r.exchange(resp, at(1));
        assert!(open && status >= 200, "{status}");
    }
    assert_eq!(r.connects(), 1);
}

#[test]
fn switching_protocols_is_not_reused_for_http() {
    let mut r = Rig::default();
    let resp = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n";
    assert_eq!(r.exchange(resp, at(0)), (101, false));
}

#[test]
fn eof_in_the_middle_of_a_body_is_an_error_never_retried() {
    let mut r = Rig::default();
    r.exchange(OK, at(0));
    assert_eq!(r.start(Method::Get, None, at(1), false), Ok(Action::Read));
    r.arrive(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    r.conn.handle_eof(&mut r.reader);
    assert_eq!(r.settle(), Err(ClientError::Http(Error::UnexpectedEof)));
    assert!(!r.conn.is_open());
    assert_eq!(r.conn.stats().retries, 0);
}

#[test]
fn a_malformed_response_fails_and_closes() {
    let mut r = Rig::default();
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    r.arrive(b"garbage\r\n\r\n");
    assert!(matches!(r.settle(), Err(ClientError::Http(_))));
    assert!(!r.conn.is_open());
    assert_eq!(r.saw(Action::Close), 1);
}

#[test]
fn a_response_larger_than_the_reader_is_body_too_large() {
    let mut r = Rig::default();
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    r.arrive(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
    while r.conn.poll(&mut r.reader) == Ok(Action::Read) {
        let n = r.reader.spare_mut().len();
        r.conn.handle_read(&mut r.reader, n);
    }
    assert_eq!(r.settle(), Err(ClientError::Http(Error::BodyTooLarge)));
    assert!(!r.conn.is_open());
}

// ---- pairing: nothing that arrived while idle is a response (RFC 9112 §6.3) ----

#[test]
fn bytes_that_arrive_while_idle_are_never_the_next_response() {
    // Without any probe and however short the idle time: the bytes were read.
    let mut r = Rig::new(ClientSettings {
        idle_probe: None,
        ..Default::default()
    });
    r.exchange(OK, at(0));
    r.arrive(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nunsolicited");
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    // The old connection was closed before anything was written; the reader was cleared.
    assert_eq!(r.conn.stats().stale_probed, 1);
    assert_eq!(r.connects(), 2);
    r.arrive(OK);
    assert_eq!(r.settle(), Ok(Action::Done));
    assert_eq!(r.reader.response().unwrap().body(), b"ok");
}

#[test]
fn bytes_left_after_a_response_mean_no_reuse() {
    let mut r = Rig::default();
    let mut two = heapless::Vec::<u8, 128>::new();
    two.extend_from_slice(OK).unwrap();
    two.extend_from_slice(b"HTTP/1.1 408 Request Timeout\r\n\r\n")
        .unwrap();
    assert_eq!(r.exchange(&two, at(0)), (200, true));
    r.exchange(OK, at(1));
    assert_eq!((r.connects(), r.conn.stats().stale_probed), (2, 1));
}

#[test]
fn end_of_stream_while_idle_means_a_new_connection_before_writing() {
    let mut r = Rig::new(ClientSettings {
        idle_probe: None,
        ..Default::default()
    });
    r.exchange(OK, at(0));
    r.conn.handle_eof(&mut r.reader); // the server's FIN, seen while idle
    r.log.clear();
    assert_eq!(r.start(Method::Post, None, at(1), false), Ok(Action::Read));
    assert_eq!(
        &r.log[..],
        [Action::Close, Action::Connect, Action::Write, Action::Read]
    );
    assert_eq!(r.conn.stats().requests, 2); // the POST was written once, on the new one
}

#[test]
fn the_probe_replaces_a_stale_connection_before_writing() {
    let mut r = Rig::default();
    r.exchange(OK, at(0));
    r.log.clear();
    assert_eq!(r.start(Method::Post, None, at(0), true), Ok(Action::Read));
    assert_eq!(
        &r.log[..],
        [
            Action::Probe,
            Action::Close,
            Action::Connect,
            Action::Write,
            Action::Read
        ]
    );
    assert_eq!(r.conn.stats().stale_probed, 1);
}

#[test]
fn the_probe_runs_only_after_the_idle_interval() {
    let mut r = Rig::new(ClientSettings {
        idle_probe: Some(Duration::from_secs(1)),
        ..Default::default()
    });
    r.exchange(OK, at(0));
    r.log.clear();
    r.start(Method::Get, None, at(999), true).unwrap();
    assert_eq!(r.saw(Action::Probe), 0);
    r.arrive(OK);
    r.settle().unwrap();
    // Idle since the `now` of the last exchange (999 ms): a probe at 1999 ms.
    r.log.clear();
    r.start(Method::Get, None, at(1998), false).unwrap();
    assert_eq!(r.saw(Action::Probe), 0);
    r.arrive(OK);
    r.settle().unwrap();
    r.log.clear();
    r.start(Method::Get, None, at(2998), false).unwrap();
    assert_eq!(r.saw(Action::Probe), 1);
    assert_eq!(r.connects(), 1);
}

#[test]
fn a_connection_opened_ahead_is_not_probed_and_its_reader_is_cleared() {
    let mut r = Rig::default();
    r.reader.feed(b"left over from an earlier connection");
    r.conn.handle_connected(at(0));
    r.log.clear();
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    assert_eq!(&r.log[..], [Action::Write, Action::Read]);
    r.arrive(OK);
    assert_eq!(r.settle(), Ok(Action::Done));
}

#[test]
fn a_connection_opened_after_an_exchange_was_cut_short_carries_the_next_request() {
    let mut r = Rig::default();
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    // The caller gave up and dropped that connection, then opened one ahead.
    r.conn.handle_connected(at(1));
    r.log.clear();
    assert_eq!(r.start(Method::Get, None, at(2), false), Ok(Action::Read));
    assert_eq!(&r.log[..], [Action::Write, Action::Read]);
    assert_eq!(r.connects(), 2);
}

#[test]
fn an_exchange_cut_short_is_not_continued() {
    let mut r = Rig::default();
    r.exchange(OK, at(0));
    assert_eq!(r.start(Method::Get, None, at(1), false), Ok(Action::Read));
    r.arrive(b"HTTP/1.1 200 OK\r\n"); // then the caller gave up (a dropped future)
    r.log.clear();
    assert_eq!(r.start(Method::Get, None, at(2), false), Ok(Action::Read));
    assert_eq!(r.log[0], Action::Close);
    r.arrive(OK);
    assert_eq!(r.settle(), Ok(Action::Done));
    assert_eq!(r.connects(), 2);
}

// ---- retries: RFC 9110 §9.2.2 ----

/// A request on a reused connection that the server dropped: returns the actions and
/// the outcome after `fail` (EOF before any byte, or an I/O failure).
fn dropped_on_reuse(
    method: Method,
    written_all: bool,
    eof: bool,
) -> (Rig, Result<Action, ClientError>) {
    let mut r = Rig::new(ClientSettings {
        idle_probe: None,
        ..Default::default()
    });
    r.exchange(OK, at(0));
    let req = r.writer.request(method, "/x").body(b"1").finish().unwrap();
    r.conn.start(&req, None, at(1));
    assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Write));
    if written_all {
        let n = r.conn.transmit(&req).len();
        r.conn.handle_written(n);
        assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Read));
    }
    if eof {
        r.conn.handle_eof(&mut r.reader);
    } else {
        r.conn.handle_failure(true);
    }
    r.log.clear();
    let out = r.settle();
    (r, out)
}

#[test]
fn idempotent_requests_are_retried_once_on_a_new_connection() {
    for m in [Method::Get, Method::Head, Method::Put, Method::Delete] {
        let (r, out) = dropped_on_reuse(m, true, true);
        assert_eq!(out, Ok(Action::Connect), "{m}");
        assert_eq!(&r.log[..], [Action::Close, Action::Connect]);
        assert_eq!(r.conn.stats().retries, 1);
    }
}

#[test]
fn non_idempotent_requests_are_not_retried_once_written() {
    for m in [Method::Post, Method::Patch] {
        let (r, out) = dropped_on_reuse(m, true, true);
        assert_eq!(out, Err(ClientError::ConnectionLost), "{m}");
        assert!(!r.conn.is_open());
        assert_eq!(r.conn.stats().retries, 0);
    }
}

#[test]
fn a_post_not_a_byte_of_which_was_written_is_retried() {
    let (r, out) = dropped_on_reuse(Method::Post, false, false);
    assert_eq!(out, Ok(Action::Connect));
    assert_eq!(r.conn.stats().retries, 1);
}

#[test]
fn never_retried_after_a_response_byte() {
    let mut r = Rig::new(ClientSettings {
        idle_probe: None,
        ..Default::default()
    });
    r.exchange(OK, at(0));
    assert_eq!(r.start(Method::Get, None, at(1), false), Ok(Action::Read));
    r.arrive(b"H");
    r.conn.handle_failure(true);
    assert_eq!(r.settle(), Err(ClientError::Io));
    assert_eq!(r.conn.stats().retries, 0);
}

#[test]
fn never_retried_on_a_fresh_connection_nor_twice() {
    let mut r = Rig::default();
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    r.conn.handle_eof(&mut r.reader);
    assert_eq!(r.settle(), Err(ClientError::ConnectionLost));
    // Reused, dropped, retried; the retry (fresh) dropped too: the error.
    let (mut r, out) = dropped_on_reuse(Method::Get, true, true);
    assert_eq!(out, Ok(Action::Connect));
    r.conn.handle_connected(at(1));
    assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Write));
    r.conn.handle_failure(true);
    assert_eq!(r.settle(), Err(ClientError::Io));
    assert_eq!(r.conn.stats().retries, 1);
}

#[test]
fn an_error_that_is_not_a_drop_is_never_retried() {
    let (r, out) = {
        let mut r = Rig::new(ClientSettings {
            idle_probe: None,
            ..Default::default()
        });
        r.exchange(OK, at(0));
        assert_eq!(r.start(Method::Get, None, at(1), false), Ok(Action::Read));
        r.conn.handle_failure(false);
        let out = r.settle();
        (r, out)
    };
    assert_eq!(out, Err(ClientError::Io));
    assert_eq!(r.conn.stats().retries, 0);
}

// ---- time: deadlines and timeouts as instants ----

#[test]
fn read_timeout_runs_from_the_last_progress() {
    let mut r = Rig::new(ClientSettings {
        read_timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    });
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    // Progress restarted the timer: it starts at the next `now`.
    assert_eq!(r.conn.poll_timeout(), Some(at(0)));
    r.conn.handle_timeout(at(10));
    assert_eq!(r.conn.poll_timeout(), Some(at(110)));
    r.arrive(b"HTTP/1.1 200 OK\r\n");
    r.conn.handle_timeout(at(100));
    assert_eq!(r.conn.poll_timeout(), Some(at(200)));
    r.conn.handle_timeout(at(199));
    assert_eq!(r.settle(), Ok(Action::Read));
    r.conn.handle_timeout(at(200));
    assert_eq!(r.settle(), Err(ClientError::ReadTimeout));
    assert!(!r.conn.is_open());
}

#[test]
fn a_wait_the_transport_bounds_starts_the_timer_without_a_clock_read() {
    let mut r = Rig::new(ClientSettings {
        read_timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    });
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    // The timer progress armed starts at the `now` passed: the transport's own bound.
    assert!(r.conn.handle_bounded_wait(at(5)));
    assert_eq!(r.conn.poll_timeout(), Some(at(105)));
    // Running: nothing to start, the wait is as `poll_timeout` says.
    assert!(!r.conn.handle_bounded_wait(at(50)));
    assert_eq!(r.conn.poll_timeout(), Some(at(105)));
    // Progress restarts it from the next wait's `now`.
    r.arrive(b"HTTP/1.1 200 OK\r\n");
    assert!(r.conn.handle_bounded_wait(at(60)));
    assert_eq!(r.conn.poll_timeout(), Some(at(160)));
    // The transport's bound ended the wait: the clock read after it finds it passed.
    r.conn.handle_timeout(at(160));
    assert_eq!(r.settle(), Err(ClientError::ReadTimeout));
}

#[test]
fn a_request_deadline_is_never_left_to_the_transports_bound() {
    let mut r = Rig::new(ClientSettings {
        idle_probe: None,
        ..Default::default()
    });
    let t = Some(Duration::from_millis(100));
    assert_eq!(r.start(Method::Get, t, at(0), false), Ok(Action::Read));
    assert!(!r.conn.handle_bounded_wait(at(0)));
    // Unchanged: the timer still waits for the next `now` (a clock read).
    assert_eq!(r.conn.poll_timeout(), Some(at(0)));
    r.conn.handle_timeout(at(10));
    assert_eq!(r.conn.poll_timeout(), Some(at(100)));
    // No timeouts at all: nothing to start.
    let mut r = Rig::new(ClientSettings {
        read_timeout: None,
        write_timeout: None,
        idle_probe: None,
    });
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    assert!(!r.conn.handle_bounded_wait(at(0)));
    assert_eq!(r.conn.poll_timeout(), None);
}

#[test]
fn a_request_needs_the_time_at_its_start_only_for_a_deadline_or_an_idle_interval() {
    let probe = |idle_probe| {
        ClientConnection::new(ClientSettings {
            idle_probe,
            ..Default::default()
        })
    };
    let t = Some(Duration::from_millis(100));
    for c in [probe(None), probe(Some(Duration::ZERO))] {
        assert!(!c.start_needs_time(None));
        assert!(c.start_needs_time(t));
    }
    assert!(probe(Some(Duration::from_secs(1))).start_needs_time(None));
    // A request started at the latest `now` (no clock read) still times out: the
    // transport's bound ends the wait and the clock read after it finds the timer passed.
    let mut r = Rig::new(ClientSettings {
        read_timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    });
    r.exchange(OK, at(0));
    let now = r.conn.now();
    assert_eq!(r.start(Method::Get, None, now, false), Ok(Action::Read));
    assert!(r.conn.handle_bounded_wait(now));
    r.conn.handle_timeout(at(5000));
    assert_eq!(r.settle(), Err(ClientError::ReadTimeout));
}

#[test]
fn write_timeout_runs_from_the_start_and_each_progress() {
    let mut r = Rig::new(ClientSettings {
        write_timeout: Some(Duration::from_millis(50)),
        ..Default::default()
    });
    let req = r.writer.get("/x").finish().unwrap();
    r.conn.start(&req, None, at(0));
    assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Connect));
    r.conn.handle_connected(at(5));
    assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Write));
    assert_eq!(r.conn.poll_timeout(), Some(at(55)));
    r.conn.handle_written(3);
    r.conn.handle_timeout(at(60));
    assert_eq!(r.conn.poll_timeout(), Some(at(110)));
    assert_eq!(r.conn.transmit(&req), &req.as_bytes()[3..]);
    r.conn.handle_timeout(at(110));
    assert_eq!(r.settle(), Err(ClientError::WriteTimeout));
}

#[test]
fn the_request_deadline_bounds_every_wait_and_the_retry() {
    let mut r = Rig::new(ClientSettings {
        idle_probe: None,
        ..Default::default()
    });
    r.exchange(OK, at(0));
    let t = Some(Duration::from_millis(100));
    assert_eq!(r.start(Method::Get, t, at(1000), false), Ok(Action::Read));
    r.conn.handle_timeout(at(1000));
    assert_eq!(r.conn.poll_timeout(), Some(at(1100))); // before the 30 s read timeout
    r.arrive(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\na");
    r.conn.handle_timeout(at(1100));
    assert_eq!(r.settle(), Err(ClientError::RequestTimeout));
    // A retry is never made once the deadline passed.
    r.exchange(OK, at(2000));
    assert_eq!(r.start(Method::Get, t, at(3000), false), Ok(Action::Read));
    r.conn.handle_timeout(at(3100));
    r.conn.handle_eof(&mut r.reader);
    assert_eq!(r.settle(), Err(ClientError::RequestTimeout));
}

#[test]
fn a_deadline_passed_during_the_connect_fails_before_writing() {
    let mut r = Rig::default();
    let req = r.writer.get("/x").finish().unwrap();
    r.conn.start(&req, Some(Duration::from_millis(10)), at(0));
    assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Connect));
    assert_eq!(r.conn.poll_timeout(), Some(at(10)));
    r.conn.handle_connected(at(10));
    assert_eq!(r.settle(), Err(ClientError::RequestTimeout));
    assert_eq!(r.conn.stats().requests, 0);
}

#[test]
fn no_timer_without_timeouts_and_none_when_idle() {
    let mut r = Rig::new(ClientSettings {
        read_timeout: None,
        write_timeout: None,
        idle_probe: None,
    });
    assert_eq!(r.start(Method::Get, None, at(0), false), Ok(Action::Read));
    assert_eq!(r.conn.poll_timeout(), None);
    r.arrive(OK);
    assert_eq!(r.settle(), Ok(Action::Done));
    assert_eq!(r.conn.poll_timeout(), None);
    assert_eq!(r.conn.poll(&mut r.reader), Ok(Action::Done));
}

#[test]
fn poll_without_a_request_says_so() {
    let mut r = Rig::default();
    assert_eq!(r.conn.poll(&mut r.reader), Err(ClientError::NoRequest));
}
