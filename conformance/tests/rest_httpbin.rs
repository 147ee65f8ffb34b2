//! tickwire's REST client against httpbin (PyPI, served by gunicorn's threaded worker,
//! started by the harness on 127.0.0.1): every method, query parameters and custom
//! headers as httpbin echoes them, status codes, chunked streams, binary and large
//! bodies, redirects reported and not followed, keep-alive reuse, timeouts, the pool.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tickwire::rest::{
    Client, ClientPool, Error, Method, PoolConfig, RequestWriter, ResponseReader, RestResponse,
};
use tickwire_conformance::{Httpbin, skip_or_fail};

type Reader = ResponseReader<Vec<u8>>;

struct Fixture {
    _h: Arc<Httpbin>,
    c: Client,
    w: RequestWriter<Vec<u8>>,
    r: Reader,
}

fn setup(test: &str) -> Option<Fixture> {
    let h = skip_or_fail(test, Httpbin::shared())?;
    let c = Client::builder()
        .read_timeout(Some(Duration::from_secs(30)))
        .build(&h.url(""))
        .unwrap();
    let w = RequestWriter::new(vec![0; 4 << 20], c.host_header()).unwrap();
    let r = ResponseReader::new(vec![0; 12 << 20]);
    Some(Fixture { _h: h, c, w, r })
}

fn json(resp: &RestResponse<'_>) -> Value {
    assert_eq!(resp.header_str("content-type"), Some("application/json"));
    serde_json::from_slice(resp.body()).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(resp.body()));
    })
}

/// Standard base64 (httpbin returns non-UTF-8 bodies as a base64 data URL).
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(char::from(A[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn get_with_query_parameters() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("get_with_query_parameters")
    else {
        return;
    };
    let req = w
        .get("/get")
        .query("symbol", "BTC USDT")
        .query("limit", "5")
        .query("odd", "a/b?c=d&e#f")
        .query("unicode", "€ü")
        .query_u64("ts", 1_700_000_000_123)
        .finish()
        .unwrap();
    let resp = c.send(&req, &mut r).unwrap();
    assert_eq!(resp.status(), 200);
    let v = json(&resp);
    let args = &v["args"];
    assert_eq!(args["symbol"], "BTC USDT");
    assert_eq!(args["limit"], "5");
    assert_eq!(args["odd"], "a/b?c=d&e#f");
    assert_eq!(args["unicode"], "€ü");
    assert_eq!(args["ts"], "1700000000123");
    assert_eq!(args.as_object().unwrap().len(), 5, "{args}");
}

#[test]
fn custom_headers_are_echoed() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("custom_headers_are_echoed")
    else {
        return;
    };
    w.default_header("X-Api-Key", "key-123").unwrap();
    let req = w
        .get("/headers")
        .header("X-Client-Order-Id", "42")
        .header("X-Empty", "")
        .header("User-Agent", "tickwire-conformance")
        .finish()
        .unwrap();
    let v = json(&c.send(&req, &mut r).unwrap());
    let h = &v["headers"];
    assert_eq!(h["X-Api-Key"], "key-123");
    assert_eq!(h["X-Client-Order-Id"], "42");
    assert_eq!(h["X-Empty"], "");
    assert_eq!(h["User-Agent"], "tickwire-conformance");
    assert_eq!(h["Host"], c.host_header());
}

#[test]
fn every_method_with_json_bodies() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("every_method_with_json_bodies")
    else {
        return;
    };
    let body = r#"{"symbol":"ETHUSDT","side":"SELL","qty":"1.5","price":"3000.25"}"#;
    for (method, path) in [
        (Method::Post, "/post"),
        (Method::Put, "/put"),
        (Method::Patch, "/patch"),
        (Method::Delete, "/delete"),
    ] {
        let req = w
            .request(method, path)
            .header("Content-Type", "application/json")
            .body(body.as_bytes())
            .finish()
            .unwrap();
        let resp = c.send(&req, &mut r).unwrap();
        assert_eq!(resp.status(), 200, "{method}");
        let v = json(&resp);
        assert_eq!(v["data"], body, "{method}");
        assert_eq!(v["json"]["price"], "3000.25", "{method}");
        assert_eq!(v["headers"]["Content-Length"], body.len().to_string());
    }
    // /anything reports the method it saw, including for bodiless requests.
    for method in [
        Method::Get,
        Method::Delete,
        Method::Post,
        Method::Put,
        Method::Patch,
    ] {
        let req = w.request(method, "/anything/m").finish().unwrap();
        let v = json(&c.send(&req, &mut r).unwrap());
        assert_eq!(v["method"], method.as_str());
        assert_eq!(v["data"], "");
    }
    // Methods and bodies written by the body writer and in place.
    let req = w
        .post("/post")
        .header("Content-Type", "application/json")
        .body_writer(|b| {
            use std::fmt::Write;
            let (id, px) = (7, 1.25);
            write!(b, r#"{{"id":{id},"px":"{px}"}}"#)
        })
        .finish()
        .unwrap();
    let v = json(&c.send(&req, &mut r).unwrap());
    assert_eq!(v["json"]["id"], 7);
    let req = w
        .put("/put")
        .body_fixed(5, |buf| buf.copy_from_slice(b"fixed"))
        .finish()
        .unwrap();
    let v = json(&c.send(&req, &mut r).unwrap());
    assert_eq!(v["data"], "fixed");
    assert_eq!(c.stats().connects, 1);
}

#[test]
fn head_has_no_body_and_keeps_the_connection() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("head_has_no_body")
    else {
        return;
    };
    for _ in 0..3 {
        let resp = c.send(&w.head("/get").finish().unwrap(), &mut r).unwrap();
        assert_eq!(resp.status(), 200);
        assert!(resp.header("content-length").is_some());
        assert!(resp.body().is_empty());
        let resp = c.send(&w.get("/get").finish().unwrap(), &mut r).unwrap();
        assert_eq!(
            json(&resp)["url"],
            format!("http://{}/get", c.host_header())
        );
    }
    assert_eq!(c.stats().connects, 1);
}

#[test]
fn status_codes() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("status_codes")
    else {
        return;
    };
    for code in [
        200u16, 201, 202, 204, 301, 304, 400, 401, 403, 404, 418, 429, 500, 502, 503,
    ] {
        let path = format!("/status/{code}");
        let resp = c.send(&w.get(&path).finish().unwrap(), &mut r).unwrap();
        assert_eq!(resp.status(), code);
        if code == 204 || code == 304 {
            assert!(resp.body().is_empty(), "{code}");
        }
        if code == 418 {
            assert!(resp.body_str().unwrap().contains("teapot"));
        }
    }
    // The same on POST, and a status with a body kept apart from the next response.
    let resp = c
        .send(&w.post("/status/500").body(b"x").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(c.stats().connects, 1);
}

#[test]
fn chunked_streams() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("chunked_streams")
    else {
        return;
    };
    for n in [1usize, 5, 50] {
        let resp = c
            .send(&w.get(&format!("/stream/{n}")).finish().unwrap(), &mut r)
            .unwrap();
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
    for (n, chunk) in [(1usize, 1usize), (1000, 7), (10_000, 1), (102_400, 4096)] {
        let path = format!("/stream-bytes/{n}");
        let req = w
            .get(&path)
            .query_u64("chunk_size", chunk as u64)
            .finish()
            .unwrap();
        let resp = c.send(&req, &mut r).unwrap();
        assert_eq!(resp.header_str("transfer-encoding"), Some("chunked"));
        assert_eq!(resp.body().len(), n, "{path} chunk {chunk}");
    }
    assert_eq!(c.stats().connects, 1);
}

#[test]
fn binary_bodies() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("binary_bodies")
    else {
        return;
    };
    for n in [0usize, 1, 1000, 65_536, 102_400] {
        let path = format!("/bytes/{n}");
        let resp = c
            .send(&w.get(&path).query("seed", "3").finish().unwrap(), &mut r)
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(
            resp.header_str("content-type"),
            Some("application/octet-stream")
        );
        assert_eq!(
            resp.header_str("content-length"),
            Some(n.to_string().as_str())
        );
        assert_eq!(resp.body().len(), n);
    }
    // Every byte value, echoed by /anything as a base64 data URL.
    let all: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let req = w
        .post("/anything")
        .header("Content-Type", "application/octet-stream")
        .body(&all)
        .finish()
        .unwrap();
    let v = json(&c.send(&req, &mut r).unwrap());
    assert_eq!(
        v["data"],
        format!("data:application/octet-stream;base64,{}", base64(&all))
    );
}

#[test]
fn large_bodies_both_ways() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("large_bodies_both_ways")
    else {
        return;
    };
    let big: String = (0..(3 << 20) / 16).map(|i| format!("{i:015}\n")).collect();
    let req = w
        .post("/anything")
        .header("Content-Type", "text/plain")
        .body(big.as_bytes())
        .finish()
        .unwrap();
    let resp = c.send(&req, &mut r).unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.body().len() > big.len());
    let v = json(&resp);
    assert_eq!(v["data"].as_str().unwrap().len(), big.len());
    assert!(v["data"] == big.as_str());
    // The connection carries on after 3 MiB each way.
    let resp = c.send(&w.get("/get").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(c.stats().connects, 1);
}

#[test]
fn redirects_are_reported_not_followed() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("redirects_are_reported")
    else {
        return;
    };
    for code in [301u16, 302, 303, 307, 308] {
        let req = w
            .get("/redirect-to")
            .query("url", "/get?from=redirect")
            .query_u64("status_code", u64::from(code))
            .finish()
            .unwrap();
        let resp = c.send(&req, &mut r).unwrap();
        assert_eq!(resp.status(), code);
        assert_eq!(resp.header_str("location"), Some("/get?from=redirect"));
    }
    let resp = c
        .send(&w.get("/redirect/3").finish().unwrap(), &mut r)
        .unwrap();
    assert_eq!(resp.status(), 302);
    assert_eq!(resp.header_str("Location"), Some("/relative-redirect/2"));
    assert_eq!(c.stats().requests, 6);
}

#[test]
fn keep_alive_reuse_over_one_tcp_connection() {
    let Some(Fixture {
        _h,
        mut c,
        mut w,
        mut r,
    }) = setup("keep_alive_reuse")
    else {
        return;
    };
    c.ensure_connected().unwrap();
    let local = c.local_addr().unwrap();
    const N: u64 = 100;
    for i in 0..N {
        let req = w.get("/anything/ka").query_u64("i", i).finish().unwrap();
        let resp = c.send(&req, &mut r).unwrap();
        assert!(resp.keep_alive());
        assert_eq!(json(&resp)["args"]["i"], i.to_string());
        assert_eq!(c.local_addr(), Some(local));
    }
    let s = c.stats();
    assert_eq!((s.connects, s.requests, s.retries), (1, N, 0));
}

#[test]
fn read_timeout_against_a_slow_endpoint() {
    let Some(h) = skip_or_fail("read_timeout_against_a_slow_endpoint", Httpbin::shared()) else {
        return;
    };
    let mut c = Client::builder()
        .read_timeout(Some(Duration::from_millis(300)))
        .build(&h.url(""))
        .unwrap();
    let mut w = RequestWriter::new(vec![0; 4096], c.host_header()).unwrap();
    let mut r: Reader = ResponseReader::new(vec![0; 64 << 10]);
    match c.send(&w.get("/delay/2").finish().unwrap(), &mut r) {
        Err(Error::ReadTimeout { .. }) => {}
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    assert!(!c.is_connected());
    // The next request uses a new connection.
    let resp = c.send(&w.get("/get").finish().unwrap(), &mut r).unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(c.stats().connects, 2);
}

#[test]
fn pool_against_httpbin() {
    let Some(h) = skip_or_fail("pool_against_httpbin", Httpbin::shared()) else {
        return;
    };
    let cfg = PoolConfig {
        size: 3,
        request_buffer: 8 << 10,
        response_buffer: 256 << 10,
        ..PoolConfig::default()
    };
    let pool = ClientPool::new(&h.url("/anything"), cfg).unwrap();
    std::thread::scope(|s| {
        for t in 0..6u64 {
            let pool = &pool;
            s.spawn(move || {
                for i in 0..15u64 {
                    let mut g = pool.acquire_within(Duration::from_secs(30)).unwrap();
                    let resp = g
                        .send_with(|w| w.get("/p").query_u64("t", t).query_u64("i", i).finish())
                        .unwrap();
                    let v: Value = serde_json::from_slice(resp.body()).unwrap();
                    assert_eq!(
                        v["url"].as_str().unwrap().split('?').next(),
                        Some(format!("http://{}/anything/p", g.host_header()).as_str())
                    );
                    assert_eq!(v["args"]["i"], i.to_string());
                    assert_eq!(v["args"]["t"], t.to_string());
                }
            });
        }
    });
    assert_eq!(pool.idle(), 3);
    let mut connects = 0;
    let mut guards = Vec::new();
    for _ in 0..3 {
        let g = pool.acquire().unwrap();
        connects += g.stats().connects;
        guards.push(g);
    }
    assert_eq!(
        connects, 3,
        "every request reused the pre-allocated connections"
    );
}

/// The client's own request builder against httpbin: the URL's base path on every
/// request, query pairs, headers and a JSON body as httpbin echoes them; a body that
/// httpbin drips out slowly is cut at the request timeout.
#[test]
fn request_builder_under_a_base_path() {
    let Some(h) = skip_or_fail("request_builder_under_a_base_path", Httpbin::shared()) else {
        return;
    };
    let mut c = Client::builder()
        .timeout(Duration::from_secs(30))
        .default_header("X-Default", "d")
        .build(&h.url("/anything/api/v3"))
        .unwrap();
    let resp = c
        .post("/order")
        .query("symbol", "BTC USDT")
        .header("X-Key", "k")
        .json_bytes(br#"{"side":"BUY","qty":"0.01"}"#)
        .send()
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v = json(&resp);
    assert_eq!(v["method"], "POST");
    assert_eq!(
        v["url"],
        format!("{}?symbol=BTC%20USDT", h.url("/anything/api/v3/order"))
    );
    assert_eq!(v["args"]["symbol"], "BTC USDT");
    assert_eq!(v["json"]["side"], "BUY");
    assert_eq!(v["headers"]["Content-Type"], "application/json");
    assert_eq!(v["headers"]["X-Key"], "k");
    assert_eq!(v["headers"]["X-Default"], "d");
    let want = h.url("/anything/api/v3/x");
    let v = json(&c.get("/x").send().unwrap());
    assert_eq!(
        (v["method"].as_str(), v["url"].as_str()),
        (Some("GET"), Some(want.as_str()))
    );
    let v = json(&c.delete("/x").send().unwrap());
    assert_eq!(
        (v["method"].as_str(), v["url"].as_str()),
        (Some("DELETE"), Some(want.as_str()))
    );
    assert_eq!(c.stats().connects, 1);

    // httpbin sends the head, then one body byte every 0.5 s: the read timeout never
    // passes, the request timeout does.
    let mut c = Client::builder().build(&h.url("")).unwrap();
    match c
        .get("/drip")
        .query("duration", "10")
        .query("numbytes", "20")
        .query("delay", "0")
        .timeout(Duration::from_millis(800))
        .send()
    {
        Err(Error::RequestTimeout { url, .. }) => {
            assert!(
                url.ends_with("/drip?duration=10&numbytes=20&delay=0"),
                "{url}"
            )
        }
        other => panic!("{:?}", other.map(|r| r.status())),
    }
    assert!(!c.is_connected());
}
