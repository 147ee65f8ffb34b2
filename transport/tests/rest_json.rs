//! REST JSON (feature `json`) over 127.0.0.1: what `.json(&value)` puts on the wire (the
//! header, the length, the bytes serde_json makes), the response read back with
//! `resp.json()`, a body larger than the request buffer (`RequestTooLarge`, the
//! connection kept) and a value serde_json refuses (`Build(BodyWriter)`).
#![cfg(feature = "json")]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;

use tickwire::rest::{BuildError, Client, Error};

/// A keep-alive server that answers each request with its own body, and `X-Type:` its
/// Content-Type; returns the URL.
fn echo_server() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8(buf[..end].to_vec()).unwrap();
                let field = |name: &str| {
                    head.lines().find_map(|l| {
                        let (n, v) = l.split_once(':')?;
                        n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
                    })
                };
                let len: usize = field("content-length").map_or(0, |v| v.parse().unwrap());
                if buf.len() < end + 4 + len {
                    break;
                }
                let body = buf[end + 4..end + 4 + len].to_vec();
                buf.drain(..end + 4 + len);
                let ty = field("content-type").unwrap_or_default();
                let mut resp = format!(
                    "HTTP/1.1 200 OK\r\nX-Type: {ty}\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                resp.extend_from_slice(&body);
                s.write_all(&resp).unwrap();
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    });
    url
}

#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
struct Order<'a> {
    symbol: &'a str,
    qty: f64,
    tags: Vec<String>,
}

#[test]
fn json_body_goes_out_as_serde_json_writes_it_and_comes_back() {
    let mut c = Client::builder()
        .request_buffer(512)
        .connect(&echo_server())
        .unwrap();
    let order = Order {
        symbol: "BTC\"USDT",
        qty: 0.01,
        tags: vec!["a".into(), "é".into()],
    };
    let resp = c
        .post("/order")
        .header("X-Key", "k")
        .json(&order)
        .send()
        .unwrap();
    assert_eq!(resp.header_str("x-type"), Some("application/json"));
    assert_eq!(resp.body(), serde_json::to_vec(&order).unwrap());
    // `symbol` has an escape: a borrowed `&str` cannot hold it, an owned value can.
    let back: serde_json::Value = resp.json().unwrap();
    assert_eq!(back["symbol"], "BTC\"USDT");
    assert_eq!(back["tags"][1], "é");

    // Without a header before it, and borrowing on the way back.
    let plain = Order {
        symbol: "ETHUSDT",
        qty: 2.5,
        tags: vec![],
    };
    let resp = c.put("/order").json(&plain).send().unwrap();
    let back: Order<'_> = resp.json().unwrap();
    assert_eq!(back, plain);
}

#[test]
fn a_body_too_large_or_unserializable_is_refused_and_the_connection_stays() {
    let mut c = Client::builder()
        .request_buffer(256)
        .connect(&echo_server())
        .unwrap();
    let big = vec!["x".repeat(64); 8];
    let e = c.post("/big").json(&big).send().unwrap_err();
    assert!(matches!(e, Error::RequestTooLarge { .. }), "{e:?}");
    assert!(e.is_refused());
    let mut bad = BTreeMap::new();
    bad.insert((1, 2), "a map with non-string keys");
    let e = c.post("/bad").json(&bad).send().unwrap_err();
    assert!(matches!(e, Error::Build(BuildError::BodyWriter)), "{e:?}");
    let resp = c.post("/ok").json(&[1, 2, 3]).send().unwrap();
    assert_eq!(resp.json::<Vec<u8>>().unwrap(), [1, 2, 3]);
    assert_eq!(c.stats().connects, 1);
}

#[cfg(all(feature = "tokio", unix))]
#[tokio::test(flavor = "current_thread")]
async fn tokio_json_round_trip() {
    let mut c = tickwire::tokio::rest::Client::connect(&echo_server())
        .await
        .unwrap();
    let resp = c.post("/order").json(&[1.5, 2.0]).send().await.unwrap();
    assert_eq!(resp.header_str("x-type"), Some("application/json"));
    assert_eq!(resp.json::<Vec<f64>>().unwrap(), [1.5, 2.0]);
}
