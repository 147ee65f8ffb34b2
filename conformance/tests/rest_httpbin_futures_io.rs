//! tickwire's futures-io REST client (`tickwire::futures_io::rest`) against httpbin
//! (started by the harness on 127.0.0.1), on smol and on nexus-async-rt: several
//! methods with JSON bodies, HEAD, chunked /stream/N, keep-alive reuse counted over one
//! TCP connection, a read timeout on the executor's timer then a clean request.
#![cfg(unix)]

#[path = "../../transport/tests/nexus_util/mod.rs"]
mod nexus_util;

use std::time::Duration;

use nexus_util::{NexusConnector, NexusTimer};
use serde_json::Value;
use tickwire::futures_io::Timer;
use tickwire::futures_io::rest::{Client, ClientBuilder, Connect, Error};
use tickwire::rest::{RequestWriter, ResponseReader, RestResponse};
use tickwire_conformance::{Httpbin, skip_or_fail};

type Reader = ResponseReader<Vec<u8>>;

fn json(resp: &RestResponse<'_>) -> Value {
    assert_eq!(resp.header_str("content-type"), Some("application/json"));
    serde_json::from_slice(resp.body())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(resp.body())))
}

async fn methods_head_chunked_and_keep_alive<C: Connect + Clone, Tm: Timer>(mut c: Client<C, Tm>) {
    let mut w = RequestWriter::new(vec![0; 64 << 10], c.host_header()).unwrap();
    let mut r: Reader = ResponseReader::new(vec![0; 1 << 20]);
    let body = br#"{"symbol":"BTCUSDT","qty":"0.01"}"#;
    for (method, path) in [
        ("POST", "/post"),
        ("PUT", "/put"),
        ("PATCH", "/patch"),
        ("DELETE", "/delete"),
    ] {
        let b = match method {
            "POST" => w.post(path),
            "PUT" => w.put(path),
            "PATCH" => w.patch(path),
            _ => w.delete(path),
        };
        let req = b
            .header("Content-Type", "application/json")
            .body(body)
            .finish()
            .unwrap();
        let resp = c.send(&req, &mut r).await.unwrap();
        assert_eq!(resp.status(), 200, "{method}");
        let v = json(&resp);
        assert_eq!(v["json"]["symbol"], "BTCUSDT", "{method}");
        assert_eq!(v["url"], format!("http://{}{path}", c.host_header()));
    }
    let resp = c.get("/get").query("a", "1 2").send().await.unwrap();
    assert_eq!(json(&resp)["args"]["a"], "1 2");
    let resp = c.head("/get").send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.body().is_empty());
    assert!(resp.keep_alive());
    for n in [1usize, 5, 50] {
        let resp = c.get(&format!("/stream/{n}")).send().await.unwrap();
        assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
        let lines: Vec<Value> = resp
            .body_str()
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), n);
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l["id"], i);
        }
    }
    let resp = c
        .get("/stream-bytes/100000")
        .query_u64("chunk_size", 4096)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.body().len(), 100_000);
    const N: u64 = 50;
    for i in 0..N {
        let resp = c
            .get("/anything/ka")
            .query_u64("i", i)
            .send()
            .await
            .unwrap();
        assert_eq!(json(&resp)["args"]["i"], i.to_string());
    }
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, 4 + 2 + 4 + N, 0));
    c.close().await;
}

async fn read_timeout_then_a_clean_request<C: Connect + Clone, Tm: Timer>(
    builder: ClientBuilder<C, Tm>,
    url: String,
) {
    let mut c = builder
        .read_timeout(Some(Duration::from_millis(300)))
        .build(&url)
        .unwrap();
    match c.get("/delay/2").send().await {
        Err(Error::ReadTimeout { .. }) => {}
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    assert!(!c.is_connected());
    assert_eq!(c.get("/get").send().await.unwrap().status(), 200);
    assert_eq!(c.stats().connects, 2);
    c.close().await;
}

#[test]
fn smol_methods_head_chunked_and_keep_alive() {
    let Some(h) = skip_or_fail("futures_io_smol_methods", Httpbin::shared()) else {
        return;
    };
    smol::block_on(async {
        let c = Client::builder()
            .read_timeout(Some(Duration::from_secs(30)))
            .connect(&h.url(""))
            .await
            .unwrap();
        methods_head_chunked_and_keep_alive(c).await;
    });
}

#[test]
fn smol_read_timeout_then_a_clean_request() {
    let Some(h) = skip_or_fail("futures_io_smol_read_timeout", Httpbin::shared()) else {
        return;
    };
    smol::block_on(read_timeout_then_a_clean_request(
        ClientBuilder::new(),
        h.url(""),
    ));
}

#[test]
fn nexus_methods_head_chunked_and_keep_alive() {
    let Some(h) = skip_or_fail("futures_io_nexus_methods", Httpbin::shared()) else {
        return;
    };
    let url = h.url("");
    nexus_util::block_on(async move {
        // No read or write timeout: nexus-async-rt's timer wheel keeps an entry until
        // its deadline, and the runtime insists that no waker outlives it.
        let c = ClientBuilder::new()
            .connector(NexusConnector)
            .timer::<NexusTimer>()
            .read_timeout(None)
            .write_timeout(None)
            .connect(&url)
            .await
            .unwrap();
        methods_head_chunked_and_keep_alive(c).await;
    });
}

#[test]
fn nexus_read_timeout_then_a_clean_request() {
    let Some(h) = skip_or_fail("futures_io_nexus_read_timeout", Httpbin::shared()) else {
        return;
    };
    let url = h.url("");
    nexus_util::block_on(async move {
        let b = ClientBuilder::new()
            .connector(NexusConnector)
            .timer::<NexusTimer>()
            .write_timeout(None);
        read_timeout_then_a_clean_request(b, url).await;
        // Past the last read timeout armed (see above).
        nexus_util::sleep(Duration::from_millis(500)).await;
    });
}
