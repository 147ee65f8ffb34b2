//! tickwire's async REST client and pool (`tickwire::tokio::rest`) against httpbin
//! (started by the harness on 127.0.0.1): several methods with JSON bodies, HEAD,
//! chunked /stream/N, keep-alive reuse counted over one TCP connection, a read timeout
//! then a clean request, the pool from concurrent tasks. On current_thread and
//! multi-thread runtimes.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tickwire::tokio::rest::{
    Client, ClientPool, Error, PoolConfig, RequestWriter, ResponseReader, RestResponse,
};
use tickwire_conformance::{Httpbin, skip_or_fail};

type Reader = ResponseReader<Vec<u8>>;

async fn setup(test: &str) -> Option<(Arc<Httpbin>, Client, RequestWriter<Vec<u8>>, Reader)> {
    let h = skip_or_fail(test, Httpbin::shared())?;
    let c = Client::builder()
        .read_timeout(Some(Duration::from_secs(30)))
        .connect(&h.url(""))
        .await
        .unwrap();
    let w = RequestWriter::new(vec![0; 64 << 10], c.host_header()).unwrap();
    let r = ResponseReader::new(vec![0; 1 << 20]);
    Some((h, c, w, r))
}

fn json(resp: &RestResponse<'_>) -> Value {
    assert_eq!(resp.header_str("content-type"), Some("application/json"));
    serde_json::from_slice(resp.body())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(resp.body())))
}

#[tokio::test(flavor = "current_thread")]
async fn methods_head_and_keep_alive_current_thread() {
    methods_head_and_keep_alive("methods_head_and_keep_alive_current_thread").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn methods_head_and_keep_alive_multi_thread() {
    tokio::spawn(methods_head_and_keep_alive(
        "methods_head_and_keep_alive_multi_thread",
    ))
    .await
    .unwrap();
}

async fn methods_head_and_keep_alive(test: &'static str) {
    let Some((_h, mut c, mut w, mut r)) = setup(test).await else {
        return;
    };
    let local = c.local_addr().unwrap();
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
    let resp = c
        .send(&w.get("/get").query("a", "1 2").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(json(&resp)["args"]["a"], "1 2");
    let resp = c
        .send(&w.head("/get").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.body().is_empty());
    assert!(resp.keep_alive());
    const N: u64 = 50;
    for i in 0..N {
        let req = w.get("/anything/ka").query_u64("i", i).finish().unwrap();
        let resp = c.send(&req, &mut r).await.unwrap();
        assert_eq!(json(&resp)["args"]["i"], i.to_string());
    }
    assert_eq!(c.local_addr(), Some(local));
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, 6 + N, 0));
}

#[tokio::test(flavor = "current_thread")]
async fn chunked_streams() {
    let Some((_h, mut c, mut w, mut r)) = setup("tokio_chunked_streams").await else {
        return;
    };
    for n in [1usize, 5, 50] {
        let req = w.get(&format!("/stream/{n}")).finish().unwrap();
        let resp = c.send(&req, &mut r).await.unwrap();
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
    let req = w
        .get("/stream-bytes/100000")
        .query_u64("chunk_size", 4096)
        .finish()
        .unwrap();
    assert_eq!(c.send(&req, &mut r).await.unwrap().body().len(), 100_000);
    assert_eq!(c.stats().connects, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn read_timeout_then_a_clean_request() {
    let Some(h) = skip_or_fail("tokio_read_timeout", Httpbin::shared()) else {
        return;
    };
    let mut c = Client::builder()
        .read_timeout(Some(Duration::from_millis(300)))
        .build(&h.url(""))
        .unwrap();
    let mut w = RequestWriter::new(vec![0; 4096], c.host_header()).unwrap();
    let mut r: Reader = ResponseReader::new(vec![0; 64 << 10]);
    match c.send(&w.get("/delay/2").finish().unwrap(), &mut r).await {
        Err(Error::ReadTimeout { .. }) => {}
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    assert!(!c.is_connected());
    let resp = c
        .send(&w.get("/get").finish().unwrap(), &mut r)
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(c.stats().connects, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_from_concurrent_tasks() {
    let Some(h) = skip_or_fail("tokio_pool_from_concurrent_tasks", Httpbin::shared()) else {
        return;
    };
    let cfg = PoolConfig {
        size: 3,
        request_buffer: 8 << 10,
        response_buffer: 256 << 10,
        acquire_timeout: Duration::from_secs(30),
        ..PoolConfig::default()
    };
    let pool = Arc::new(ClientPool::new(&h.url("/anything"), cfg).await.unwrap());
    let tasks: Vec<_> = (0..6u64)
        .map(|t| {
            let pool = pool.clone();
            tokio::spawn(async move {
                for i in 0..10u64 {
                    let mut g = pool.acquire().await.unwrap();
                    let resp = g
                        .send_with(|w| w.get("/p").query_u64("t", t).query_u64("i", i).finish())
                        .await
                        .unwrap();
                    let v: Value = serde_json::from_slice(resp.body()).unwrap();
                    assert_eq!(v["args"]["i"], i.to_string());
                    assert_eq!(v["args"]["t"], t.to_string());
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(pool.idle(), 3);
    let mut connects = 0;
    let mut guards = Vec::new();
    for _ in 0..3 {
        let g = pool.acquire().await.unwrap();
        connects += g.stats().connects;
        guards.push(g);
    }
    // Three connections for sixty requests (httpbin keeps them alive).
    assert_eq!(connects, 3);
    assert!(matches!(
        pool.try_acquire().await,
        Err(Error::PoolExhausted)
    ));
}
