//! Suite "rest": HTTP/1.1 for order entry (issue 4).
//!
//! - [`memory`]: in memory, a POST with 4 headers and a ~100 B JSON body is
//!   built and written, and a 200 OK JSON response parsed: tickwire's
//!   RequestWriter + ResponseReader, a hand-rolled httparse equivalent, and
//!   reqwest building the same request alone (no I/O, no parse).
//! - [`build`]: that request built and nothing else, like for like with
//!   reqwest's build, and a hand-rolled `write!`.
//! - [`client_memory`]: `rest::Client` itself over an in-memory stream, its
//!   explicit path (`RequestWriter` + `Client::send`) against its own request
//!   builder (`client.post(path)...send()`).
//! - [`roundtrip`]: loopback round trip of that POST on one keep-alive
//!   connection to a server thread on the other core: tickwire's
//!   `rest::Client` vs reqwest (async, current_thread runtime) vs a raw TCP
//!   ping-pong of the same byte counts (the floor).
//!
//! nexus-net 0.4.2 ([`nexus`]) is a peer in all three.
//!
//! The request, the response and the server are written here by hand
//! (httparse for the server's parsing), not with the codec under test.

mod build;
mod client_memory;
mod memory;
mod nexus;
mod roundtrip;

use super::{Case, Setup};

/// Request path.
pub const PATH: &str = "/api/v3/order";
/// The four request headers besides Host and Content-Length.
pub const HEADERS: [(&str, &str); 4] = [
    ("Content-Type", "application/json"),
    (
        "X-MBX-APIKEY",
        "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A",
    ),
    ("Accept", "application/json"),
    ("User-Agent", "tickwire-bench/1.0"),
];
/// The JSON body: 104 bytes, as the scenario names say.
pub const BODY: &str = r#"{"symbol":"BTCUSDT","side":"BUY","type":"LIMIT","timeInForce":"GTC","quantity":"0.01","price":"64250.1"}"#;
/// The JSON body of the 200 OK response (an order acknowledgement).
pub const RESPONSE_BODY: &str = r#"{"symbol":"BTCUSDT","orderId":28457,"orderListId":-1,"clientOrderId":"6gCrw2kRUAF9CvJDGP16IP","transactTime":1507725176595,"price":"64250.10","origQty":"0.0100","executedQty":"0.0000","status":"NEW","timeInForce":"GTC","type":"LIMIT","side":"BUY"}"#;

/// The 200 OK response, as an exchange sends it.
pub fn response() -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=UTF-8\r\n\
         Content-Length: {}\r\nConnection: keep-alive\r\n\
         Date: Mon, 23 Nov 2026 11:45:00 GMT\r\nServer: nginx\r\n\
         x-mbx-uuid: 1f4c1c2e-6d2b-4f0e-9b8a-3c1e2f4a5b6c\r\nx-mbx-used-weight-1m: 1\r\n\r\n{}",
        RESPONSE_BODY.len(),
        RESPONSE_BODY
    )
    .into_bytes()
}

/// Register the suite's rows.
pub fn register(setup: &Setup, v: &mut Vec<Case<'static>>) {
    memory::cases(v);
    build::cases(v);
    client_memory::cases(v);
    let first = v.len();
    roundtrip::cases(super::loopback::peer_core(setup), v);
    // Their cost is syscalls and another thread: not for `--instructions`.
    for c in &mut v[first..] {
        c.counts = false;
    }
}

/// Check a request's wire bytes with httparse: method, path, the four headers
/// and the body. Returns the head length.
pub fn check_request(wire: &[u8], host: &str) {
    let mut h = [httparse::EMPTY_HEADER; 16];
    let mut req = httparse::Request::new(&mut h);
    let head = match req.parse(wire) {
        Ok(httparse::Status::Complete(n)) => n,
        other => super::unexpected(&other),
    };
    assert_eq!(req.method, Some("POST"));
    assert_eq!(req.path, Some(PATH));
    let get = |name: &str| {
        req.headers
            .iter()
            .find(|x| x.name.eq_ignore_ascii_case(name))
            .map(|x| std::str::from_utf8(x.value).expect("ascii header"))
    };
    for (k, val) in HEADERS {
        assert_eq!(get(k), Some(val), "{k}");
    }
    assert_eq!(get("host"), Some(host));
    assert_eq!(get("content-length"), Some(BODY.len().to_string().as_str()));
    assert_eq!(&wire[head..], BODY.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::RunConfig;
    use std::time::Duration;

    /// The scenario names say how big the body is.
    #[test]
    fn body_size_is_the_named_one() {
        assert_eq!(BODY.len(), 104);
        for name in [
            memory::SCENARIO,
            build::SCENARIO,
            client_memory::SCENARIO,
            roundtrip::SCENARIO,
        ] {
            assert!(name.contains("104B"), "{name}");
        }
    }

    /// Every row of the suite verifies its output and measures briefly.
    #[test]
    fn every_case_verifies_and_measures() {
        let mut v = Vec::new();
        register(
            &Setup {
                batch: 8,
                core: 0,
                peer_core: None,
            },
            &mut v,
        );
        assert!(v.len() >= 8);
        let cfg = RunConfig {
            batch: 8,
            warmup: Duration::ZERO,
            measure: Duration::from_millis(5),
            max_samples: 64,
            count_rounds: 0,
        };
        for case in &v {
            let m = case.run(&cfg);
            assert!(m.samples() > 0, "{case:?}");
        }
    }
}
