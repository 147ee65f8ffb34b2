//! Write then parse: what the writers produce, the readers give back
//! unchanged (method, path, query, headers, body, trailers), however the
//! bytes are cut into pieces, one at a time included.

use crate::http::percent::decode_into;
use crate::http::{Method, RequestReader, RequestWriter, ResponseReader, ResponseWriter};
use core::fmt::Write;
use proptest::prelude::*;
use std::string::String;
use std::vec::Vec;

const METHODS: [Method; 6] = [
    Method::Get,
    Method::Post,
    Method::Put,
    Method::Delete,
    Method::Patch,
    Method::Head,
];

fn header_strategy() -> impl Strategy<Value = (String, String)> {
    (
        "X-[A-Za-z0-9-]{1,10}",
        prop_oneof!["", "[!-~]", "[!-~][ -~]{0,30}[!-~]"],
    )
}

/// How a body is written.
#[derive(Debug, Clone, Copy)]
enum BodyMode {
    None,
    Slice,
    Writer,
    Fixed,
}

fn body_mode() -> impl Strategy<Value = BodyMode> {
    prop_oneof![
        Just(BodyMode::None),
        Just(BodyMode::Slice),
        Just(BodyMode::Writer),
        Just(BodyMode::Fixed)
    ]
}

fn pieces(data: &[u8], sizes: &[usize]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < data.len() {
        let n = sizes[i % sizes.len()].clamp(1, data.len() - at);
        out.push(data[at..at + n].to_vec());
        at += n;
        i += 1;
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
struct Seen {
    method: Option<Method>,
    path: String,
    query: Vec<(Vec<u8>, Vec<u8>)>,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

fn read_requests(wire: &[u8], sizes: &[usize]) -> Vec<Seen> {
    let mut r: RequestReader<Vec<u8>> = RequestReader::new(std::vec![0u8; 16 * 1024]);
    let mut out = Vec::new();
    for piece in pieces(wire, sizes) {
        assert_eq!(r.feed(&piece), piece.len());
        while let Some(req) = r.poll().unwrap() {
            let decode = |s: &str| {
                let mut buf = std::vec![0u8; s.len()];
                let n = decode_into(s.as_bytes(), &mut buf).unwrap();
                buf.truncate(n);
                buf
            };
            out.push(Seen {
                method: req.method(),
                path: req.path().into(),
                query: req
                    .query_pairs()
                    .map(|(k, v)| (decode(k), decode(v)))
                    .collect(),
                headers: req
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.into(), v.to_vec()))
                    .collect(),
                body: req.body().to_vec(),
            });
        }
    }
    out
}

proptest! {
    #![proptest_config(super::proptest_config(128))]

    #[test]
    #[cfg_attr(miri, ignore = "bytewise re-parsing is too slow for Miri; safe code only")]
    fn request_written_then_read(
        reqs in proptest::collection::vec((
            0..6usize,
            "(/[a-z0-9_.-]{0,8}){1,3}",
            proptest::collection::vec((".{0,6}", ".{0,10}"), 0..4),
            proptest::collection::vec(header_strategy(), 0..5),
            proptest::collection::vec(any::<u8>(), 0..400),
            body_mode(),
        ), 1..4),
        sizes in proptest::collection::vec(1..80usize, 1..8),
    ) {
        let mut w = RequestWriter::new(std::vec![0u8; 8192], "127.0.0.1:8080").unwrap();
        w.set_base_path("/api").unwrap();
        w.default_header("User-Agent", "tickwire-test").unwrap();
        let mut wire = Vec::new();
        let mut want = Vec::new();
        for (m, path, query, headers, body, mode) in &reqs {
            let method = METHODS[*m];
            let mut b = w.request(method, path);
            for (k, v) in query {
                b = b.query(k, v);
            }
            let mut b = b.header("X-First", "1");
            for (n, v) in headers {
                b = b.header(n, v);
            }
            let req = match mode {
                BodyMode::None => b.finish(),
                BodyMode::Slice => b.body(body).finish(),
                BodyMode::Fixed => b.body_fixed(body.len(), |dst| dst.copy_from_slice(body)).finish(),
                BodyMode::Writer => b
                    .body_writer(|bw| {
                        for part in body.chunks(7) {
                            bw.write_bytes(part).map_err(|_| core::fmt::Error)?;
                        }
                        Ok(())
                    })
                    .finish(),
            }
            .unwrap();
            prop_assert_eq!(req.method(), method);
            wire.extend_from_slice(req.as_bytes());
            let mut hs: Vec<(String, Vec<u8>)> = std::vec![
                ("Host".into(), b"127.0.0.1:8080".to_vec()),
                ("User-Agent".into(), b"tickwire-test".to_vec()),
                ("X-First".into(), b"1".to_vec()),
            ];
            hs.extend(headers.iter().map(|(n, v)| (n.clone(), v.as_bytes().to_vec())));
            let has_body = !matches!(mode, BodyMode::None);
            if has_body || method.expects_body() {
                hs.push(("Content-Length".into(), std::format!("{}", if has_body { body.len() } else { 0 }).into_bytes()));
            }
            want.push(Seen {
                method: Some(method),
                path: std::format!("/api{path}"),
                query: query.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect(),
                headers: hs,
                body: if has_body { body.clone() } else { Vec::new() },
            });
        }
        prop_assert_eq!(&read_requests(&wire, &[wire.len()]), &want);
        prop_assert_eq!(&read_requests(&wire, &sizes), &want);
        prop_assert_eq!(&read_requests(&wire, &[1]), &want);
    }
}

#[derive(Debug, Clone, PartialEq)]
struct SeenResponse {
    status: u16,
    reason: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
}

fn read_responses(wire: &[u8], sizes: &[usize], head: &[bool]) -> Vec<SeenResponse> {
    let mut r: ResponseReader<Vec<u8>> = ResponseReader::new(std::vec![0u8; 16 * 1024]);
    let mut out = Vec::new();
    let mut heads = head.iter();
    if heads.next() == Some(&true) {
        r.expect(Method::Head);
    }
    for piece in pieces(wire, sizes) {
        assert_eq!(r.feed(&piece), piece.len());
        while let Some(resp) = r.poll().unwrap() {
            out.push(SeenResponse {
                status: resp.status(),
                reason: resp.reason().into(),
                headers: resp
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.into(), v.to_vec()))
                    .collect(),
                body: resp.body().to_vec(),
                trailers: resp
                    .trailers()
                    .iter()
                    .map(|(n, v)| (n.into(), v.to_vec()))
                    .collect(),
            });
            if heads.next() == Some(&true) {
                r.expect(Method::Head);
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(super::proptest_config(128))]

    #[test]
    #[cfg_attr(miri, ignore = "bytewise re-parsing is too slow for Miri; safe code only")]
    fn response_written_then_read(
        resps in proptest::collection::vec((
            prop_oneof![Just(200u16), Just(201), Just(204), Just(304), Just(404), Just(101), 100..600u16],
            "[A-Za-z][A-Za-z ]{0,15}",
            proptest::collection::vec(header_strategy(), 0..5),
            proptest::collection::vec(any::<u8>(), 0..600),
            0..4usize,
            proptest::collection::vec(1..100usize, 1..5),
            any::<bool>(),
        ), 1..4),
        sizes in proptest::collection::vec(1..80usize, 1..8),
    ) {
        let mut wire = Vec::new();
        let mut want = Vec::new();
        let mut head = Vec::new();
        let mut ends = Vec::new();
        let mut out = std::vec![0u8; 8192];
        for (status, reason, headers, body, mode, chunk_sizes, is_head) in &resps {
            // Interim responses are skipped by the reader: write a final one.
            let status = if (100..200).contains(status) && *status != 101 { 200 } else { *status };
            let bodiless = status == 101 || status == 204 || status == 304 || *is_head;
            let mut w = ResponseWriter::new(&mut out, status, reason);
            for (n, v) in headers {
                w = w.header(n, v);
            }
            let mut hs: Vec<(String, Vec<u8>)> = headers.iter().map(|(n, v)| (n.clone(), v.as_bytes().to_vec())).collect();
            let mut trailers = Vec::new();
            let n = if bodiless {
                w.finish_head(None).unwrap()
            } else {
                match mode {
                    0 => w.body(body).finish().unwrap(),
                    1 => w.body_writer(|bw| {
                        for b in body {
                            write!(bw, "{}", *b as char)?;
                        }
                        Ok(())
                    }).finish().unwrap(),
                    2 => {
                        let mut c = w.chunked();
                        let mut at = 0;
                        for s in chunk_sizes.iter().cycle() {
                            if at >= body.len() { break; }
                            let e = (at + s).min(body.len());
                            c.chunk(&body[at..e]);
                            at = e;
                        }
                        trailers.push(("X-Trailer".into(), b"done".to_vec()));
                        c.finish_with_trailers(&[("X-Trailer", "done")]).unwrap()
                    }
                    _ => w.finish().unwrap(),
                }
            };
            wire.extend_from_slice(&out[..n]);
            ends.push(wire.len());
            let body = if bodiless || *mode == 3 {
                Vec::new()
            } else if *mode == 1 {
                body.iter().map(|&b| b as char).collect::<String>().into_bytes()
            } else {
                body.clone()
            };
            if !bodiless {
                if *mode == 2 {
                    hs.push(("Transfer-Encoding".into(), b"chunked".to_vec()));
                } else {
                    hs.push(("Content-Length".into(), std::format!("{}", body.len()).into_bytes()));
                }
            }
            head.push(*is_head);
            want.push(SeenResponse { status, reason: reason.clone(), headers: hs, body, trailers });
        }
        // A 101 hands the connection over: nothing after it is HTTP.
        if let Some(i) = want.iter().position(|r| r.status == 101) {
            want.truncate(i + 1);
            wire.truncate(ends[i]);
        }
        prop_assert_eq!(&read_responses(&wire, &[wire.len()], &head), &want);
        prop_assert_eq!(&read_responses(&wire, &sizes, &head), &want);
        prop_assert_eq!(&read_responses(&wire, &[1], &head), &want);
    }
}
