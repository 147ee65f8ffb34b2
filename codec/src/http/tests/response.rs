//! ResponseReader: framing, interim responses, keep-alive, pipelining.

use crate::http::{Error, Method, ResponseReader};
use std::vec::Vec;

fn reader() -> ResponseReader<Vec<u8>> {
    ResponseReader::new(std::vec![0u8; 4096])
}

#[test]
fn content_length_json() {
    let mut r = reader();
    r.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 11\r\n\r\n{\"ok\":true}");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.reason(), "OK");
    assert_eq!(resp.version(), 1);
    assert_eq!(resp.header("CONTENT-TYPE"), Some(&b"application/json"[..]));
    assert_eq!(resp.header_str("content-type"), Some("application/json"));
    assert_eq!(resp.header("x-missing"), None);
    assert_eq!(resp.body_str(), Ok("{\"ok\":true}"));
    assert!(resp.keep_alive());
    let names: Vec<&str> = resp.headers().iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["Content-Type", "content-length"]);
    assert!(r.poll().unwrap().is_none());
    assert!(r.unparsed().is_empty());
}

#[test]
fn chunked_with_trailers_then_pipelined_response() {
    let mut r = reader();
    r.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Checksum: abc\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.body(), b"Wikipedia");
    assert_eq!(resp.trailers().get("x-checksum"), Some(&b"abc"[..]));
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.status(), 204);
    assert_eq!(resp.body(), b"");
    assert!(
        resp.trailers().is_empty(),
        "the chunked response's trailers leaked"
    );
    assert!(r.poll().unwrap().is_none());
}

#[test]
fn trailers_belong_to_their_own_response() {
    // A chunked response with trailers, then a Content-Length one: the second
    // has no trailers (it once showed a stale span of the first one's).
    let mut r = reader();
    r.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Trailer: done\r\n\r\n");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.trailers().get("x-trailer"), Some(&b"done"[..]));
    // Long enough that the old trailer span lies inside this response's bytes.
    let mut second = b"HTTP/1.1 200 OK\r\nX-Pad: ".to_vec();
    second.extend_from_slice(&[b'p'; 200]);
    second.extend_from_slice(b"\r\nContent-Length: 3\r\n\r\n585");
    r.feed(&second);
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.body(), b"585");
    assert!(resp.trailers().is_empty());
    assert_eq!(resp.trailers().iter().count(), 0);
}

#[test]
fn trailers_do_not_carry_over_to_the_next_response() {
    let mut r = reader();
    r.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX-T: 1\r\n\r\n");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.trailers().get("x-t"), Some(&b"1"[..]));
    // The same offsets in this response hold a header line (`X-U`): a stale trailer
    // span would show it as a trailer.
    r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Pad: 000000000000\r\nX-U: 2\r\n\r\nabc");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.body(), b"abc");
    assert_eq!(resp.header_str("x-u"), Some("2"));
    assert_eq!(resp.trailers().iter().count(), 0);
}

#[test]
fn interim_responses_are_skipped_but_101_is_returned() {
    let mut r = reader();
    r.feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!((resp.status(), resp.body()), (200, &b"hi"[..]));
    r.feed(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x02hi");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.status(), 101);
    assert_eq!(resp.body(), b"");
    assert_eq!(r.unparsed(), b"\x81\x02hi");
}

#[test]
fn head_204_304_have_no_body() {
    let mut r = reader();
    r.expect(Method::Head);
    r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n");
    let resp = r.poll().unwrap().unwrap();
    assert_eq!((resp.status(), resp.body()), (200, &b""[..]));
    assert_eq!(resp.header("content-length"), Some(&b"1000"[..]));
    let resp = r.poll().unwrap().unwrap();
    assert_eq!((resp.status(), resp.body()), (304, &b""[..]));
}

#[test]
fn close_delimited_body_ends_at_eof() {
    let mut r = reader();
    r.feed(b"HTTP/1.1 200 OK\r\n\r\npart one ");
    assert!(r.poll().unwrap().is_none());
    r.feed(b"part two");
    assert!(r.poll().unwrap().is_none());
    r.signal_eof();
    let resp = r.poll().unwrap().unwrap();
    assert_eq!(resp.body(), b"part one part two");
    assert!(!resp.keep_alive());
    assert_eq!(r.poll().unwrap_err(), Error::Closed);
}

#[test]
fn keep_alive_rules() {
    let cases: [(&[u8], bool); 5] = [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
        (
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
        (
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            true,
        ),
        (
            b"HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 0\r\n\r\n",
            false,
        ),
    ];
    for (input, want) in cases {
        let mut r = reader();
        r.feed(input);
        assert_eq!(
            r.poll().unwrap().unwrap().keep_alive(),
            want,
            "{}",
            input.escape_ascii()
        );
    }
}

#[test]
fn advance_then_response_is_poll_in_two_halves() {
    let mut r = reader();
    r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
    assert!(r.response().is_none(), "nothing finished yet");
    assert_eq!(r.advance(), Ok(true));
    // Borrowable as often as needed until the reader moves on.
    assert_eq!(r.response().map(|x| x.body()), Some(&b"hi"[..]));
    assert_eq!(r.response().map(|x| x.status()), Some(200));
    r.feed(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    assert!(
        r.response().is_none(),
        "feeding released the first response"
    );
    assert_eq!(r.advance(), Ok(true));
    assert_eq!(r.response().map(|x| x.status()), Some(404));
    assert_eq!(r.advance(), Ok(false));
    assert!(r.response().is_none());
}
