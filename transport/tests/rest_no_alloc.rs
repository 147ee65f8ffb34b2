//! Zero heap allocations per REST request on the client's own request builder
//! (`client.post(path)...send()`), blocking and tokio: 10,000 order-entry round trips
//! over loopback, counted by a per-thread counting allocator on the client's thread
//! (the server thread's allocations are not the client's), after the first request.
//! Over https:// too (TLS 1.3 records mode, feature `tls`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

#[path = "../../codec/tests/common/mod.rs"]
mod common;
use common::allocs;
#[cfg(feature = "tls")]
mod https_util;
#[cfg(feature = "tls")]
mod tls_util;

const ORDER: &[u8] =
    br#"{"symbol":"BTCUSDT","side":"BUY","type":"LIMIT","quantity":"0.01","price":"64250.1"}"#;
const ACK: &[u8] = br#"{"orderId":28457,"status":"NEW"}"#;
const ROUNDS: u64 = 10_000;

/// A keep-alive server for one connection answering every request with a 200 JSON
/// acknowledgement; returns the URL and the request count on close.
fn server() -> (String, thread::JoinHandle<u64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v3", l.local_addr().unwrap());
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            ACK.len()
        );
        let mut resp = resp.into_bytes();
        resp.extend_from_slice(ACK);
        let mut buf = vec![0u8; 64 << 10];
        let (mut have, mut n) = (0usize, 0u64);
        loop {
            // Every complete request (head and Content-Length body) gets its answer.
            while let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") {
                let head = std::str::from_utf8(&buf[..end])
                    .unwrap()
                    .to_ascii_lowercase();
                assert!(
                    head.starts_with("post /api/v3/order?symbol=btcusdt "),
                    "{head}"
                );
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                if have < end + 4 + len {
                    break;
                }
                buf.copy_within(end + 4 + len..have, 0);
                have -= end + 4 + len;
                s.write_all(&resp).unwrap();
                n += 1;
            }
            match s.read(&mut buf[have..]) {
                Ok(0) | Err(_) => return n,
                Ok(k) => have += k,
            }
        }
    });
    (url, h)
}

#[test]
fn blocking_request_builder_does_not_allocate() {
    let (url, h) = server();
    let mut c = tickwire::rest::Client::builder()
        .timeout(Duration::from_secs(30))
        .request_buffer(4096)
        .response_buffer(16 << 10)
        .connect(&url)
        .unwrap();
    let mut seen = 0usize;
    let mut before = 0;
    for i in 0..ROUNDS {
        if i == 1 {
            before = allocs();
        }
        let resp = c
            .post("/order")
            .query("symbol", "BTCUSDT")
            .header("X-MBX-APIKEY", "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zv")
            .header("Accept", "application/json")
            .json_bytes(ORDER)
            .send()
            .unwrap();
        assert_eq!(resp.status(), 200);
        seen += resp.body().len();
    }
    let after = allocs();
    assert_eq!(seen, ROUNDS as usize * ACK.len());
    assert_eq!(c.stats().connects, 1);
    assert_eq!(after - before, 0, "allocations after the first request");
    drop(c);
    assert_eq!(h.join().unwrap(), ROUNDS);
}

/// The same over https:// (TLS 1.3 records mode): the request is sealed in place in the
/// client's output buffer and the response opened in place, so nothing is allocated per
/// round trip either (before in-place sealing: one allocation per request record).
#[cfg(feature = "tls")]
#[test]
fn blocking_https_request_builder_does_not_allocate() {
    let ca = tls_util::Ca::new("test CA");
    let (port, seen, h) = https_util::serve(ca.server(&["localhost"]).server_config(), 1);
    let mut c = tickwire::rest::Client::builder()
        .tls(ca.client_config())
        .timeout(Duration::from_secs(30))
        .request_buffer(4096)
        .response_buffer(16 << 10)
        .connect(&format!("https://localhost:{port}/api/v3"))
        .unwrap();
    let echo = format!("POST /api/v3/order {}", std::str::from_utf8(ORDER).unwrap());
    let mut before = 0;
    for i in 0..ROUNDS {
        if i == 1 {
            before = allocs();
        }
        let resp = c
            .post("/order")
            .query("symbol", "BTCUSDT")
            .header("X-MBX-APIKEY", "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zv")
            .json_bytes(ORDER)
            .send()
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.body(), echo.as_bytes());
    }
    let after = allocs();
    assert_eq!(c.stats().connects, 1);
    assert_eq!(
        after - before,
        0,
        "allocations after the first https request"
    );
    drop(c);
    h.join().unwrap();
    assert_eq!(seen.per_connection(), [ROUNDS as usize]);
}

#[cfg(feature = "tokio")]
#[test]
fn tokio_request_builder_does_not_allocate() {
    let (url, h) = server();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (seen, allocated) = rt.block_on(async {
        let mut c = tickwire::tokio::rest::Client::builder()
            .timeout(Duration::from_secs(30))
            .request_buffer(4096)
            .response_buffer(16 << 10)
            .connect(&url)
            .await
            .unwrap();
        let mut seen = 0usize;
        let mut before = 0;
        for i in 0..ROUNDS {
            if i == 1 {
                before = allocs();
            }
            let resp = c
                .post("/order")
                .query("symbol", "BTCUSDT")
                .header("X-MBX-APIKEY", "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zv")
                .header("Accept", "application/json")
                .json_bytes(ORDER)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
            seen += resp.body().len();
        }
        let allocated = allocs() - before;
        assert_eq!(c.stats().connects, 1);
        (seen, allocated)
    });
    assert_eq!(seen, ROUNDS as usize * ACK.len());
    assert_eq!(allocated, 0, "allocations after the first request");
    drop(rt);
    assert_eq!(h.join().unwrap(), ROUNDS);
}

/// The order of [`ORDER`], serialized by serde (feature `json`).
#[cfg(feature = "json")]
#[derive(serde::Serialize)]
struct Order<'a> {
    symbol: &'a str,
    side: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    quantity: &'a str,
    price: &'a str,
}

#[cfg(feature = "json")]
const ORDER_VALUE: Order<'static> = Order {
    symbol: "BTCUSDT",
    side: "BUY",
    kind: "LIMIT",
    quantity: "0.01",
    price: "64250.1",
};

/// [`ACK`], deserialized borrowing from the response (feature `json`).
#[cfg(feature = "json")]
#[derive(serde::Deserialize, Debug, PartialEq)]
struct Ack<'a> {
    #[serde(rename = "orderId")]
    order_id: u64,
    status: &'a str,
}

/// `.json(&order)` serializes into the request buffer and `resp.json::<Ack>()` reads
/// from the response buffer: still no allocation per request.
#[cfg(feature = "json")]
#[test]
fn blocking_json_request_and_response_do_not_allocate() {
    assert_eq!(serde_json::to_vec(&ORDER_VALUE).unwrap(), ORDER);
    let (url, h) = server();
    let mut c = tickwire::rest::Client::builder()
        .timeout(Duration::from_secs(30))
        .request_buffer(4096)
        .response_buffer(16 << 10)
        .connect(&url)
        .unwrap();
    let mut before = 0;
    for i in 0..ROUNDS {
        if i == 1 {
            before = allocs();
        }
        let resp = c
            .post("/order")
            .query("symbol", "BTCUSDT")
            .header("X-MBX-APIKEY", "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zv")
            .json(&ORDER_VALUE)
            .send()
            .unwrap();
        let ack: Ack<'_> = resp.json().unwrap();
        assert_eq!(
            ack,
            Ack {
                order_id: 28457,
                status: "NEW"
            }
        );
    }
    let after = allocs();
    assert_eq!(after - before, 0, "allocations after the first request");
    drop(c);
    assert_eq!(h.join().unwrap(), ROUNDS);
}

#[cfg(all(feature = "json", feature = "tokio"))]
#[test]
fn tokio_json_request_and_response_do_not_allocate() {
    let (url, h) = server();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let allocated = rt.block_on(async {
        let mut c = tickwire::tokio::rest::Client::builder()
            .timeout(Duration::from_secs(30))
            .request_buffer(4096)
            .response_buffer(16 << 10)
            .connect(&url)
            .await
            .unwrap();
        let mut before = 0;
        for i in 0..ROUNDS {
            if i == 1 {
                before = allocs();
            }
            let resp = c
                .post("/order")
                .query("symbol", "BTCUSDT")
                .json(&ORDER_VALUE)
                .send()
                .await
                .unwrap();
            let ack: Ack<'_> = resp.json().unwrap();
            assert_eq!(ack.order_id, 28457);
        }
        allocs() - before
    });
    assert_eq!(allocated, 0, "allocations after the first request");
    drop(rt);
    assert_eq!(h.join().unwrap(), ROUNDS);
}
